//! Op definitions of `_Send`, `_Recv`, `_HostSend` and `_HostRecv` (TensorFlow's
//! `core/ops/sendrecv_ops.cc`): the nodes that partitioning and the client feed/fetch
//! rewrite insert. They are registered in the graph registry by the runtime (the graph crate
//! does not own them); [`op_def_for`] lets this crate resolve them before that.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;
use ferroflow_graph::shape_fn::{Dims, ShapeCtx};
use ferroflow_graph::{op, OpDef};

/// Names of the four ops, senders first.
pub const SENDRECV_OPS: [&str; 4] = ["_Send", "_HostSend", "_Recv", "_HostRecv"];

fn unknown_shape(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![None])
}

fn no_outputs(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![])
}

fn send(name: &str) -> OpDef {
    op(name)
        .input("tensor: T")
        .attr("T: type")
        .attr("tensor_name: string")
        .attr("send_device: string")
        .attr("send_device_incarnation: int")
        .attr("recv_device: string")
        .attr("client_terminated: bool = false")
        .stateful()
        .shape_fn(no_outputs)
        .build()
}

fn recv(name: &str) -> OpDef {
    op(name)
        .output("tensor: tensor_type")
        .attr("tensor_type: type")
        .attr("tensor_name: string")
        .attr("send_device: string")
        .attr("send_device_incarnation: int")
        .attr("recv_device: string")
        .attr("client_terminated: bool = false")
        .stateful()
        .shape_fn(unknown_shape)
        .build()
}

/// `_Send`, `_HostSend`, `_Recv`, `_HostRecv`, all stateful. `_Send` takes `tensor: T`;
/// `_Recv` yields `tensor: tensor_type`; both carry `tensor_name`, `send_device`,
/// `send_device_incarnation` (int), `recv_device` and `client_terminated` (bool = false).
pub fn send_recv_op_defs() -> Vec<OpDef> {
    vec![send("_Send"), send("_HostSend"), recv("_Recv"), recv("_HostRecv")]
}

/// The definition of a node's op: from the graph registry, else one of the send/recv ops
/// defined here (until the runtime registers them).
pub(crate) fn op_def_for(node: &NodeDef) -> Result<OpDef, Status> {
    match ferroflow_graph::lookup_op(node) {
        Ok(d) => Ok(d.clone()),
        Err(e) => send_recv_op_defs().into_iter().find(|d| d.name == node.op).ok_or(e),
    }
}

/// Resolves a node's signature (with attr defaults) without modifying it.
pub(crate) fn signature(node: &NodeDef) -> Result<ferroflow_graph::Signature, Status> {
    let def = op_def_for(node)?;
    let mut n = node.clone();
    ferroflow_graph::add_defaults(&def, &mut n);
    ferroflow_graph::signature_of(&def, &n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::{attr, DataType};

    #[test]
    fn defs_resolve() {
        let defs = send_recv_op_defs();
        assert_eq!(defs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), SENDRECV_OPS);
        assert!(defs.iter().all(|d| d.stateful));
        let mut n = NodeDef { name: "r".into(), op: "_Recv".into(), ..Default::default() };
        n.attr.insert("tensor_type".into(), attr::ty(DataType::Int64));
        for (k, v) in [("tensor_name", "x:0"), ("send_device", "/cpu:0"), ("recv_device", "/cpu:0")] {
            n.attr.insert(k.into(), attr::string(v));
        }
        n.attr.insert("send_device_incarnation".into(), attr::int(1));
        let sig = signature(&n).unwrap();
        assert_eq!(sig.outputs, vec![(DataType::Int64, false)]);
        assert!(sig.inputs.is_empty());
        n.attr.remove("tensor_name");
        assert!(signature(&n).unwrap_err().message.contains("tensor_name"));
    }
}
