//! A graph written by TensorFlow 2.21 whose functions call other functions by name
//! (`scripts/fixtures/tf_defun_calls.py`: `tf.nn.ctc_loss` and its gradient, whose `While`
//! loops are built from `function.Defun` wrappers, and a `Defun` calling a `Defun` in a loop
//! body) runs on DirectSession with TensorFlow's values.

use ferroflow_core::Tensor;
use ferroflow_runtime::DirectSession;
use serde_json::Value as J;

use crate::util::{close, fixture, run_steps};

/// A fed float32 value of any rank (nested lists, as the fixture writes arrays).
fn nested(j: &J) -> Tensor {
    let (mut dims, mut flat) = (Vec::new(), Vec::new());
    let mut level = &j["value"];
    while let Some(a) = level.as_array() {
        dims.push(a.len());
        level = &a[0];
    }
    fn walk(v: &J, out: &mut Vec<f32>) {
        match v.as_array() {
            Some(a) => a.iter().for_each(|x| walk(x, out)),
            None => out.push(v.as_f64().expect("a number") as f32),
        }
    }
    walk(&j["value"], &mut flat);
    Tensor::new(dims, flat).expect("a rectangular array")
}

#[test]
fn functions_called_by_name_give_tensorflows_values() {
    let (gd, exp) = fixture("tf_defun_calls");
    let lib = gd.library.as_ref().expect("a function library");
    let names: Vec<&str> = lib.function.iter().filter_map(|f| f.signature.as_ref().map(|s| s.name.as_str())).collect();
    // The fixture has what it is for: a function body with a node whose op is a function.
    let by_name = lib.function.iter().flat_map(|f| &f.node_def).filter(|n| names.contains(&n.op.as_str())).count();
    assert!(by_name >= 2, "no function calls another by name");
    let sess = DirectSession::from_graph_def(&gd).unwrap();
    run_steps(&sess, &exp, nested, close(1e-4));
}
