//! Test graphs shared by the unit tests of this crate.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, DataType, Tensor};

pub(crate) const PS: &str = "/job:ps/replica:0/task:0/device:CPU:0";
pub(crate) const W0: &str = "/job:worker/replica:0/task:0/device:CPU:0";
pub(crate) const W1: &str = "/job:worker/replica:0/task:1/device:CPU:0";

/// A node `name` running `op` on `device`, reading `inputs`, with no attrs.
pub(crate) fn node(name: &str, op: &str, device: &str, inputs: &[&str]) -> NodeDef {
    NodeDef {
        name: name.into(),
        op: op.into(),
        device: device.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

pub(crate) fn konst(name: &str, dev: &str, v: Vec<f32>) -> NodeDef {
    let t = Tensor::vec(v);
    let mut n = node(name, "Const", dev, &[]);
    n.attr.insert("dtype".into(), attr::ty(DataType::Float));
    n.attr.insert("value".into(), attr::tensor(&t));
    n
}

/// An `Identity` of `input` (float).
pub(crate) fn ident(name: &str, dev: &str, input: &str) -> NodeDef {
    let mut n = node(name, "Identity", dev, &[input]);
    n.attr.insert("T".into(), attr::ty(DataType::Float));
    n
}
