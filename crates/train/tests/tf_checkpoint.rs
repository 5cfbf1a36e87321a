//! A checkpoint written by TensorFlow 2.21's tf.compat.v1 Saver (fixture made by
//! scripts/fixtures/tf_checkpoint.py) restores into a ferroflow Saver, with resource and
//! with reference variables, and the values equal TensorFlow's.

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
