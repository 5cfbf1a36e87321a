//! Loading the TensorFlow-written graph fixtures (`tests/fixtures/<name>/graph.pb` and the
//! steps TensorFlow ran on it, `expected.json`), shared by the fixture tests.
#![allow(dead_code)]

use std::path::Path;

use ferroflow_core::proto::GraphDef;
use prost::Message;
use serde_json::Value as J;

/// The fixture's GraphDef and its expected steps.
pub fn fixture(name: &str) -> (GraphDef, J) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let gd = GraphDef::decode(std::fs::read(dir.join("graph.pb")).unwrap().as_slice()).unwrap();
    let exp: J = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    (gd, exp)
}

/// A JSON array of strings.
pub fn strings(v: &J) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}
