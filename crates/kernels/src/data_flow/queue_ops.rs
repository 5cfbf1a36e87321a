//! Queue kernels: `FIFOQueueV2`, `PaddingFIFOQueueV2`, `RandomShuffleQueueV2` and
//! `PriorityQueueV2` create (or find) the queue; `QueueEnqueue[Many]V2`,
//! `QueueDequeue[Many|UpTo]V2` are asynchronous (they wait without a thread, bounded by
//! `timeout_ms`, the step's deadline and its cancellation); `QueueCloseV2`, `QueueSizeV2`,
//! `QueueIsClosedV2`. The ref-handle forms (no `V2`) share the kernels.

use std::sync::Arc;

use ferroflow_core::proto::{attr_value, NodeDef};
use ferroflow_core::{shape_proto_dims, DataType, NodeAttrs, Status, Tensor};

use super::handles::{
    container_and_name, exists_differently, named_resource, node_err, session_private_name, set_handle_output,
};
use super::queue::{FifoQueue, Out};
use super::queue_store::QueueKind;
use super::waiters::{start_waiting, timeout_from_ms};
use crate::{AsyncOpKernel, DoneCallback, KernelRegistry, OpContext, OpKernel};

/// TensorFlow's type name of queues in resource handles.
pub const QUEUE_TYPE_NAME: &str = "N10tensorflow14QueueInterfaceE";

struct Create {
    container: String,
    name: String,
    types: Vec<DataType>,
    shapes: Vec<Vec<i64>>,
    capacity: i64,
    kind: QueueKind,
    as_ref: bool,
    /// Whether `shared_name` was given (else the queue is private to the session).
    shared: bool,
}

fn list_shapes(n: &NodeDef, attr: &str) -> Result<Vec<Vec<i64>>, Status> {
    let v = n.attr_value(attr)?;
    let Some(attr_value::Value::List(l)) = &v.value else { return Ok(vec![]) };
    l.shape
        .iter()
        .enumerate()
        .map(|(i, s)| {
            shape_proto_dims(s).ok_or_else(|| {
                n.node_error(format!("shape {i} of attr '{attr}' has unknown rank; queues need known shapes"))
            })
        })
        .collect()
}

impl OpKernel for Create {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let name = if self.shared { self.name.clone() } else { session_private_name(ctx, &self.name) };
        let q = ctx.resources().lookup_or_create(&self.container, &name, || {
            FifoQueue::of_kind(&name, self.kind.clone(), self.types.clone(), self.shapes.clone(), self.capacity)
        })?;
        let what = self.kind.type_name();
        if q.kind().type_name() != what {
            let have = q.kind().type_name().to_string();
            return Err(exists_differently(ctx, what, &name, "queue type", have, what.to_string()));
        }
        if q.component_types() != self.types.as_slice() {
            let (have, want) = (format!("{:?}", q.component_types()), format!("{:?}", self.types));
            return Err(exists_differently(ctx, what, &name, "component types", have, want));
        }
        set_handle_output(ctx, &self.container, &name, QUEUE_TYPE_NAME, self.as_ref)
    }
}

/// The queue kind a creating node asks for.
fn kind_of(n: &NodeDef) -> Result<QueueKind, Status> {
    Ok(match n.op.trim_end_matches("V2") {
        "PaddingFIFOQueue" => QueueKind::Padding,
        "PriorityQueue" => QueueKind::Priority,
        "RandomShuffleQueue" => {
            let min = n.attr_int("min_after_dequeue")?;
            if min < 0 {
                return Err(n.node_error(format!("min_after_dequeue {min} must be >= 0")));
            }
            QueueKind::Shuffle {
                min_after_dequeue: min as usize,
                seed: n.attr_int("seed")?,
                seed2: n.attr_int("seed2")?,
            }
        }
        _ => QueueKind::Fifo,
    })
}

fn create(n: &NodeDef, as_ref: bool) -> Result<Box<dyn OpKernel>, Status> {
    let (container, name) = container_and_name(n)?;
    let kind = kind_of(n)?;
    let mut types = n.attr_list_type("component_types")?;
    let mut shapes = list_shapes(n, "shapes")?;
    if kind == QueueKind::Priority {
        // The priority is component 0, ahead of the listed ones.
        types.insert(0, DataType::Int64);
        if !shapes.is_empty() {
            shapes.insert(0, vec![]);
        }
    }
    let capacity = n.attr_int("capacity")?;
    // Check the settings now, so a bad queue fails when its kernel is made.
    FifoQueue::of_kind(&name, kind.clone(), types.clone(), shapes.clone(), capacity)
        .map_err(|e| n.node_error(e.message))?;
    let shared = !n.attr_string("shared_name")?.is_empty();
    Ok(Box::new(Create { container, name, types, shapes, capacity, kind, as_ref, shared }))
}

/// The queue named by input 0 (NotFound naming the node if it was never created).
fn queue(ctx: &OpContext) -> Result<Arc<FifoQueue>, Status> {
    named_resource(ctx, "queue")
}

/// `prep` with its errors naming the node (a queue's own errors do not).
fn with_node<T>(prep: impl FnOnce(&OpContext) -> Result<T, Status>) -> impl FnOnce(&OpContext) -> Result<T, Status> {
    move |ctx| prep(ctx).map_err(|e| node_err(ctx, e))
}

struct Enqueue {
    many: bool,
    timeout_ms: i64,
}

impl AsyncOpKernel for Enqueue {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        let prep = |ctx: &OpContext| -> Result<_, Status> {
            let q = queue(ctx)?;
            let comps: Vec<Tensor> = (1..ctx.num_inputs()).map(|i| ctx.input(i)).collect::<Result<_, _>>()?;
            let tuples = if self.many {
                q.split_many(&comps)?
            } else {
                q.validate(&comps)?;
                vec![comps]
            };
            Ok((q, tuples))
        };
        start_waiting(ctx, done, with_node(prep), |(q, tuples), ctx, done| {
            q.enqueue(tuples, ctx, done, timeout_from_ms(self.timeout_ms))
        });
    }
}

#[derive(Clone, Copy, PartialEq)]
enum DeqMode {
    One,
    Many,
    UpTo,
}

struct Dequeue {
    mode: DeqMode,
    types: Vec<DataType>,
    timeout_ms: i64,
}

impl AsyncOpKernel for Dequeue {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        let prep = |ctx: &OpContext| -> Result<_, Status> {
            let q = queue(ctx)?;
            if q.component_types() != self.types.as_slice() {
                return Err(ctx.error(format!(
                    "{} '{}' holds components {:?} but this node expects {:?}",
                    q.kind().type_name(),
                    q.name(),
                    q.component_types(),
                    self.types
                )));
            }
            let n = if self.mode != DeqMode::One {
                let t = ctx.input(1)?;
                if t.dtype() != DataType::Int32 {
                    return Err(ctx.error(format!("n must be an int32 scalar, got a {} tensor", t.dtype())));
                }
                let n = t.scalar_value::<i32>()?;
                if n < 0 {
                    return Err(ctx.error(format!("requested {n} elements; n must be >= 0")));
                }
                n as usize
            } else {
                1
            };
            Ok((q, n))
        };
        let out = match self.mode {
            DeqMode::One => Out::One,
            DeqMode::Many => Out::Many,
            DeqMode::UpTo => Out::UpTo,
        };
        start_waiting(ctx, done, with_node(prep), |(q, n), ctx, done| {
            q.dequeue(n, out, ctx, done, timeout_from_ms(self.timeout_ms))
        });
    }
}

op_kernel! {
    struct Close { cancel_pending_enqueues: bool }
    fn compute(&self, ctx) {
        queue(ctx)?.close(self.cancel_pending_enqueues);
        Ok(())
    }
}

struct Size;

op_kernel! {
    struct IsClosed;
    fn compute(&self, ctx) {
        let closed = queue(ctx)?.is_closed();
        ctx.set_output(0, Tensor::scalar(closed))
    }
}

impl OpKernel for Size {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let n = queue(ctx)?.size();
        ctx.set_output(0, Tensor::scalar(i32::try_from(n).unwrap_or(i32::MAX)))
    }
}

fn enqueue(n: &NodeDef, many: bool) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Enqueue { many, timeout_ms: n.attr_int("timeout_ms")? }))
}

fn dequeue(n: &NodeDef, mode: DeqMode) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Dequeue { mode, types: n.attr_list_type("component_types")?, timeout_ms: n.attr_int("timeout_ms")? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    for op in ["FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2"] {
        r.add_cheap(op, |n| create(n, false));
    }
    for op in ["FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"] {
        r.add_cheap(op, |n| create(n, true));
    }
    for op in ["QueueEnqueueV2", "QueueEnqueue"] {
        r.add(op, |n| enqueue(n, false));
    }
    for op in ["QueueEnqueueManyV2", "QueueEnqueueMany"] {
        r.add(op, |n| enqueue(n, true));
    }
    for op in ["QueueDequeueV2", "QueueDequeue"] {
        r.add(op, |n| dequeue(n, DeqMode::One));
    }
    for op in ["QueueDequeueManyV2", "QueueDequeueMany"] {
        r.add(op, |n| dequeue(n, DeqMode::Many));
    }
    for op in ["QueueDequeueUpToV2", "QueueDequeueUpTo"] {
        r.add(op, |n| dequeue(n, DeqMode::UpTo));
    }
    for op in ["QueueIsClosedV2", "QueueIsClosed"] {
        r.add_cheap(op, |_| Ok(Box::new(IsClosed)));
    }
    for op in ["QueueCloseV2", "QueueClose"] {
        r.add_cheap(op, |n| Ok(Box::new(Close { cancel_pending_enqueues: n.attr_bool("cancel_pending_enqueues")? })));
    }
    for op in ["QueueSizeV2", "QueueSize"] {
        r.add_cheap(op, |_| Ok(Box::new(Size)));
    }
}
