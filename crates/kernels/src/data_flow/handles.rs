//! Handles of queues and accumulators in both of TensorFlow's forms: a DT_RESOURCE scalar
//! (`FIFOQueueV2`, `ResourceConditionalAccumulator`) or a `Ref(string)` holding
//! `[container, shared_name]` (`FIFOQueue`, `ConditionalAccumulator`).

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, ResourceHandle, Status, Tensor};

use crate::state::handle::{handle_input, DEFAULT_CONTAINER};
use crate::{OpContext, Value, Var};

/// Where a resource-creating node keeps its resource: (container, shared name). An empty
/// `shared_name` means the node's own name, so every run of the node sees one resource.
pub(crate) fn container_and_name(n: &NodeDef) -> Result<(String, String), Status> {
    let c = n.attr_string("container")?;
    let s = n.attr_string("shared_name")?;
    let c = if c.is_empty() { DEFAULT_CONTAINER.to_string() } else { c };
    Ok((c, if s.is_empty() { n.name.clone() } else { s }))
}

/// The name of a resource whose creating node has no `shared_name` (`private` is the node's
/// name): private to the client session, as TensorFlow's kernels keep one per session and
/// node, so two sessions (or two graphs in them) never share a queue or reader by accident.
pub(crate) fn session_private_name(ctx: &OpContext, private: &str) -> String {
    let session = &ctx.step().session;
    if session.is_empty() {
        private.to_string()
    } else {
        format!("_{session}_{private}")
    }
}

/// Sets output 0 to a handle naming `container/name`: a resource scalar, or a string-ref.
pub(crate) fn set_handle_output(
    ctx: &mut OpContext,
    container: &str,
    name: &str,
    type_name: &str,
    as_ref: bool,
) -> Result<(), Status> {
    if as_ref {
        let var = Var::new(name, DataType::String);
        var.assign(Tensor::new(vec![2], vec![container.as_bytes().to_vec(), name.as_bytes().to_vec()])?)?;
        ctx.set_output_value(0, Value::Ref(Arc::new(var)))
    } else {
        let h = ResourceHandle::new(ctx.device(), container, name, type_name);
        ctx.set_output(0, Tensor::scalar(h))
    }
}

/// TensorFlow's error when a creating node finds its resource already made with other
/// attributes: "{kind} '{name}' already exists with {what} {have} but this node declares {want}".
pub(crate) fn exists_differently(
    ctx: &OpContext,
    kind: &str,
    name: &str,
    what: &str,
    have: impl std::fmt::Display,
    want: impl std::fmt::Display,
) -> Status {
    ctx.error(format!("{kind} '{name}' already exists with {what} {have} but this node declares {want}"))
}

/// The (container, name) named by input `i`, in either handle form.
pub(crate) fn handle_names(ctx: &OpContext, i: usize) -> Result<(String, String), Status> {
    let t = ctx.input(i)?;
    match t.dtype() {
        DataType::Resource => {
            let h = handle_input(ctx, i)?;
            let c = if h.container.is_empty() { DEFAULT_CONTAINER.to_string() } else { h.container };
            Ok((c, h.name))
        }
        DataType::String => {
            let v = t.as_slice::<Vec<u8>>()?;
            let [c, n] = v else {
                return Err(ctx.error(format!("handle input {i} must hold [container, name], got shape {}", t.shape())));
            };
            Ok((String::from_utf8_lossy(c).into_owned(), String::from_utf8_lossy(n).into_owned()))
        }
        d => Err(ctx.error(format!("input {i} must be a resource or string handle, got a {d} tensor"))),
    }
}

/// The resource of type `R` named by input 0; NotFound naming the node, the `kind` of
/// resource and that its creating op must run first, if it was never created.
pub(crate) fn named_resource<R: std::any::Any + Send + Sync>(ctx: &OpContext, kind: &str) -> Result<Arc<R>, Status> {
    named_resource_at(ctx, 0, kind)
}

/// As [`named_resource`], for the handle at input `i`.
pub(crate) fn named_resource_at<R: std::any::Any + Send + Sync>(
    ctx: &OpContext,
    i: usize,
    kind: &str,
) -> Result<Arc<R>, Status> {
    let (c, n) = handle_names(ctx, i)?;
    ctx.resources().lookup::<R>(&c, &n).map_err(|e| {
        Status::not_found(format!(
            "node '{}' (op {}): {kind} '{c}/{n}' does not exist (run the op that creates it first): {}",
            ctx.node().name,
            ctx.node().op,
            e.message
        ))
        .with_node(&ctx.node().name)
    })
}

/// `e` with the node's name and op in front, unless it names the node already.
pub(crate) fn node_err(ctx: &OpContext, e: Status) -> Status {
    e.in_node(&ctx.node().name, &ctx.node().op)
}
