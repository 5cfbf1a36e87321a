//! A checkpoint written by TensorFlow 2.21's tf.compat.v1 Saver (fixture made by
//! scripts/fixtures/tf_checkpoint.py) restores into a ferroflow Saver, with resource and
//! with reference variables, and the values equal TensorFlow's.

use ferroflow_runtime::StepRunner;
use std::path::{Path, PathBuf};

use ferroflow_core::{DataType, Shape, Tensor};
use ferroflow_graph::{global_variables_initializer, ops, Scope, Variable, VariableOptions};
use ferroflow_kernels::io::BundleReader;
use ferroflow_kernels::testutil::temp_dir;
use ferroflow_runtime::DirectSession;
use ferroflow_train::saver::{latest_checkpoint, Saver, SaverOptions};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tf_ckpt")
}

/// TensorFlow's values: `name<TAB>values` (strings joined by `|`).
fn expected() -> Vec<(String, String)> {
    std::fs::read_to_string(fixture().join("expected.txt"))
        .unwrap()
        .lines()
        .map(|l| {
            let (n, v) = l.split_once('\t').unwrap();
            (n.to_string(), v.to_string())
        })
        .collect()
}

fn matches(t: &Tensor, want: &str) -> bool {
    let nums = || want.split(' ').map(|x| x.parse::<f64>().unwrap());
    match t.dtype() {
        DataType::Float => t.as_slice::<f32>().unwrap().iter().copied().eq(nums().map(|x| x as f32)),
        DataType::Double => t.as_slice::<f64>().unwrap().iter().copied().eq(nums()),
        DataType::Int64 => t.as_slice::<i64>().unwrap().iter().map(|&x| x as f64).eq(nums()),
        DataType::String => {
            let got: Vec<String> =
                t.as_slice::<Vec<u8>>().unwrap().iter().map(|s| String::from_utf8(s.clone()).unwrap()).collect();
            got.join("|") == want
        }
        d => panic!("unexpected dtype {d}"),
    }
}

fn restore(resource: bool) {
    // Work on a copy: the test never touches the fixture.
    let dir = temp_dir(if resource { "tfckpt-res" } else { "tfckpt-ref" });
    for e in std::fs::read_dir(fixture()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    let prefix = latest_checkpoint(&dir).unwrap().unwrap();
    assert!(prefix.ends_with("model.ckpt-3"), "{prefix}");
    let reader = BundleReader::open(&prefix).unwrap();
    let want = expected();
    assert_eq!(reader.names(), want.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>());

    let s = Scope::new_root();
    let opts = VariableOptions { use_resource: resource, ..Default::default() };
    let vars: Vec<Variable> = want
        .iter()
        .map(|(n, _)| {
            let e = reader.entry(n).unwrap();
            let zeros = ops::constant(&s, Tensor::zeros(e.dtype, e.shape).unwrap());
            Variable::with_options(&s, n, zeros, &opts)
        })
        .collect();
    let init = global_variables_initializer(&s);
    let saver = Saver::with_options(&s, SaverOptions { var_list: Some(vars.clone()), ..Default::default() }).unwrap();
    let sess = DirectSession::new(s.graph());
    sess.run(&[], &[], &[&init]).unwrap();
    saver.restore(&sess, &prefix).unwrap();
    let outs: Vec<_> = vars.iter().map(Variable::read).collect();
    let got = sess.run(&[], &outs.iter().collect::<Vec<_>>(), &[]).unwrap();
    for ((name, v), t) in want.iter().zip(&got) {
        assert!(matches(t, v), "{name}: restored {t:?}, TensorFlow had {v}");
    }
    assert_eq!(got[want.iter().position(|(n, _)| n == "hidden/weights").unwrap()].shape(), &Shape::new(vec![2, 3]));
    // Saving again from ferroflow and reading back gives the same bytes' values.
    let again = saver.save(&sess, &dir.join("ff.ckpt").display().to_string(), Some(4)).unwrap();
    let r2 = BundleReader::open(&again).unwrap();
    for (name, _) in &want {
        assert_eq!(r2.read(name).unwrap(), reader.read(name).unwrap(), "{name}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn tensorflow_checkpoint_restores_into_resource_variables() {
    restore(true);
}

#[test]
fn tensorflow_checkpoint_restores_into_ref_variables() {
    restore(false);
}

/// TensorFlow's partitioned-variable checkpoint (scripts/fixtures/tf_sliced_checkpoint.py):
/// `name<TAB>shape<TAB>values` per full variable.
fn sliced_expected() -> Vec<(String, Vec<usize>, Vec<f64>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tf_sliced_ckpt");
    std::fs::read_to_string(dir.join("expected.txt"))
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let shape = f[1].split(' ').filter(|x| !x.is_empty()).map(|x| x.parse().unwrap()).collect();
            (f[0].to_string(), shape, f[2].split(' ').map(|x| x.parse().unwrap()).collect())
        })
        .collect()
}

#[test]
fn tensorflow_partitioned_checkpoint_reads_whole_and_in_other_slices() {
    use ferroflow_kernels::io::tensor_slice::TensorSlice;
    use ferroflow_kernels::io::BundleWriter;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tf_sliced_ckpt");
    let prefix = latest_checkpoint(&dir).unwrap().unwrap();
    let reader = BundleReader::open(&prefix).unwrap();
    let want = sliced_expected();
    assert_eq!(reader.names(), want.iter().map(|(n, _, _)| n.clone()).collect::<Vec<_>>());
    assert_eq!(
        reader.stored_slices("emb").unwrap().iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        ["0,3:0,3", "3,2:0,3", "5,2:0,3"]
    );
    for (name, shape, values) in &want {
        let t = reader.read(name).unwrap();
        assert_eq!(t.dims(), shape.as_slice(), "{name}");
        assert_eq!(t.to_f64_vec().unwrap(), *values, "{name}");
    }
    // Rows 2-4 of emb span all three stored parts; columns 1-3 of scope/wide span two.
    let emb = &want.iter().find(|w| w.0 == "emb").unwrap().2;
    let rows = reader.read_slice("emb", &TensorSlice::parse("2,3:-").unwrap()).unwrap();
    assert_eq!(rows.dims(), &[3, 3]);
    assert_eq!(rows.to_f64_vec().unwrap(), emb[6..15].to_vec());
    let wide = &want.iter().find(|w| w.0 == "scope/wide").unwrap().2;
    let cols = reader.read_slice("scope/wide", &TensorSlice::parse("-:1,3").unwrap()).unwrap();
    assert_eq!(cols.to_f64_vec().unwrap(), vec![wide[1], wide[2], wide[3], wide[7], wide[8], wide[9]]);
    // Re-partitioned by ferroflow (2 parts on axis 1) it still reads back the same.
    let out = temp_dir("tf-sliced-again");
    let again = out.join("model").display().to_string();
    let mut w = BundleWriter::new(&again).unwrap();
    for s in ["-:0,2", "-:2,1"] {
        let s = TensorSlice::parse(s).unwrap();
        w.add_slice("emb", &[7, 3], &s, &reader.read_slice("emb", &s).unwrap()).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(BundleReader::open(&again).unwrap().read("emb").unwrap(), reader.read("emb").unwrap());
    std::fs::remove_dir_all(out).unwrap();
}
