//! `tf.experimental.Optional` values: `OptionalFromValue`, `OptionalNone`,
//! `OptionalHasValue`, `OptionalGetValue`. TensorFlow's `tf.cond` (cond_v2) gradients pass the
//! forward branch's intermediate values to the gradient branch as optionals: the branch
//! that ran gives `OptionalFromValue`, the other `OptionalNone`. An optional is a scalar
//! variant that stays on the task that made it.

use std::sync::Arc;

use ferroflow_core::{Opaque, Status, Tensor, Variant};

use crate::array::util::node_context;
use crate::{KernelRegistry, OpContext, OpKernel};

/// TensorFlow's type name of an optional.
pub const OPTIONAL_TYPE_NAME: &str = "tensorflow::data::OptionalVariant";

/// What an optional holds: its components, or nothing.
struct OptionalValue(Option<Vec<Tensor>>);

fn optional(v: Option<Vec<Tensor>>) -> Tensor {
    Tensor::scalar(optional_variant(v))
}

/// An optional holding `v` (or nothing).
pub fn optional_variant(v: Option<Vec<Tensor>>) -> Variant {
    Variant::Opaque(Opaque { type_name: OPTIONAL_TYPE_NAME, value: Arc::new(OptionalValue(v)) })
}

/// What `o` holds if it is an optional: `Some(None)` for an empty one, `None` for another variant.
pub(crate) fn optional_components(o: &Opaque) -> Option<Option<Vec<Tensor>>> {
    if o.type_name != OPTIONAL_TYPE_NAME {
        return None;
    }
    o.value.downcast_ref::<OptionalValue>().map(|v| v.0.clone())
}

/// The components of the optional input 0 (None for an empty optional).
fn components(ctx: &OpContext) -> Result<Option<Vec<Tensor>>, Status> {
    let t = ctx.input(0)?;
    if t.rank() != 0 {
        return Err(ctx.error(format!("optional input must be a scalar variant tensor, got shape {}", t.shape())));
    }
    match &t.as_slice::<Variant>()?[0] {
        Variant::Opaque(o) if o.type_name == OPTIONAL_TYPE_NAME => match o.value.downcast_ref::<OptionalValue>() {
            Some(v) => Ok(v.0.clone()),
            None => Err(ctx.error("input tensor must be an optional variant tensor")),
        },
        // A default variant is how an unset gradient of an optional arrives: nothing.
        Variant::Empty => Ok(None),
        _ => Err(ctx.error("input tensor must be an optional variant tensor")),
    }
}

struct FromValue;
impl OpKernel for FromValue {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let v = (0..ctx.num_inputs()).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>()?;
        ctx.set_output(0, optional(Some(v)))
    }
}

struct NoneOp;
impl OpKernel for NoneOp {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        ctx.set_output(0, optional(None))
    }
}

struct HasValue;
impl OpKernel for HasValue {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let has = components(ctx)?.is_some();
        ctx.set_output(0, Tensor::scalar(has))
    }
}

struct GetValue;
impl OpKernel for GetValue {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let Some(v) = components(ctx)? else {
            return Err(node_context(
                &ctx.node().name,
                Status::invalid_argument("The given optional does not have a value."),
            ));
        };
        let want = ctx.num_outputs();
        if v.len() != want {
            return Err(ctx.error(format!("The optional has {} components, but {want} outputs were expected", v.len())));
        }
        for (i, t) in v.into_iter().enumerate() {
            ctx.set_output(i, t)?;
        }
        Ok(())
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("OptionalFromValue", |_| Ok(Box::new(FromValue)));
    r.add_cheap("OptionalNone", |_| Ok(Box::new(NoneOp)));
    r.add_cheap("OptionalHasValue", |_| Ok(Box::new(HasValue)));
    r.add_cheap("OptionalGetValue", |_| Ok(Box::new(GetValue)));
}
