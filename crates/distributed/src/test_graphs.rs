//! Test graphs shared by the unit tests of this crate.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, DataType, Tensor};

pub(crate) const PS: &str = "/job:ps/replica:0/task:0/device:CPU:0";
pub(crate) const W0: &str = "/job:worker/replica:0/task:0/device:CPU:0";
pub(crate) const W1: &str = "/job:worker/replica:0/task:1/device:CPU:0";

pub(crate) fn konst(name: &str, dev: &str, v: Vec<f32>) -> NodeDef {
    let t = Tensor::vec(v);
    let mut n = NodeDef { name: name.into(), op: "Const".into(), device: dev.into(), ..Default::default() };
    n.attr.insert("dtype".into(), attr::ty(DataType::Float));
    n.attr.insert("value".into(), attr::tensor(&t));
    n
}

/// An `Identity` of `input` (float).
pub(crate) fn ident(name: &str, dev: &str, input: &str) -> NodeDef {
    let mut n = NodeDef { name: name.into(), op: "Identity".into(), device: dev.into(), ..Default::default() };
    n.input = vec![input.into()];
    n.attr.insert("T".into(), attr::ty(DataType::Float));
    n
}
