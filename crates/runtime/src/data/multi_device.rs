//! Multi-device iterators (`tf.distribute`'s per-worker datasets, Keras `fit` on
//! ParameterServerStrategy): one pass over a dataset dealt round-robin to the shards of the
//! iterator's devices, element `k` to shard `k % devices`, as TensorFlow's. Each `Init`
//! starts a new pass under a new incarnation id; a shard read with an old id is refused.
//! `MultiDeviceIterator`/`AnonymousMultiDeviceIterator(V3)` create the resource,
//! `MultiDeviceIteratorGetNextFromShard` reads a shard (OUT_OF_RANGE "End of sequence" once
//! the pass and the shard's buffer are empty), string handles and `DeleteMultiDeviceIterator`
//! as for plain iterators.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ferroflow_core::proto::{NodeDef, ResourceHandleProto};
use ferroflow_core::{Code, NodeAttrs, ResourceHandle, Status, Tensor};
use ferroflow_kernels::state::handle::{handle_input, DEFAULT_CONTAINER};
use ferroflow_kernels::{AsyncOpKernel, DoneCallback, OpContext, OpKernel, StepCtx};
use prost::Message;

use super::dataset::{dataset_input, declared, in_node};
use super::iterator::{resource_input, set_element, Delete, IteratorResource};
use super::pool;

/// The type name of multi-device iterators in resource handles.
const TYPE_NAME: &str = "N10tensorflow4data19MultiDeviceIteratorE";

static ANONYMOUS: AtomicU64 = AtomicU64::new(0);

/// The shards of the pass under way.
struct Shards {
    incarnation: i64,
    buffers: Vec<VecDeque<Vec<Tensor>>>,
    /// The shard the next element of the pass goes to.
    next: usize,
    ended: bool,
}

/// A multi-device iterator resource.
pub(crate) struct MultiDeviceIterator {
    devices: Vec<String>,
    inner: IteratorResource,
    shards: Mutex<Shards>,
}

impl MultiDeviceIterator {
    /// Starts a pass over `ds`; returns its incarnation id.
    fn init(&self, ds: &super::dataset::DatasetRef, step: &StepCtx) -> Result<i64, Status> {
        self.inner.start(ds, step)?;
        let mut g = self.shards.lock().unwrap_or_else(|e| e.into_inner());
        g.incarnation += 1;
        g.buffers = vec![VecDeque::new(); self.devices.len()];
        g.next = 0;
        g.ended = false;
        Ok(g.incarnation)
    }

    /// The next element of shard `shard` of pass `incarnation`.
    fn next_of(&self, shard: i32, incarnation: i64, step: &StepCtx, node: &str) -> Result<Vec<Tensor>, Status> {
        let mut g = self.shards.lock().unwrap_or_else(|e| e.into_inner());
        if incarnation != g.incarnation {
            let msg = format!(
                "multi-device iterator incarnation id mismatch: {incarnation} asked, {} under way (was it \
                 re-initialized?)",
                g.incarnation
            );
            return Err(in_node(Status::invalid_argument(msg), node));
        }
        let n = self.devices.len();
        let Some(s) = usize::try_from(shard).ok().filter(|&s| s < n) else {
            let msg = format!("shard {shard} of a multi-device iterator over {n} devices");
            return Err(in_node(Status::invalid_argument(msg), node));
        };
        loop {
            if let Some(e) = g.buffers[s].pop_front() {
                return Ok(e);
            }
            if g.ended {
                return Err(Status::out_of_range("End of sequence"));
            }
            match self.inner.get_next(step, node) {
                Ok(e) => {
                    let k = g.next;
                    g.buffers[k].push_back(e);
                    g.next = (k + 1) % n;
                }
                Err(e) if e.code == Code::OutOfRange => g.ended = true,
                Err(e) => return Err(e),
            }
        }
    }
}

/// The multi-device iterator named by the resource handle at input `i`.
fn lookup(ctx: &OpContext, i: usize) -> Result<Arc<MultiDeviceIterator>, Status> {
    resource_input(ctx, i, "multi-device iterator", "")
}

/// Creates (or finds, by shared name) the resource and outputs its handle.
struct Create {
    container: String,
    shared_name: Option<String>,
    devices: Vec<String>,
    node: NodeDef,
}

impl OpKernel for Create {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let name = match &self.shared_name {
            Some(n) => n.clone(),
            None => format!("AnonymousMultiDeviceIterator{}", ANONYMOUS.fetch_add(1, Ordering::Relaxed)),
        };
        let (types, shapes) = declared(&self.node)?;
        ctx.resources().lookup_or_create(&self.container, &name, || {
            Ok(MultiDeviceIterator {
                devices: self.devices.clone(),
                inner: IteratorResource::new(types, shapes),
                shards: Mutex::new(Shards { incarnation: 0, buffers: Vec::new(), next: 0, ended: true }),
            })
        })?;
        let h = ResourceHandle::new(&ctx.step().device, &self.container, &name, TYPE_NAME);
        ctx.set_output(0, Tensor::scalar(h))?;
        if ctx.num_outputs() > 1 {
            ctx.set_output(1, Tensor::scalar(ferroflow_core::Variant::Empty))?;
        }
        Ok(())
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

/// `MultiDeviceIteratorInit(dataset, iterator, max_buffer_size)`: a new pass.
struct Init;

impl OpKernel for Init {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let ds = dataset_input(ctx, 0)?;
        let it = lookup(ctx, 1)?;
        let id = it.init(&ds, ctx.step()).map_err(|e| in_node(e, &ctx.node().name))?;
        ctx.set_output(0, Tensor::scalar(id))
    }
}

/// `MultiDeviceIteratorGetNextFromShard`: on a data thread.
struct GetNextFromShard;

impl AsyncOpKernel for GetNextFromShard {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        let args = (|| {
            let it = lookup(&ctx, 0)?;
            let shard = ctx.input(1)?.scalar_value::<i32>()?;
            let incarnation = ctx.input(2)?.scalar_value::<i64>()?;
            Ok::<_, Status>((it, shard, incarnation))
        })();
        let (it, shard, incarnation) = match args {
            Ok(a) => a,
            Err(e) => return done(ctx, Err(e)),
        };
        pool::spawn_kernel(ctx, done, move |mut ctx, done| {
            let step = ctx.step().clone();
            let node = ctx.node().name.clone();
            let r = it.next_of(shard, incarnation, &step, &node).and_then(|e| set_element(&mut ctx, &node, e));
            done(ctx, r)
        });
    }
}

/// `MultiDeviceIteratorToStringHandle`.
struct ToString;

impl OpKernel for ToString {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let h = handle_input(ctx, 0)?;
        ctx.set_output(0, Tensor::scalar(h.to_proto().encode_to_vec()))
    }
}

/// `MultiDeviceIteratorFromStringHandle`.
struct FromString;

impl OpKernel for FromString {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let bytes = ctx.input(0)?.scalar_value::<Vec<u8>>()?;
        let p = ResourceHandleProto::decode(bytes.as_slice()).map_err(|e| {
            let msg = format!("could not parse a multi-device iterator string handle ({} bytes): {e}", bytes.len());
            in_node(Status::invalid_argument(msg), &ctx.node().name)
        })?;
        ctx.set_output(0, Tensor::scalar(ResourceHandle::from_proto(&p)))
    }
}

/// The kernel of a multi-device iterator op.
pub(super) fn kernel(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(match n.op.as_str() {
        "AnonymousMultiDeviceIteratorV3" | "AnonymousMultiDeviceIterator" | "MultiDeviceIterator" => {
            let devices = n.attr_list_string("devices")?;
            let container = n.attr_string("container").unwrap_or_default();
            let container = if container.is_empty() { DEFAULT_CONTAINER.to_string() } else { container };
            let shared = n.attr_string("shared_name").unwrap_or_default();
            let shared_name = (n.op == "MultiDeviceIterator" && !shared.is_empty()).then_some(shared);
            Box::new(Create { container, shared_name, devices, node: n.clone() })
        }
        "MultiDeviceIteratorInit" => Box::new(Init),
        "MultiDeviceIteratorGetNextFromShard" => Box::new(GetNextFromShard),
        "MultiDeviceIteratorToStringHandle" => Box::new(ToString),
        "MultiDeviceIteratorFromStringHandle" => Box::new(FromString),
        "DeleteMultiDeviceIterator" => Box::new(Delete::<MultiDeviceIterator>::new()),
        o => return Err(n.node_error(format!("{o} is not a multi-device iterator op"))),
    })
}
