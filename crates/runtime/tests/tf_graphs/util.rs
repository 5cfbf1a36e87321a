//! Loading the TensorFlow-written graph fixtures (`tests/fixtures/<name>/graph.pb` and the
//! steps TensorFlow ran on it, `expected.json`), shared by the fixture tests.
#![allow(dead_code)]

use ferroflow_runtime::StepRunner;
use std::path::Path;

use ferroflow_core::proto::GraphDef;
use ferroflow_core::Tensor;
use ferroflow_runtime::{DirectSession, RunOptions};
use prost::Message;
use serde_json::Value as J;

/// The fixture's GraphDef and its expected steps.
pub fn fixture(name: &str) -> (GraphDef, J) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let gd = GraphDef::decode(std::fs::read(dir.join("graph.pb")).unwrap().as_slice()).unwrap();
    let exp: J = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    (gd, exp)
}

/// A fresh session on the fixture's graph.
pub fn session(name: &str) -> DirectSession {
    DirectSession::from_graph_def(&fixture(name).0).unwrap()
}

/// A JSON array of strings.
pub fn strings(v: &J) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

/// Runs every step of `exp` on `sess` (feeds decoded by `value`) and calls
/// `check(step index, fetch name, fetched tensor, TensorFlow's expected entry)`.
pub fn run_steps(
    sess: &DirectSession,
    exp: &J,
    value: impl Fn(&J) -> Tensor,
    check: impl Fn(usize, &str, &Tensor, &J),
) {
    let o = RunOptions::default();
    for (i, step) in exp["steps"].as_array().unwrap().iter().enumerate() {
        let feeds: Vec<(String, Tensor)> =
            step["feeds"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), value(v))).collect();
        let fetches = strings(&step["fetches"]);
        let got = sess
            .run_by_name(&feeds, &fetches, &strings(&step["targets"]), &o)
            .unwrap_or_else(|e| panic!("step {i} ({fetches:?}): {e}"));
        for ((name, t), want) in fetches.iter().zip(&got).zip(step["expect"].as_array().unwrap()) {
            check(i, name, t, want);
        }
    }
}

/// A fed value of a fixture: a bool or int32 scalar, or float32 (a scalar, or a vector
/// when the value is a list).
pub fn value(j: &J) -> Tensor {
    let v = &j["value"];
    match j["dtype"].as_str().unwrap() {
        "bool" => Tensor::scalar(v.as_bool().unwrap()),
        "int32" => Tensor::scalar(v.as_i64().unwrap() as i32),
        "float32" => match v.as_array() {
            Some(a) => Tensor::vec(a.iter().map(|x| x.as_f64().unwrap() as f32).collect()),
            None => Tensor::scalar(v.as_f64().unwrap() as f32),
        },
        d => panic!("fixture dtype {d}"),
    }
}

/// A check for [`run_steps`]: the fetched tensor has TensorFlow's dtype and every element
/// is within `tol` of TensorFlow's, relative to its magnitude (absolute below 1).
pub fn close(tol: f64) -> impl Fn(usize, &str, &Tensor, &J) {
    move |i, name, t, want| {
        assert_eq!(t.dtype().name(), want["dtype"].as_str().unwrap(), "step {i}: {name}");
        let got = t.to_f64_vec().unwrap();
        let w: Vec<f64> = match want["value"].as_array() {
            Some(a) => a.iter().map(|v| v.as_f64().unwrap()).collect(),
            None => vec![want["value"].as_f64().unwrap()],
        };
        assert_eq!(got.len(), w.len(), "step {i}: {name} = {got:?}, TensorFlow: {w:?}");
        for (g, w) in got.iter().zip(&w) {
            assert!((g - w).abs() <= tol * w.abs().max(1.0), "step {i}: {name} = {got:?}, TensorFlow: {w:?}");
        }
    }
}
