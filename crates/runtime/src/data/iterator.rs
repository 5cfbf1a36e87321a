//! Iterators: a resource holding one pass over a dataset. `Iterator`/`IteratorV2` create
//! (or find, by `shared_name`, so sessions can share one) the resource; `MakeIterator`
//! starts a pass over a dataset (the initializer of `make_initializable_iterator`);
//! `OneShotIterator` builds its dataset by calling `dataset_factory` the first time it
//! runs; `IteratorGetNext(Sync)` returns the next element on a data thread (OUT_OF_RANGE
//! "End of sequence" at the end); `IteratorToStringHandle` / `IteratorFromStringHandle(V2)`
//! name an iterator by a serialized resource handle, to feed it to a generic iterator.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ferroflow_core::proto::{FunctionDefLibrary, NodeDef, ResourceHandleProto};
use ferroflow_core::{DataType, NodeAttrs, ResourceHandle, Status, Tensor};
use ferroflow_kernels::state::handle::DEFAULT_CONTAINER;
use ferroflow_kernels::{AsyncOpKernel, DoneCallback, OpContext, OpKernel, StepCtx};
use prost::Message;

use super::dataset::{
    check_element, dataset_input, dataset_of, declared, in_node, DatasetIter, DatasetRef, IterCtx, Shapes,
};
use super::func::start_call;
use super::pool;
use crate::function::FunctionBody;

/// TensorFlow's type name of iterators in resource handles.
pub(crate) const ITERATOR_TYPE_NAME: &str = "N10tensorflow4data16IteratorResourceE";

/// A pass under way and the context its stages run in.
struct Active {
    iter: Box<dyn DatasetIter>,
    ctx: IterCtx,
    /// Component types and shapes of the dataset.
    types: Vec<DataType>,
    shapes: Shapes,
}

impl Drop for Active {
    fn drop(&mut self) {
        // Stops prefetching threads and in-flight calls of the abandoned pass.
        self.ctx.own.cancel.cancel(Status::cancelled("the iterator was re-initialized or destroyed"));
    }
}

/// An iterator resource.
pub(crate) struct IteratorResource {
    /// Declared component types and shapes (empty: not checked, as a string-handle iterator
    /// declared without them).
    types: Vec<DataType>,
    shapes: Shapes,
    active: Mutex<Option<Active>>,
}

impl IteratorResource {
    pub(super) fn new(types: Vec<DataType>, shapes: Shapes) -> IteratorResource {
        IteratorResource { types, shapes, active: Mutex::new(None) }
    }

    /// Starts a pass over `ds` (replacing any pass under way).
    pub(super) fn start(&self, ds: &DatasetRef, step: &StepCtx) -> Result<(), Status> {
        if !self.types.is_empty() && ds.types != self.types {
            return Err(Status::invalid_argument(format!(
                "The iterator's output types {:?} do not match the types {:?} of dataset '{}'",
                self.types, ds.types, ds.node
            )));
        }
        let ctx = IterCtx::for_iterator(step);
        let iter = ds.iter(&ctx.with_caller(step))?;
        let a = Active { iter, ctx, types: ds.types.clone(), shapes: ds.shapes.clone() };
        *self.active.lock().unwrap_or_else(|e| e.into_inner()) = Some(a);
        Ok(())
    }

    fn is_started(&self) -> bool {
        self.active.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// The next element; OUT_OF_RANGE at the end.
    pub(super) fn get_next(&self, step: &StepCtx, node: &str) -> Result<Vec<Tensor>, Status> {
        let mut g = self.active.lock().unwrap_or_else(|e| e.into_inner());
        let Some(a) = g.as_mut() else {
            return Err(Status::failed_precondition(
                "GetNext() failed because the iterator has not been initialized. Ensure that you have run the \
                 initializer operation for this iterator before getting the next element.",
            ));
        };
        let ctx = a.ctx.with_caller(step);
        match a.iter.next(&ctx)? {
            None => Err(Status::out_of_range("End of sequence")),
            Some(e) => {
                let (types, shapes) =
                    if self.types.is_empty() { (&a.types, &a.shapes) } else { (&self.types, &self.shapes) };
                check_element(&e, types, shapes, &format!("node '{node}'")).map_err(|e| e.with_node(node))?;
                Ok(e)
            }
        }
    }
}

fn handle_for(step: &StepCtx, container: &str, name: &str) -> ResourceHandle {
    ResourceHandle::new(&step.device, container, name, ITERATOR_TYPE_NAME)
}

/// The iterator named by the resource handle at input `i`.
fn iterator_input(ctx: &OpContext, i: usize) -> Result<Arc<IteratorResource>, Status> {
    resource_input(ctx, i, "iterator", " (was it created in this session's cluster?)")
}

/// The `R` resource named by the resource handle at input `i`; NOT_FOUND naming the node,
/// the resource (`what`) and the device, then `hint`, when there is none.
pub(super) fn resource_input<R: std::any::Any + Send + Sync>(
    ctx: &OpContext,
    i: usize,
    what: &str,
    hint: &str,
) -> Result<Arc<R>, Status> {
    let h = ferroflow_kernels::state::handle::handle_input(ctx, i)?;
    let c = if h.container.is_empty() { DEFAULT_CONTAINER } else { h.container.as_str() };
    ctx.resources().lookup::<R>(c, &h.name).map_err(|_| {
        let e = Status::not_found(format!("{what} '{}' does not exist on {}{hint}", h.name, ctx.step().device));
        in_node(e, &ctx.node().name)
    })
}

static ANONYMOUS: AtomicU64 = AtomicU64::new(0);

/// How an iterator resource is named.
#[derive(Clone)]
enum Naming {
    /// `shared_name`: one iterator for every session of the task.
    Shared(String),
    /// No `shared_name`: one iterator per session (the node's name within the session),
    /// as TensorFlow's per-session kernel gives it.
    PerSession(String),
    /// A fresh iterator at each run (anonymous iterators).
    Fresh,
}

/// `Iterator`, `IteratorV2`, `AnonymousIterator(V2/V3)`: creates or finds the resource.
struct Create {
    container: String,
    naming: Naming,
    types: Vec<DataType>,
    shapes: Shapes,
}

impl Create {
    fn name(&self, step: &StepCtx) -> String {
        match &self.naming {
            Naming::Shared(n) => n.clone(),
            Naming::PerSession(node) => format!("{node}@session:{}", step.session),
            Naming::Fresh => format!("AnonymousIterator{}", ANONYMOUS.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// Creates (or finds) the iterator and outputs its handle; returns the resource.
    fn run(&self, ctx: &mut OpContext) -> Result<Arc<IteratorResource>, Status> {
        let name = self.name(ctx.step());
        let it = ctx.resources().lookup_or_create(&self.container, &name, || {
            Ok(IteratorResource::new(self.types.clone(), self.shapes.clone()))
        })?;
        if it.types != self.types {
            return Err(ctx.error(format!(
                "iterator '{name}' already exists with output types {:?}, not {:?}",
                it.types, self.types
            )));
        }
        let h = handle_for(ctx.step(), &self.container, &name);
        ctx.set_output(0, Tensor::scalar(h))?;
        if ctx.num_outputs() > 1 {
            // AnonymousIteratorV2's deleter: an empty variant.
            ctx.set_output(1, Tensor::scalar(ferroflow_core::Variant::Empty))?;
        }
        Ok(it)
    }
}

impl OpKernel for Create {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        self.run(ctx).map(|_| ())
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

fn create_op(n: &NodeDef) -> Result<Create, Status> {
    let (types, shapes) = declared(n)?;
    let container = n.attr_string("container").unwrap_or_default();
    let container = if container.is_empty() { DEFAULT_CONTAINER.to_string() } else { container };
    let shared = n.attr_string("shared_name").unwrap_or_default();
    let naming = if n.op.starts_with("Anonymous") {
        Naming::Fresh
    } else if shared.is_empty() {
        Naming::PerSession(n.name.clone())
    } else {
        Naming::Shared(shared)
    };
    Ok(Create { container, naming, types, shapes })
}

/// `MakeIterator(dataset, iterator)`.
struct Make;

impl OpKernel for Make {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let ds = dataset_input(ctx, 0)?;
        let it = iterator_input(ctx, 1)?;
        it.start(&ds, ctx.step()).map_err(|e| in_node(e, &ctx.node().name))
    }
}

/// `IteratorGetNext`, `IteratorGetNextSync`: on a data thread.
struct GetNext;

impl AsyncOpKernel for GetNext {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        get_next_then(ctx, done, |ctx, node, e| e.and_then(|e| set_element(ctx, node, e)));
    }
}

/// Sets node `name`'s outputs from an iterator's next element (or its error).
type SetElement = fn(&mut OpContext, &str, Result<Vec<Tensor>, Status>) -> Result<(), Status>;

/// Takes the next element of input 0's iterator on a data thread and hands it (or the
/// error) to `output`, which sets the node's outputs.
fn get_next_then(ctx: OpContext, done: DoneCallback, output: SetElement) {
    let it = match iterator_input(&ctx, 0) {
        Ok(it) => it,
        Err(e) => return done(ctx, Err(e)),
    };
    pool::spawn_kernel(ctx, done, move |mut ctx, done| {
        let step = ctx.step().clone();
        let node = ctx.node().name.clone();
        let r = output(&mut ctx, &node, it.get_next(&step, &node));
        done(ctx, r)
    });
}

/// Puts an iterator's element into the node's outputs, one component each.
pub(super) fn set_element(ctx: &mut OpContext, node: &str, e: Vec<Tensor>) -> Result<(), Status> {
    if e.len() != ctx.num_outputs() {
        let msg = format!("the iterator yields {} components, the node has {} outputs", e.len(), ctx.num_outputs());
        return Err(in_node(Status::invalid_argument(msg), node));
    }
    e.into_iter().enumerate().try_for_each(|(i, t)| ctx.set_output(i, t))
}

/// `IteratorGetNextAsOptional`: the next element as an optional, empty at the end (what
/// Keras's `steps_per_execution` loops read).
struct GetNextAsOptional;

impl AsyncOpKernel for GetNextAsOptional {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        get_next_then(ctx, done, |ctx, _, e| {
            let v = match e {
                Ok(e) => Some(e),
                Err(e) if e.code == ferroflow_core::Code::OutOfRange => None,
                Err(e) => return Err(e),
            };
            ctx.set_output(0, Tensor::scalar(ferroflow_kernels::data_flow::optional::optional_variant(v)))
        });
    }
}

/// `OneShotIterator`: the dataset comes from calling `dataset_factory` once.
struct OneShot {
    create: Create,
    factory: Arc<FunctionBody>,
    /// Serializes the first run (the factory call).
    init: Arc<Mutex<()>>,
}

impl AsyncOpKernel for OneShot {
    fn start(&self, mut ctx: OpContext, done: DoneCallback) {
        let it = match self.create.run(&mut ctx) {
            Ok(it) => it,
            Err(e) => return done(ctx, Err(e)),
        };
        if it.is_started() {
            return done(ctx, Ok(()));
        }
        let (factory, init) = (self.factory.clone(), self.init.clone());
        pool::spawn_kernel(ctx, done, move |ctx, done| {
            let r = (|| {
                let _g = init.lock().unwrap_or_else(|e| e.into_inner());
                if it.is_started() {
                    return Ok(());
                }
                let step = ctx.step().clone();
                let ictx = IterCtx::for_iterator(&step).with_caller(&step);
                let out = start_call(&factory, &step, vec![]).wait(&ictx)?;
                let [d] = out.as_slice() else {
                    return Err(Status::invalid_argument("dataset_factory must return one dataset"));
                };
                it.start(&*dataset_of(d, "dataset_factory's result")?, &step)
            })();
            done(ctx, r)
        });
    }
}

/// `IteratorToStringHandle`: the handle, serialized.
struct ToString;

impl OpKernel for ToString {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let h = ferroflow_kernels::state::handle::handle_input(ctx, 0)?;
        ctx.set_output(0, Tensor::scalar(h.to_proto().encode_to_vec()))
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

/// `IteratorFromStringHandle(V2)`: a serialized handle back to a resource handle, checked
/// against the declared types when they are given.
struct FromString {
    types: Vec<DataType>,
}

impl OpKernel for FromString {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        if t.dtype() != DataType::String || t.rank() != 0 {
            return Err(ctx.error("string_handle must be a string scalar"));
        }
        let bytes = t.scalar_value::<Vec<u8>>()?;
        let p = ResourceHandleProto::decode(bytes.as_slice()).map_err(|e| {
            let msg = format!("could not parse an iterator string handle ({} bytes): {e}", bytes.len());
            in_node(Status::invalid_argument(msg), &ctx.node().name)
        })?;
        let h = ResourceHandle::from_proto(&p);
        ctx.set_output(0, Tensor::scalar(h))?;
        if !self.types.is_empty() {
            let c = if p.container.is_empty() { DEFAULT_CONTAINER } else { p.container.as_str() };
            if let Ok(it) = ctx.resources().lookup::<IteratorResource>(c, &p.name) {
                if !it.types.is_empty() && it.types != self.types {
                    let msg = format!(
                        "the iterator's output types {:?} do not match the expected types {:?}",
                        it.types, self.types
                    );
                    return Err(in_node(Status::invalid_argument(msg), &ctx.node().name));
                }
            }
        }
        Ok(())
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

/// `DeleteIterator`, `DeleteMultiDeviceIterator`: drops the `R` resource of the handle at
/// input 0.
pub(super) struct Delete<R>(std::marker::PhantomData<fn() -> R>);

impl<R> Delete<R> {
    pub(super) fn new() -> Self {
        Delete(std::marker::PhantomData)
    }
}

impl<R: std::any::Any + Send + Sync> OpKernel for Delete<R> {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let h = ferroflow_kernels::state::handle::handle_input(ctx, 0)?;
        let c = if h.container.is_empty() { DEFAULT_CONTAINER } else { h.container.as_str() };
        ctx.resources().delete::<R>(c, &h.name)
    }
}

/// The kernel of an iterator op.
pub(super) fn kernel(n: &NodeDef, lib: Option<&FunctionDefLibrary>, depth: usize) -> Result<Box<dyn OpKernel>, Status> {
    Ok(match n.op.as_str() {
        "Iterator" | "IteratorV2" | "AnonymousIterator" | "AnonymousIteratorV2" | "AnonymousIteratorV3" => {
            Box::new(create_op(n)?)
        }
        "MakeIterator" => Box::new(Make),
        "IteratorGetNext" | "IteratorGetNextSync" => Box::new(GetNext),
        "IteratorGetNextAsOptional" => Box::new(GetNextAsOptional),
        "IteratorToStringHandle" => Box::new(ToString),
        "IteratorFromStringHandle" | "IteratorFromStringHandleV2" => {
            Box::new(FromString { types: n.attr_list_type("output_types").unwrap_or_default() })
        }
        "DeleteIterator" => Box::new(Delete::<IteratorResource>::new()),
        "OneShotIterator" => {
            use ferroflow_core::proto::attr_value::Value as AV;
            let fname = match n.attr_value("dataset_factory")?.value.as_ref() {
                Some(AV::Func(f)) => f.name.clone(),
                _ => return Err(n.node_error("attr 'dataset_factory' must name a function")),
            };
            let factory = FunctionBody::instantiate(&fname, lib, depth)?;
            if factory.ret_types != [DataType::Variant] || !factory.arg_types.is_empty() {
                return Err(n.node_error(format!(
                    "dataset_factory '{fname}' must take nothing and return one variant, it takes {:?} and returns {:?}",
                    factory.arg_types, factory.ret_types
                )));
            }
            Box::new(OneShot { create: create_op(n)?, factory: Arc::new(factory), init: Arc::new(Mutex::new(())) })
        }
        o => return Err(n.node_error(format!("{o} is not an iterator op"))),
    })
}
