//! Golden sequences of stateful ops on one resource variable (`tests/golden/stateful/*.json`,
//! written by `scripts/golden/random_generator.py`): each case starts a variable at its
//! `state`, then runs its `steps` in order, each `{"op", "attrs", "inputs" (after the
//! resource), "outputs" | "error" (TensorFlow's error class), "state" (the variable after
//! the step)}`; the outputs, the error codes and every state after a step must be
//! TensorFlow's.

use std::sync::Arc;

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, Code, DataType, Tensor};
use ferroflow_kernels::testutil::{node, run_kernel_values};
use ferroflow_kernels::{ResourceMgr, Value};
use serde_json::Value as J;

use super::{attr_value, close, json_files, tensor, values};

fn code(s: &str) -> Code {
    match s {
        "InvalidArgument" => Code::InvalidArgument,
        "Unimplemented" => Code::Unimplemented,
        "FailedPrecondition" => Code::FailedPrecondition,
        "NotFound" => Code::NotFound,
        other => panic!("golden: unknown error class {other}"),
    }
}

fn run(
    rm: &Arc<ResourceMgr>,
    op: &str,
    attrs: &[(&str, AttrValue)],
    inputs: Vec<Tensor>,
    outs: usize,
) -> Result<Vec<Tensor>, ferroflow_core::Status> {
    let v = run_kernel_values(node(op, attrs), inputs.into_iter().map(Value::Tensor).collect(), outs, rm.clone())?;
    v.into_iter().map(|v| v.tensor()).collect()
}

/// Whether `got` is `want`: integers exactly, floats within TensorFlow's float noise.
fn same(got: &Tensor, want: &Tensor) -> bool {
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        return false;
    }
    match want.dtype() {
        DataType::Float | DataType::Double | DataType::Half => {
            values(got).iter().zip(values(want)).all(|(&g, w)| close(g, w, 1e-5, 1e-6))
        }
        _ => got == want,
    }
}

/// Runs every sequence of one file; returns the steps run and the failures.
fn check_file(path: &std::path::Path, failures: &mut Vec<String>) -> usize {
    let j: J = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut steps = 0;
    for case in j["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let rm = Arc::new(ResourceMgr::new());
        let state = tensor(&case["state"]);
        let dtype = state.dtype();
        let handle_attrs = [
            ("container", attr::string("")),
            ("shared_name", attr::string(name)),
            ("debug_name", attr::string("")),
            ("dtype", attr::ty(dtype)),
            ("shape", attr::shape(None)),
            ("allowed_devices", attr::list_string::<&str>(&[])),
        ];
        let h = run(&rm, "VarHandleOp", &handle_attrs, vec![], 1).unwrap().remove(0);
        let assign = [("dtype", attr::ty(dtype)), ("validate_shape", attr::bool(false))];
        run(&rm, "AssignVariableOp", &assign, vec![h.clone(), state], 0).unwrap();
        for (i, s) in case["steps"].as_array().unwrap().iter().enumerate() {
            steps += 1;
            let op = s["op"].as_str().unwrap();
            let at = format!("{}:{name} step {i} ({op})", path.file_name().unwrap().to_string_lossy());
            let attrs: Vec<(String, AttrValue)> = s["attrs"]
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), attr_value(v))).collect())
                .unwrap_or_default();
            let attr_refs: Vec<(&str, AttrValue)> = attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            let mut inputs = vec![h.clone()];
            inputs.extend(s["inputs"].as_array().unwrap().iter().map(tensor));
            let want: Vec<Tensor> = s["outputs"].as_array().map(|o| o.iter().map(tensor).collect()).unwrap_or_default();
            match (run(&rm, op, &attr_refs, inputs, want.len()), s["error"].as_str()) {
                (Ok(got), None) => {
                    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                        if !same(g, w) {
                            failures.push(format!("{at}: output {k} is {g:?}, TensorFlow gives {w:?}"));
                        }
                    }
                }
                (Ok(_), Some(e)) => failures.push(format!("{at}: ran, TensorFlow fails with {e}")),
                (Err(e), None) => failures.push(format!("{at}: error {e}")),
                (Err(e), Some(w)) if e.code != code(w) => {
                    failures.push(format!("{at}: error {e}, TensorFlow's class is {w}"))
                }
                (Err(e), Some(_)) => {
                    assert!(e.message.contains("test"), "{at}: the error names no node: {e}");
                }
            }
            let read = run(&rm, "ReadVariableOp", &[("dtype", attr::ty(dtype))], vec![h.clone()], 1).unwrap();
            let want_state = tensor(&s["state"]);
            if read[0] != want_state {
                failures.push(format!("{at}: state after is {:?}, TensorFlow's is {want_state:?}", read[0]));
            }
        }
    }
    steps
}

/// Runs every sequence file; `Err` lists the failures.
pub fn check_all() -> Result<usize, String> {
    let files = json_files("tests/golden/stateful");
    let mut failures = Vec::new();
    let steps: usize = files.iter().map(|f| check_file(f, &mut failures)).sum();
    if failures.is_empty() {
        Ok(steps)
    } else {
        Err(format!("{} of {steps} golden steps differ:\n{}", failures.len(), failures.join("\n")))
    }
}
