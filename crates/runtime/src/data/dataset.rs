//! What every `tf.data` op shares: a dataset is an immutable description of a sequence of
//! elements (tuples of tensors) carried between nodes in a `DT_VARIANT` scalar; an iterator
//! walks one pass over it. Iterators run on data threads, never on the compute pool, so a
//! stage may block while it waits for a function call or for a prefetching thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::{attr_value, NodeDef};
use ferroflow_core::{shape_proto_dims, DataType, NodeAttrs, Opaque, Status, Tensor, Variant};
use ferroflow_kernels::{CancelToken, OpContext, StepCtx};

use crate::rendezvous::LocalRendezvous;

/// TensorFlow's type name of a dataset variant (also what an error about one names).
pub(crate) const DATASET_TYPE_NAME: &str = "tensorflow::data::WrappedDatasetVariant";

/// One element: a tuple of tensors.
pub(crate) type Element = Vec<Tensor>;

/// Shapes of an element's components (`None`: unknown rank; `-1`: unknown dimension).
pub(crate) type Shapes = Vec<Option<Vec<i64>>>;

/// A sequence of elements; `make_iter` starts a new pass over it.
pub(crate) trait Dataset: Send + Sync + 'static {
    /// A new iterator at the start of the sequence.
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status>;

    /// The number of elements: [`INFINITE`], [`UNKNOWN`] or a count (TensorFlow's
    /// `DatasetCardinality`).
    fn cardinality(&self) -> i64 {
        UNKNOWN
    }
}

/// The cardinality of a dataset that never ends.
pub(crate) const INFINITE: i64 = -1;
/// The cardinality of a dataset whose length is not known before it is read.
pub(crate) const UNKNOWN: i64 = -2;

/// One pass over a dataset.
pub(crate) trait DatasetIter: Send {
    /// The next element, or `None` at the end of the sequence.
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status>;
}

/// A dataset with the component types and shapes its node declared.
pub(crate) struct DatasetRef {
    pub(crate) ds: Arc<dyn Dataset>,
    pub(crate) types: Vec<DataType>,
    pub(crate) shapes: Shapes,
    /// The node that made it (for messages).
    pub(crate) node: String,
    /// Its `tf.data.Options`, serialized: the options of its inputs merged, then its own
    /// (`OptionsDataset`); concatenating serialized messages is protobuf's merge, later
    /// fields winning, as TensorFlow merges options.
    pub(crate) options: Vec<u8>,
}

impl DatasetRef {
    /// The number of elements (see [`Dataset::cardinality`]).
    pub(crate) fn cardinality(&self) -> i64 {
        self.ds.cardinality()
    }

    /// A new pass over the dataset.
    pub(crate) fn iter(&self, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        self.ds.clone().make_iter(ctx)
    }
}

/// The `DT_VARIANT` scalar carrying `d`.
pub(crate) fn dataset_tensor(d: DatasetRef) -> Tensor {
    Tensor::scalar(Variant::Opaque(Opaque { type_name: DATASET_TYPE_NAME, value: Arc::new(d) }))
}

/// The dataset in a `DT_VARIANT` scalar.
pub(crate) fn dataset_of(t: &Tensor, what: &str) -> Result<Arc<DatasetRef>, Status> {
    if t.dtype() != DataType::Variant || t.rank() != 0 {
        return Err(Status::invalid_argument(format!(
            "{what} must be a scalar variant holding a dataset, got a {} tensor of shape {}",
            t.dtype(),
            t.shape()
        )));
    }
    match &t.as_slice::<Variant>()?[0] {
        Variant::Opaque(o) => o.value.clone().downcast::<DatasetRef>().map_err(|_| {
            Status::invalid_argument(format!("{what} must hold a dataset, got a {} variant", o.type_name))
        }),
        v => Err(Status::invalid_argument(format!("{what} must hold a dataset, got {v:?}"))),
    }
}

/// The dataset fed to input `i` of a kernel.
pub(crate) fn dataset_input(ctx: &OpContext, i: usize) -> Result<Arc<DatasetRef>, Status> {
    dataset_of(&ctx.input(i)?, &format!("input {i}")).map_err(|e| ctx.error(e.message))
}

/// The component types and shapes a dataset node declares (`output_types` or
/// `Toutput_types`, and `output_shapes`).
pub(crate) fn declared(n: &NodeDef) -> Result<(Vec<DataType>, Shapes), Status> {
    let types =
        if n.has_attr("output_types") { n.attr_list_type("output_types")? } else { n.attr_list_type("Toutput_types")? };
    let shapes: Shapes = match n.attr.get("output_shapes").and_then(|v| v.value.as_ref()) {
        Some(attr_value::Value::List(l)) => l.shape.iter().map(shape_proto_dims).collect(),
        _ => vec![None; types.len()],
    };
    if shapes.len() != types.len() {
        return Err(n.node_error(format!("declares {} output types but {} output shapes", types.len(), shapes.len())));
    }
    Ok((types, shapes))
}

/// Whether `dims` fits a declared shape.
pub(crate) fn shape_fits(want: &Option<Vec<i64>>, dims: &[usize]) -> bool {
    match want {
        None => true,
        Some(w) => w.len() == dims.len() && w.iter().zip(dims).all(|(&w, &d)| w < 0 || w as usize == d),
    }
}

/// A shape as TensorFlow prints a partial shape: `[2,?]`, `<unknown>`.
pub(crate) fn shape_text(s: &Option<Vec<i64>>) -> String {
    match s {
        None => "<unknown>".into(),
        Some(d) => {
            let p: Vec<String> = d.iter().map(|&x| if x < 0 { "?".into() } else { x.to_string() }).collect();
            format!("[{}]", p.join(","))
        }
    }
}

/// `e` with node `node` named in front (`node 'n': …`) and as its node payload: how a
/// data kernel's error names its node.
pub(crate) fn in_node(e: Status, node: &str) -> Status {
    e.context(format_args!("node '{node}'")).with_node(node)
}

/// Checks that an element has the declared component types and shapes.
pub(crate) fn check_element(e: &Element, types: &[DataType], shapes: &Shapes, who: &str) -> Result<(), Status> {
    if e.len() != types.len() {
        return Err(Status::invalid_argument(format!(
            "{who}: expected an element of {} components, got {}",
            types.len(),
            e.len()
        )));
    }
    for (i, t) in e.iter().enumerate() {
        if t.dtype() != types[i] {
            return Err(Status::invalid_argument(format!(
                "{who}: component {i} has type {} but {} was expected",
                t.dtype(),
                types[i]
            )));
        }
        if let Some(s) = shapes.get(i) {
            if !shape_fits(s, t.dims()) {
                return Err(Status::invalid_argument(format!(
                    "{who}: component {i} has shape {} which is not compatible with {}",
                    t.shape(),
                    shape_text(s)
                )));
            }
        }
    }
    Ok(())
}

/// Where an iterator's stages run: the iterator's own step context (its resources and a
/// cancellation token that fires when the iterator is destroyed; function calls run under
/// it), and the waiting caller's cancellation and deadline, which bound every wait.
#[derive(Clone)]
pub(crate) struct IterCtx {
    pub(crate) own: Arc<StepCtx>,
    pub(crate) caller_cancel: Option<CancelToken>,
    pub(crate) caller_deadline: Option<Instant>,
}

impl IterCtx {
    /// A context for an iterator made by a kernel running in `step`.
    pub(crate) fn for_iterator(step: &StepCtx) -> IterCtx {
        // An iterator outlives the step that made it: its functions get their own per-step
        // container (TensorArrays made inside a map function), cancellation and no deadline.
        let own = StepCtx::new(step.step_id, Arc::new(LocalRendezvous::new()), step.resources.clone(), &step.device);
        let own = Arc::new(StepCtx { session: step.session.clone(), ..own });
        IterCtx { own, caller_cancel: None, caller_deadline: None }
    }

    /// This context with `caller`'s cancellation and deadline bounding its waits.
    pub(crate) fn with_caller(&self, caller: &StepCtx) -> IterCtx {
        IterCtx { own: self.own.clone(), caller_cancel: Some(caller.cancel.clone()), caller_deadline: caller.deadline }
    }

    /// This context without a caller (a background thread's).
    pub(crate) fn background(&self) -> IterCtx {
        IterCtx { own: self.own.clone(), caller_cancel: None, caller_deadline: None }
    }

    /// An error if the iterator or the caller was cancelled or the caller's deadline passed.
    pub(crate) fn check(&self) -> Result<(), Status> {
        if let Some(s) = self.own.cancel.status() {
            return Err(s);
        }
        if let Some(s) = self.caller_cancel.as_ref().and_then(|c| c.status()) {
            return Err(s);
        }
        if self.caller_deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Status::deadline_exceeded("deadline exceeded while waiting for the next element of a dataset"));
        }
        Ok(())
    }

    /// How long one slice of a bounded wait lasts.
    pub(crate) fn wait_slice(&self) -> Duration {
        let slice = Duration::from_millis(50);
        match self.caller_deadline {
            Some(d) => d.saturating_duration_since(Instant::now()).clamp(Duration::from_millis(1), slice),
            None => slice,
        }
    }
}

/// A scalar input of a kernel as i64 (int64 arguments such as `count`, `buffer_size`).
pub(crate) fn scalar_i64(ctx: &OpContext, i: usize, what: &str) -> Result<i64, Status> {
    let t = ctx.input(i)?;
    if t.rank() != 0 {
        return Err(ctx.error(format!("{what} must be a scalar, got shape {}", t.shape())));
    }
    match t.dtype() {
        DataType::Int64 => t.scalar_value::<i64>(),
        DataType::Int32 => Ok(i64::from(t.scalar_value::<i32>()?)),
        d => Err(ctx.error(format!("{what} must be an int64 scalar, got {d}"))),
    }
}

/// A boolean scalar input of a kernel.
pub(crate) fn scalar_bool(ctx: &OpContext, i: usize, what: &str) -> Result<bool, Status> {
    let t = ctx.input(i)?;
    if t.rank() != 0 || t.dtype() != DataType::Bool {
        return Err(ctx.error(format!("{what} must be a bool scalar, got a {} of shape {}", t.dtype(), t.shape())));
    }
    t.scalar_value::<bool>()
}
