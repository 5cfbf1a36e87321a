//! A training graph written by TensorFlow 2.21 (`scripts/fixtures/tf_mlp.py`: an MLP with
//! its gradient and optimizer nodes, in resource- and ref-variable flavours) runs on
//! ferroflow's DirectSession with the same results as in TensorFlow.

use ferroflow_runtime::StepRunner;
use std::path::Path;

use ferroflow_core::proto::GraphDef;
use ferroflow_core::{Storage, Tensor};
use ferroflow_runtime::{DirectSession, RunOptions};
use prost::Message;
use serde_json::Value as J;

fn tensor(j: &J) -> Tensor {
    let shape: Vec<usize> = j["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let data = j["data"].as_array().unwrap();
    let st = match j["dtype"].as_str().unwrap() {
        "float32" => Storage::F32(data.iter().map(|v| v.as_f64().unwrap() as f32).collect()),
        "int64" => Storage::I64(data.iter().map(|v| v.as_i64().unwrap()).collect()),
        "int32" => Storage::I32(data.iter().map(|v| v.as_i64().unwrap() as i32).collect()),
        d => panic!("fixture dtype {d}"),
    };
    Tensor::from_storage(shape.into(), st).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 + 1e-4 * b.abs()
}

fn run_fixture(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let gd = GraphDef::decode(std::fs::read(dir.join("graph.pb")).unwrap().as_slice()).unwrap();
    let exp: J = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let sess = DirectSession::from_graph_def(&gd).unwrap();
    let o = RunOptions::default();
    let s = |v: &J| v.as_str().unwrap().to_string();
    let feeds =
        vec![(s(&exp["feeds"]["x"]), tensor(&exp["batch"]["x"])), (s(&exp["feeds"]["y"]), tensor(&exp["batch"]["y"]))];
    let loss = s(&exp["fetches"]["loss"]);
    sess.run_by_name(&[], &[], &[s(&exp["init_op"])], &o).unwrap();
    let l0 = sess.run_by_name(&feeds, std::slice::from_ref(&loss), &[], &o).unwrap()[0].scalar_value::<f32>().unwrap();
    assert!(
        close(l0 as f64, exp["loss_before"].as_f64().unwrap()),
        "{name}: loss before {l0} vs {}",
        exp["loss_before"]
    );
    for (i, want) in exp["losses_after_step"].as_array().unwrap().iter().enumerate() {
        sess.run_by_name(&feeds, &[], &[s(&exp["train_op"])], &o).unwrap();
        let l =
            sess.run_by_name(&feeds, std::slice::from_ref(&loss), &[], &o).unwrap()[0].scalar_value::<f32>().unwrap();
        assert!(
            close(l as f64, want.as_f64().unwrap()),
            "{name}: loss after step {} is {l}, TensorFlow: {want}",
            i + 1
        );
    }
    let acc =
        sess.run_by_name(&feeds, &[s(&exp["fetches"]["accuracy"])], &[], &o).unwrap()[0].scalar_value::<f32>().unwrap();
    assert!(close(acc as f64, exp["accuracy_after"].as_f64().unwrap()));
    let gs = sess.run_by_name(&[], &[s(&exp["fetches"]["global_step"])], &[], &o).unwrap()[0].to_f64_vec().unwrap()[0];
    assert_eq!(gs, exp["global_step"].as_f64().unwrap());
    for (vname, v) in exp["variables"].as_object().unwrap() {
        let got = sess.run_by_name(&[], &[s(&v["read_tensor"])], &[], &o).unwrap().remove(0);
        let want = tensor(v);
        assert_eq!(got.shape(), want.shape(), "{name}: variable {vname}");
        let (g, w) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
        for k in 0..g.len() {
            assert!(close(g[k], w[k]), "{name}: variable {vname}[{k}] = {} but TensorFlow has {}", g[k], w[k]);
        }
    }
}

#[test]
fn tensorflow_mlp_with_resource_variables_and_adagrad() {
    run_fixture("tf_mlp");
}

#[test]
fn tensorflow_mlp_with_ref_variables_and_sgd() {
    run_fixture("tf_mlp_ref");
}
