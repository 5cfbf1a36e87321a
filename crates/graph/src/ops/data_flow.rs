//! Data-flow ops for synchronous training, with TensorFlow's definitions: conditional
//! accumulators (`ConditionalAccumulator`, `ResourceConditionalAccumulator`,
//! `[Resource]Accumulator{ApplyGradient,TakeGradient,NumAccumulated,SetGlobalStep}`), the
//! sparse accumulator (`SparseConditionalAccumulator`, `SparseAccumulator{Apply,Take}Gradient`;
//! TensorFlow has no resource form of it) and
//! FIFO queues (`FIFOQueue[V2]`, `QueueEnqueue[Many][V2]`, `QueueDequeue[Many][V2]`,
//! `QueueClose[V2]`, `QueueSize[V2]`).

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, DataType, NodeAttrs, Status};

use super::state::NUMBER_TYPES;
use crate::op_def::{op, OpDefBuilder};
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Operation, Output, Scope};
use crate::shape_fn::{scalar, Dims, ShapeCtx};

fn none(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![])
}

fn take_shape(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![None])
}

/// TensorFlow's shape function loses the accumulator's shape here: all three unknown.
fn sparse_take_shape(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![None; 3])
}

/// Dequeue outputs: the queue's component shapes are not visible from here, so unknown.
fn dequeue_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let n = c.node.attr_list_type("component_types")?.len();
    Ok(vec![None; n])
}

pub(crate) fn register(r: &mut OpRegistry) {
    // TensorFlow has no resource form of the sparse accumulator.
    for (name, ref_form) in [
        ("ConditionalAccumulator", true),
        ("ResourceConditionalAccumulator", false),
        ("SparseConditionalAccumulator", true),
    ] {
        r.add(
            op(name)
                .handle_output("handle", ref_form)
                .attr(&format!("dtype: {NUMBER_TYPES}"))
                .attr("shape: shape")
                .attr("container: string = ''")
                .attr("shared_name: string = ''")
                .attr("reduction_type: {'MEAN', 'SUM'} = 'MEAN'")
                .stateful()
                .build(),
        );
    }
    // Not stateful in TensorFlow (their ref input keeps them apart).
    r.add(
        op("SparseAccumulatorApplyGradient")
            .input("handle: Ref(string)")
            .input("local_step: int64")
            .input("gradient_indices: int64")
            .input("gradient_values: dtype")
            .input("gradient_shape: int64")
            .attr(&format!("dtype: {NUMBER_TYPES}"))
            .attr("has_known_shape: bool")
            .shape_fn(none)
            .build(),
    );
    r.add(
        op("SparseAccumulatorTakeGradient")
            .input("handle: Ref(string)")
            .input("num_required: int32")
            .output("indices: int64")
            .output("values: dtype")
            .output("shape: int64")
            .attr(&format!("dtype: {NUMBER_TYPES}"))
            .shape_fn(sparse_take_shape)
            .build(),
    );
    let dtype = format!("dtype: {NUMBER_TYPES}");
    for (prefix, h) in [("", "handle: Ref(string)"), ("Resource", "handle: resource")] {
        let acc = |name: &str| op(&format!("{prefix}Accumulator{name}")).input(h).stateful();
        r.add(acc("NumAccumulated").output("num_accumulated: int32").shape_fn(scalar).build());
        r.add(acc("SetGlobalStep").input("new_global_step: int64").shape_fn(none).build());
        r.add(
            acc("ApplyGradient")
                .input("local_step: int64")
                .input("gradient: dtype")
                .attr(&dtype)
                .shape_fn(none)
                .build(),
        );
        let take = acc("TakeGradient").input("num_required: int32").output("average: dtype").attr(&dtype);
        r.add(take.shape_fn(take_shape).build());
    }
    for (name, ref_form) in [("FIFOQueue", true), ("FIFOQueueV2", false)] {
        r.add(
            op(name)
                .handle_output("handle", ref_form)
                .attr("component_types: list(type) >= 1")
                .attr("shapes: list(shape) >= 0 = []")
                .attr("capacity: int = -1")
                .attr("container: string = ''")
                .attr("shared_name: string = ''")
                .stateful()
                .build(),
        );
    }
    for (suffix, h) in [("", "handle: Ref(string)"), ("V2", "handle: resource")] {
        for base in ["QueueEnqueue", "QueueEnqueueMany"] {
            r.add(
                op(&format!("{base}{suffix}"))
                    .input(h)
                    .input("components: Tcomponents")
                    .attr("Tcomponents: list(type) >= 1")
                    .attr("timeout_ms: int = -1")
                    .stateful()
                    .shape_fn(none)
                    .build(),
            );
        }
        for (base, n) in [("QueueDequeue", None), ("QueueDequeueMany", Some("n: int32"))] {
            let b = n.into_iter().fold(op(&format!("{base}{suffix}")).input(h), OpDefBuilder::input);
            let b = b.output("components: component_types").attr("component_types: list(type) >= 1");
            r.add(b.attr("timeout_ms: int = -1").stateful().shape_fn(dequeue_shape).build());
        }
        r.add(
            op(&format!("QueueClose{suffix}"))
                .input(h)
                .attr("cancel_pending_enqueues: bool = false")
                .stateful()
                .shape_fn(none)
                .build(),
        );
        r.add(op(&format!("QueueSize{suffix}")).input(h).output("size: int32").stateful().shape_fn(scalar).build());
    }
}

fn is_resource(h: &Output) -> bool {
    h.dtype == DataType::Resource
}

fn shape_list(shapes: &[Vec<i64>]) -> AttrValue {
    attr::list_shape(shapes.iter().map(|d| Some(&d[..])))
}

/// Which conditional accumulator [`conditional_accumulator`] builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccumulatorKind {
    /// `ConditionalAccumulator`: dense gradients, a string-ref handle.
    Ref,
    /// `ResourceConditionalAccumulator`: dense gradients, a resource handle (what
    /// TensorFlow 2's `tf.compat.v1.ConditionalAccumulator` builds).
    Resource,
    /// `SparseConditionalAccumulator`: indexed-slices gradients, always a string-ref handle
    /// (TensorFlow has no resource form; its `tf.compat.v1.SparseConditionalAccumulator` and
    /// `SyncReplicasOptimizer` build it for `IndexedSlices` gradients).
    /// `AccumulatorNumAccumulated` / `AccumulatorSetGlobalStep` take its handle too.
    Sparse,
}

/// A conditional accumulator of `kind` for gradients of `dtype` and `shape`, shared under
/// `shared_name`; `reduction_type` is `MEAN` or `SUM`.
pub fn conditional_accumulator(
    s: &Scope,
    dtype: DataType,
    shape: Option<&[i64]>,
    shared_name: &str,
    reduction_type: &str,
    kind: AccumulatorKind,
) -> Output {
    let op = match kind {
        AccumulatorKind::Ref => "ConditionalAccumulator",
        AccumulatorKind::Resource => "ResourceConditionalAccumulator",
        AccumulatorKind::Sparse => "SparseConditionalAccumulator",
    };
    let attrs = [
        ("dtype", attr::ty(dtype)),
        ("shape", attr::shape(shape)),
        ("shared_name", attr::string(shared_name)),
        ("reduction_type", attr::string(reduction_type)),
    ];
    op_output(s, op, [], attrs)
}

/// The op `base` for a ref handle `h`, or its resource form (`resource(base)`).
fn versioned(h: &Output, base: &str, resource: fn(&str) -> String) -> String {
    if is_resource(h) {
        resource(base)
    } else {
        base.to_string()
    }
}

/// An accumulator op: `Resource<base>` for a resource handle.
fn acc_op(h: &Output, base: &str) -> String {
    versioned(h, base, |b| format!("Resource{b}"))
}

/// `[Resource]AccumulatorApplyGradient`: adds `gradient` computed at `local_step` (int64).
pub fn accumulator_apply_gradient(s: &Scope, handle: Output, local_step: Output, gradient: Output) -> Operation {
    let op = acc_op(&handle, "AccumulatorApplyGradient");
    s.op(&op).input(handle).input(local_step).input(gradient).build()
}

/// `[Resource]AccumulatorTakeGradient`: waits for `num_required` (int32) gradients and
/// returns their average.
pub fn accumulator_take_gradient(s: &Scope, handle: Output, num_required: Output, dtype: DataType) -> Output {
    let op = acc_op(&handle, "AccumulatorTakeGradient");
    s.op(&op).input(handle).input(num_required).attr("dtype", attr::ty(dtype)).build().output(0)
}

/// `[Resource]AccumulatorNumAccumulated`.
pub fn accumulator_num_accumulated(s: &Scope, handle: Output) -> Output {
    let op = acc_op(&handle, "AccumulatorNumAccumulated");
    s.op(&op).input(handle).build().output(0)
}

/// `[Resource]AccumulatorSetGlobalStep` (`new_global_step` is int64).
pub fn accumulator_set_global_step(s: &Scope, handle: Output, new_global_step: Output) -> Operation {
    let op = acc_op(&handle, "AccumulatorSetGlobalStep");
    s.op(&op).input(handle).input(new_global_step).build()
}

/// `SparseAccumulatorApplyGradient`: adds the indexed slices (`indices` int64 vector,
/// `values` `[nnz, ...]`) computed at `local_step` (int64); `shape` (int64), if given, is
/// checked against the accumulator's (`has_known_shape`).
pub fn sparse_accumulator_apply_gradient(
    s: &Scope,
    handle: Output,
    local_step: Output,
    indices: Output,
    values: Output,
    shape: Option<Output>,
) -> Operation {
    let known = shape.is_some();
    // TensorFlow's client feeds an empty shape when it has none.
    let shape = shape.unwrap_or_else(|| super::constant(s, Vec::<i64>::new()));
    s.op("SparseAccumulatorApplyGradient")
        .input(handle)
        .input(local_step)
        .input(indices)
        .input(values)
        .input(shape)
        .attr("has_known_shape", attr::bool(known))
        .build()
}

/// `SparseAccumulatorTakeGradient`: waits for `num_required` (int32) gradients and returns
/// their aggregate as (indices, values, dense shape).
pub fn sparse_accumulator_take_gradient(
    s: &Scope,
    handle: Output,
    num_required: Output,
    dtype: DataType,
) -> (Output, Output, Output) {
    let op =
        s.op("SparseAccumulatorTakeGradient").input(handle).input(num_required).attr("dtype", attr::ty(dtype)).build();
    (op.output(0), op.output(1), op.output(2))
}

/// `FIFOQueueV2` (`resource` = true) or `FIFOQueue`; `capacity < 0` is unbounded, empty
/// `shapes` leaves the component shapes unspecified.
pub fn fifo_queue(
    s: &Scope,
    component_types: &[DataType],
    shapes: &[Vec<i64>],
    capacity: i64,
    shared_name: &str,
    resource: bool,
) -> Output {
    let attrs = [
        ("component_types", attr::list_type(component_types)),
        ("shapes", shape_list(shapes)),
        ("capacity", attr::int(capacity)),
        ("shared_name", attr::string(shared_name)),
    ];
    op_output(s, if resource { "FIFOQueueV2" } else { "FIFOQueue" }, [], attrs)
}

/// A queue op: `<base>V2` for a resource handle.
fn q_op(h: &Output, base: &str) -> String {
    versioned(h, base, |b| format!("{b}V2"))
}

/// `<base>[V2]` of `components` with the attr `timeout_ms`.
fn enqueue(s: &Scope, base: &str, handle: Output, components: Vec<Output>, timeout_ms: i64) -> Operation {
    let op = q_op(&handle, base);
    s.op(&op).input(handle).input_list(components).attr("timeout_ms", attr::int(timeout_ms)).build()
}

/// `QueueEnqueue[V2]` of one element (`timeout_ms <= 0`: no timeout of its own).
pub fn queue_enqueue(s: &Scope, handle: Output, components: Vec<Output>, timeout_ms: i64) -> Operation {
    enqueue(s, "QueueEnqueue", handle, components, timeout_ms)
}

/// `QueueEnqueueMany[V2]`: enqueues the slices along dimension 0.
pub fn queue_enqueue_many(s: &Scope, handle: Output, components: Vec<Output>, timeout_ms: i64) -> Operation {
    enqueue(s, "QueueEnqueueMany", handle, components, timeout_ms)
}

/// `QueueDequeue[V2]`: one element, waiting while the queue is empty.
pub fn queue_dequeue(s: &Scope, handle: Output, component_types: &[DataType], timeout_ms: i64) -> Vec<Output> {
    dequeue(s, "QueueDequeue", (handle, None), component_types, timeout_ms)
}

/// `QueueDequeueMany[V2]`: `n` (int32) elements stacked along dimension 0.
pub fn queue_dequeue_many(
    s: &Scope,
    handle: Output,
    n: Output,
    component_types: &[DataType],
    timeout_ms: i64,
) -> Vec<Output> {
    dequeue(s, "QueueDequeueMany", (handle, Some(n)), component_types, timeout_ms)
}

/// `<base>[V2]` from `handle` (and the count `n` when given).
fn dequeue(
    s: &Scope,
    base: &str,
    (handle, n): (Output, Option<Output>),
    component_types: &[DataType],
    timeout_ms: i64,
) -> Vec<Output> {
    let op = q_op(&handle, base);
    let mut b = s.op(&op).input(handle);
    if let Some(n) = n {
        b = b.input(n);
    }
    b.attr("component_types", attr::list_type(component_types))
        .attr("timeout_ms", attr::int(timeout_ms))
        .build()
        .outputs()
}

/// `QueueClose[V2]`.
pub fn queue_close(s: &Scope, handle: Output, cancel_pending_enqueues: bool) -> Operation {
    let op = q_op(&handle, "QueueClose");
    s.op(&op).input(handle).attr("cancel_pending_enqueues", attr::bool(cancel_pending_enqueues)).build()
}

/// `QueueSize[V2]`.
pub fn queue_size(s: &Scope, handle: Output) -> Output {
    let op = q_op(&handle, "QueueSize");
    s.op(&op).input(handle).build().output(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::constant;
    use ferroflow_core::Tensor;

    #[test]
    fn builds_accumulator_and_queue_ops() {
        let s = Scope::new_root();
        for resource in [true, false] {
            let kind = if resource { AccumulatorKind::Resource } else { AccumulatorKind::Ref };
            let h = conditional_accumulator(&s, DataType::Float, Some(&[2]), "acc", "MEAN", kind);
            let step = constant(&s, Tensor::scalar(0i64));
            let g = constant(&s, vec![1.0f32, 2.0]);
            accumulator_apply_gradient(&s, h.clone(), step.clone(), g);
            let t = accumulator_take_gradient(&s, h.clone(), constant(&s, Tensor::scalar(2i32)), DataType::Float);
            assert_eq!(t.dtype, DataType::Float);
            assert_eq!(accumulator_num_accumulated(&s, h.clone()).dtype, DataType::Int32);
            accumulator_set_global_step(&s, h, step);
            let q = fifo_queue(&s, &[DataType::Int64], &[vec![]], -1, "q", resource);
            let tok = constant(&s, Tensor::scalar(3i64));
            queue_enqueue(&s, q.clone(), vec![tok.clone()], -1);
            queue_enqueue_many(&s, q.clone(), vec![constant(&s, Tensor::vec(vec![1i64, 2]))], -1);
            let d = queue_dequeue(&s, q.clone(), &[DataType::Int64], 1000);
            assert_eq!(d.len(), 1);
            assert_eq!(d[0].dtype, DataType::Int64);
            let m = queue_dequeue_many(&s, q.clone(), constant(&s, Tensor::scalar(2i32)), &[DataType::Int64], -1);
            assert_eq!(m.len(), 1);
            queue_close(&s, q.clone(), true);
            assert_eq!(queue_size(&s, q).dtype, DataType::Int32);
        }
        s.status().unwrap();
        let n = s.graph().node("ResourceAccumulatorTakeGradient").unwrap().def;
        assert_eq!(n.op, "ResourceAccumulatorTakeGradient");
        let n = s.graph().node("QueueEnqueueV2").unwrap().def;
        assert_eq!(n.attr_list_type("Tcomponents").unwrap(), vec![DataType::Int64]);
    }

    #[test]
    fn builds_sparse_accumulator_ops_with_tensorflows_definitions() {
        let s = Scope::new_root();
        let h = conditional_accumulator(&s, DataType::Float, Some(&[4, 2]), "emb", "SUM", AccumulatorKind::Sparse);
        assert!(h.dtype == DataType::String);
        let step = constant(&s, Tensor::scalar(0i64));
        let idx = constant(&s, vec![0i64, 2]);
        let vals = constant(&s, Tensor::new(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap());
        sparse_accumulator_apply_gradient(&s, h.clone(), step.clone(), idx.clone(), vals.clone(), None);
        let shape = constant(&s, vec![4i64, 2]);
        sparse_accumulator_apply_gradient(&s, h.clone(), step.clone(), idx, vals, Some(shape));
        let (i, v, d) =
            sparse_accumulator_take_gradient(&s, h.clone(), constant(&s, Tensor::scalar(2i32)), DataType::Float);
        assert_eq!((i.dtype, v.dtype, d.dtype), (DataType::Int64, DataType::Float, DataType::Int64));
        assert_eq!(accumulator_num_accumulated(&s, h.clone()).dtype, DataType::Int32);
        accumulator_set_global_step(&s, h, step);
        s.status().unwrap();
        let g = s.graph();
        let a = g.node("SparseConditionalAccumulator").unwrap().def;
        assert_eq!(a.attr_string("reduction_type").unwrap(), "SUM");
        assert!(!g.node("SparseAccumulatorApplyGradient").unwrap().def.attr_bool("has_known_shape").unwrap());
        assert!(g.node("SparseAccumulatorApplyGradient_1").unwrap().def.attr_bool("has_known_shape").unwrap());
        // The ref form only (TensorFlow has no resource sparse accumulator); NumAccumulated
        // and SetGlobalStep are the ref ops.
        assert!(g.node("AccumulatorNumAccumulated").is_some());
        let r = crate::registry::op_registry().get("SparseAccumulatorTakeGradient").unwrap();
        assert!(r.inputs[0].is_ref && !r.stateful && r.outputs.len() == 3);
        let r = crate::registry::op_registry().get("SparseAccumulatorApplyGradient").unwrap();
        assert_eq!(
            r.inputs.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            ["handle", "local_step", "gradient_indices", "gradient_values", "gradient_shape"]
        );
        assert!(crate::registry::op_registry().get("SparseConditionalAccumulator").unwrap().stateful);
    }
}
