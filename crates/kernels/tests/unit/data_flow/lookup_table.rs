//! The lookup table kernels driven directly: each kind of table, both handle forms, text
//! file initializers and TensorFlow's errors and messages.

use std::sync::Arc;

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel_values, temp_dir};
use ferroflow_kernels::{ResourceMgr, Value};

fn strs(v: &[&str]) -> Tensor {
    Tensor::vec(v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>())
}

struct Env {
    rm: Arc<ResourceMgr>,
}

impl Env {
    fn new() -> Env {
        Env { rm: Arc::new(ResourceMgr::new()) }
    }
    fn run(
        &self,
        op: &str,
        attrs: &[(&str, AttrValue)],
        inputs: Vec<Value>,
        outs: usize,
    ) -> Result<Vec<Value>, Status> {
        run_kernel_values(node(op, attrs), inputs, outs, self.rm.clone())
    }
    fn table(&self, op: &str, k: DataType, v: DataType, extra: &[(&str, AttrValue)]) -> Value {
        let mut a = vec![
            ("container", attr::string("")),
            ("shared_name", attr::string(op)),
            ("use_node_name_sharing", attr::bool(false)),
            ("key_dtype", attr::ty(k)),
            ("value_dtype", attr::ty(v)),
        ];
        a.extend(extra.iter().cloned());
        self.run(op, &a, vec![], 1).unwrap().remove(0)
    }
    fn find(&self, h: &Value, keys: Tensor, default: Tensor) -> Result<Tensor, Status> {
        let a = [("Tin", attr::ty(keys.dtype())), ("Tout", attr::ty(default.dtype()))];
        let out = self.run("LookupTableFindV2", &a, vec![h.clone(), Value::Tensor(keys), Value::Tensor(default)], 1)?;
        out[0].tensor()
    }
    fn kv(&self, op: &str, h: &Value, keys: Tensor, values: Tensor) -> Result<(), Status> {
        let a = [
            ("Tin", attr::ty(keys.dtype())),
            ("Tout", attr::ty(values.dtype())),
            ("Tkey", attr::ty(keys.dtype())),
            ("Tval", attr::ty(values.dtype())),
        ];
        self.run(op, &a, vec![h.clone(), Value::Tensor(keys), Value::Tensor(values)], 0).map(|_| ())
    }
}

#[test]
fn static_table_in_both_handle_forms() {
    let env = Env::new();
    for op in ["HashTableV2", "HashTable"] {
        let h = env.table(op, DataType::String, DataType::Int64, &[]);
        assert_eq!(matches!(h, Value::Ref(_)), op == "HashTable");
        let e = env.find(&h, strs(&["a"]), Tensor::scalar(-1i64)).unwrap_err();
        assert_eq!((e.code, e.message.contains("Table not initialized.")), (Code::FailedPrecondition, true), "{e}");
        env.kv("InitializeTableV2", &h, strs(&["a", "b"]), Tensor::vec(vec![1i64, 2])).unwrap();
        let got = env.find(&h, strs(&["b", "x"]), Tensor::scalar(-1i64)).unwrap();
        assert_eq!(got.as_slice::<i64>().unwrap(), &[2, -1]);
        let e = env.kv("InitializeTableV2", &h, strs(&["c"]), Tensor::vec(vec![3i64])).unwrap_err();
        assert_eq!(e.code, Code::FailedPrecondition, "{e}");
        let e = env.kv("LookupTableInsertV2", &h, strs(&["c"]), Tensor::vec(vec![3i64])).unwrap_err();
        assert_eq!(e.code, Code::Unimplemented, "{e}");
        let e = env.find(&h, Tensor::vec(vec![1i64]), Tensor::scalar(-1i64)).unwrap_err();
        assert!(
            e.message.contains(
                "Signature mismatch, have: resource, int64, int64->int64 expected: resource, string, int64->int64"
            ),
            "{e}"
        );
    }
    let h = env.table("HashTableV2", DataType::Int64, DataType::Float, &[("shared_name", attr::string("dup"))]);
    let e = env.kv("InitializeTableV2", &h, Tensor::vec(vec![1i64, 1]), Tensor::vec(vec![1.0f32, 2.0])).unwrap_err();
    assert!(
        e.message.contains("HashTable has different value for same key. Key 1 has 1 and trying to add value 2"),
        "{e}"
    );
    let e = env.kv("InitializeTableV2", &h, Tensor::vec(vec![1i64, 2]), Tensor::vec(vec![1.0f32])).unwrap_err();
    assert!(e.message.contains("Keys and values must have the same size 2 vs 1"), "{e}");
    let bad = env.run(
        "HashTableV2",
        &[("key_dtype", attr::ty(DataType::Float)), ("value_dtype", attr::ty(DataType::Int64))],
        vec![],
        1,
    );
    assert_eq!(bad.map(|_| ()).unwrap_err().code, Code::InvalidArgument);
}

#[test]
fn mutable_tables_of_tensors_and_dense_tables() {
    let env = Env::new();
    let h = env.table(
        "MutableHashTableOfTensorsV2",
        DataType::Int64,
        DataType::Float,
        &[("value_shape", attr::shape(Some(&[2])))],
    );
    env.kv("LookupTableInsertV2", &h, Tensor::vec(vec![3i64]), Tensor::new(vec![1, 2], vec![1.0f32, 2.0]).unwrap())
        .unwrap();
    let per_key = Tensor::new(vec![2, 2], vec![9.0f32, 9.0, 8.0, 8.0]).unwrap();
    let got = env.find(&h, Tensor::vec(vec![3i64, 4]), per_key).unwrap();
    assert_eq!(got.as_slice::<f32>().unwrap(), &[1.0, 2.0, 8.0, 8.0]);
    let e = env.find(&h, Tensor::vec(vec![3i64, 4]), Tensor::scalar(0f32)).unwrap_err();
    assert!(e.message.contains("Expected shape [2] or [2,2] for default value, got []"), "{e}");
    let e = env.kv("LookupTableInsertV2", &h, Tensor::vec(vec![3i64]), Tensor::vec(vec![1.0f32])).unwrap_err();
    assert!(e.message.contains("Expected shape [1,2] for value, got [1]"), "{e}");
    let ex = env
        .run(
            "LookupTableExportV2",
            &[("Tkeys", attr::ty(DataType::Int64)), ("Tvalues", attr::ty(DataType::Float))],
            vec![h],
            2,
        )
        .unwrap();
    assert_eq!(ex[1].tensor().unwrap().dims(), &[1, 2]);

    let dense_attrs = |buckets: i64| {
        vec![
            ("container", attr::string("")),
            ("shared_name", attr::string(format!("d{buckets}"))),
            ("use_node_name_sharing", attr::bool(false)),
            ("key_dtype", attr::ty(DataType::Int64)),
            ("value_dtype", attr::ty(DataType::Int64)),
            ("value_shape", attr::shape(Some(&[]))),
            ("initial_num_buckets", attr::int(buckets)),
            ("max_load_factor", attr::float(0.8)),
        ]
    };
    let keys = |e: i64, d: i64| vec![Value::Tensor(Tensor::scalar(e)), Value::Tensor(Tensor::scalar(d))];
    let e = env.run("MutableDenseHashTableV2", &dense_attrs(7), keys(0, -1), 1).map(|_| ()).unwrap_err();
    assert!(e.message.contains("Number of buckets must be at least 4 and a power of 2, got: 7"), "{e}");
    let e = env.run("MutableDenseHashTableV2", &dense_attrs(8), keys(0, 0), 1).map(|_| ()).unwrap_err();
    assert!(e.message.contains("Empty and deleted keys cannot be equal"), "{e}");
    let d = env.run("MutableDenseHashTableV2", &dense_attrs(16), keys(0, -1), 1).unwrap().remove(0);
    env.kv("LookupTableInsertV2", &d, Tensor::vec(vec![5i64, 6]), Tensor::vec(vec![50i64, 60])).unwrap();
    let a = [("Tin", attr::ty(DataType::Int64))];
    env.run("LookupTableRemoveV2", &a, vec![d.clone(), Value::Tensor(Tensor::vec(vec![5i64]))], 0).unwrap();
    let got = env.find(&d, Tensor::vec(vec![5i64, 6]), Tensor::scalar(-1i64)).unwrap();
    assert_eq!(got.as_slice::<i64>().unwrap(), &[-1, 60]);
    let e = env.find(&d, Tensor::vec(vec![-1i64]), Tensor::scalar(-1i64)).unwrap_err();
    assert!(e.message.contains("Using the deleted_key as a table key is not allowed"), "{e}");
    let size = env.run("LookupTableSizeV2", &[], vec![d], 1).unwrap()[0].tensor().unwrap();
    assert_eq!(size.scalar_value::<i64>().unwrap(), 1);
}

#[test]
fn text_file_initializers() {
    let dir = temp_dir("lookup");
    let f = dir.join("v.tsv");
    std::fs::write(&f, "a\t10\nb\t20\nc\t30\n").unwrap();
    let empty = dir.join("e.tsv");
    std::fs::write(&empty, "a\t1\n\nb\t2\n").unwrap();
    let env = Env::new();
    let init = |h: &Value, file: &std::path::Path, k: i64, v: i64, vocab: i64| {
        let a = [
            ("key_index", attr::int(k)),
            ("value_index", attr::int(v)),
            ("vocab_size", attr::int(vocab)),
            ("delimiter", attr::string("\t")),
            ("offset", attr::int(0)),
        ];
        let name = Tensor::scalar(file.to_string_lossy().as_bytes().to_vec());
        env.run("InitializeTableFromTextFileV2", &a, vec![h.clone(), Value::Tensor(name)], 0).map(|_| ())
    };
    let cols = env.table("HashTableV2", DataType::String, DataType::Int64, &[("shared_name", attr::string("cols"))]);
    init(&cols, &f, 0, 1, -1).unwrap();
    assert_eq!(env.find(&cols, strs(&["c", "z"]), Tensor::scalar(0i64)).unwrap().as_slice::<i64>().unwrap(), &[30, 0]);
    let lines = env.table("HashTableV2", DataType::String, DataType::Int64, &[("shared_name", attr::string("lines"))]);
    init(&lines, &f, -2, -1, 2).unwrap();
    let got = env.find(&lines, strs(&["b\t20", "c\t30"]), Tensor::scalar(-1i64)).unwrap();
    assert_eq!(got.as_slice::<i64>().unwrap(), &[1, -1]);
    let t = |n: &str| env.table("HashTableV2", DataType::String, DataType::Int64, &[("shared_name", attr::string(n))]);
    let e = init(&t("e1"), &f, 0, 1, 9).unwrap_err();
    assert!(e.message.contains("expected 9 but got 3"), "{e}");
    let e = init(&t("e2"), &empty, 0, 1, -1).unwrap_err();
    assert!(e.message.contains("empty line found at position 5."), "{e}");
    let e = init(&t("e3"), &f, 1, 0, -1).unwrap_err();
    assert!(e.message.contains("Field in line 0 (1 bytes) is not a valid int64"), "{e}");
    let e = init(&t("e4"), &f, -1, 1, -1).unwrap_err();
    assert!(e.message.contains("Key index for line number requires table key dtype of int64, got string"), "{e}");
    let e = init(&t("e5"), &f, 0, 4, -1).unwrap_err();
    assert!(e.message.contains("expected at least 5 got 2"), "{e}");
    let e = init(&t("e6"), &dir.join("missing"), 0, 1, -1).unwrap_err();
    assert_eq!(e.code, Code::NotFound, "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
