//! Lookup tables built with the Rust `lookup` builders and run on DirectSession: a static
//! table from tensors and from a text file (columns, whole line, line number with offset),
//! `tables_initializer`, a mutable table updated across steps, a dense table, and
//! TensorFlow's error codes.

use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_graph::lookup::{tables_initializer, HashTable, MutableHashTable, TextFileIndex, TextFileInit};
use ferroflow_graph::{ops, Scope};
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;

fn strs(v: &[&str]) -> Tensor {
    Tensor::vec(v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>())
}

fn as_strs(t: &Tensor) -> Vec<String> {
    t.as_slice::<Vec<u8>>().unwrap().iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect()
}

#[test]
fn static_tables_from_tensors_and_files() {
    let dir = std::env::temp_dir().join(format!("ff_lookup_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vocab = dir.join("vocab.tsv");
    std::fs::write(&vocab, "apple\t10\nbanana\t20\ncherry\t30\n").unwrap();
    let vocab_name = vocab.to_string_lossy().into_owned();

    let s = Scope::new_root();
    let t = HashTable::new(&s, DataType::String, DataType::Int64, "words");
    let i1 =
        t.init_from_tensors(&s, ops::constant(&s, strs(&["a", "b"])), ops::constant(&s, Tensor::vec(vec![1i64, 2])));
    let cols = HashTable::new(&s, DataType::String, DataType::Int64, "cols");
    let file = ops::constant(&s, Tensor::scalar(vocab_name.as_bytes().to_vec()));
    let i2 = cols.init_from_text_file(&s, file.clone(), &TextFileInit::default());
    let lines = HashTable::new(&s, DataType::Int64, DataType::String, "lines");
    let o = TextFileInit {
        key_index: TextFileIndex::LINE_NUMBER,
        value_index: TextFileIndex::WHOLE_LINE,
        offset: 5,
        ..Default::default()
    };
    let i3 = lines.init_from_text_file(&s, file, &o);
    let init = tables_initializer(&s, &[i1, i2, i3]);
    let f1 = t.find(&s, ops::constant(&s, strs(&["b", "z", "a"])), ops::constant(&s, -1i64));
    let f2 = cols.find(&s, ops::constant(&s, strs(&["cherry", "fig"])), ops::constant(&s, 0i64));
    let f3 =
        lines.find(&s, ops::constant(&s, Tensor::vec(vec![6i64, 0])), ops::constant(&s, Tensor::scalar(b"?".to_vec())));
    let size = cols.size(&s);
    let (ek, ev) = t.export(&s);
    s.status().unwrap();
    let sess = DirectSession::new(s.graph());
    let e = sess.run(&[], &[&f1], &[]).unwrap_err();
    assert_eq!(e.code, Code::FailedPrecondition, "{e}");
    assert!(e.message.contains("Table not initialized."), "{e}");
    sess.run(&[], &[], &[&init]).unwrap();
    let got = sess.run(&[], &[&f1, &f2, &f3, &size, &ek, &ev], &[]).unwrap();
    assert_eq!(got[0].as_slice::<i64>().unwrap(), &[2, -1, 1]);
    assert_eq!(got[1].as_slice::<i64>().unwrap(), &[30, 0]);
    assert_eq!(as_strs(&got[2]), vec!["banana\t20", "?"]);
    assert_eq!(got[3].scalar_value::<i64>().unwrap(), 3);
    assert_eq!(as_strs(&got[4]), vec!["a", "b"]);
    assert_eq!(got[5].as_slice::<i64>().unwrap(), &[1, 2]);
    // Initializing again with as many entries is a no-op, as in TensorFlow.
    sess.run(&[], &[], &[&init]).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mutable_and_dense_tables() {
    let s = Scope::new_root();
    let m = MutableHashTable::new(&s, DataType::Int64, DataType::Float, Some(&[2]), "vec");
    let ins = m.insert(
        &s,
        ops::constant(&s, Tensor::vec(vec![1i64, 2])),
        ops::constant(&s, Tensor::new(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap()),
    );
    let rm = m.remove(&s, ops::constant(&s, Tensor::vec(vec![1i64, 9])));
    let find =
        m.find(&s, ops::constant(&s, Tensor::vec(vec![1i64, 2])), ops::constant(&s, Tensor::vec(vec![0.0f32, -1.0])));
    let size = m.size(&s);
    let d = MutableHashTable::dense(&s, ops::constant(&s, 0i64), ops::constant(&s, -1i64), DataType::Int64, "dense");
    let dins = d.insert(&s, ops::constant(&s, Tensor::vec(vec![5i64])), ops::constant(&s, Tensor::vec(vec![50i64])));
    let dfind = d.find(&s, ops::constant(&s, Tensor::vec(vec![5i64, 6])), ops::constant(&s, -1i64));
    let bad = d.insert(&s, ops::constant(&s, Tensor::vec(vec![0i64])), ops::constant(&s, Tensor::vec(vec![1i64])));
    let wrong = m.find(&s, ops::constant(&s, Tensor::vec(vec![1i32])), ops::constant(&s, 0.0f32));
    s.status().unwrap();
    let sess = DirectSession::new(s.graph());
    sess.run(&[], &[], &[&ins, &dins]).unwrap();
    let before = sess.run(&[], &[&find, &size], &[]).unwrap();
    assert_eq!(before[0].as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(before[1].scalar_value::<i64>().unwrap(), 2);
    sess.run(&[], &[], &[&rm]).unwrap();
    let after = sess.run(&[], &[&find, &size, &dfind], &[]).unwrap();
    assert_eq!(after[0].as_slice::<f32>().unwrap(), &[0.0, -1.0, 3.0, 4.0]);
    assert_eq!(after[1].scalar_value::<i64>().unwrap(), 1);
    assert_eq!(after[2].as_slice::<i64>().unwrap(), &[50, -1]);
    let e = sess.run(&[], &[], &[&bad]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("Using the empty_key as a table key is not allowed"), "{e}");
    let e = sess.run(&[], &[&wrong], &[]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("Signature mismatch"), "{e}");
}
