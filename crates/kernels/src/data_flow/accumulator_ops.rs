//! Accumulator kernels: `ConditionalAccumulator` / `ResourceConditionalAccumulator` create
//! (or find) the accumulator; `[Resource]AccumulatorApplyGradient`,
//! `[Resource]AccumulatorTakeGradient` (asynchronous: it waits without a thread),
//! `[Resource]AccumulatorNumAccumulated`, `[Resource]AccumulatorSetGlobalStep` use it.

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::accumulator::ConditionalAccumulator;
use super::handles::{container_and_name, handle_names, set_handle_output};
use crate::{DoneCallback, KernelRegistry, OpContext, OpKernel};

/// TensorFlow-like type name recorded in accumulator resource handles.
pub const ACCUMULATOR_TYPE_NAME: &str = "N10tensorflow26ConditionalAccumulatorBaseE";

struct Create {
    container: String,
    name: String,
    dtype: DataType,
    shape: Option<Vec<i64>>,
    reduction: String,
    as_ref: bool,
}

impl OpKernel for Create {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let acc = ctx.resources().lookup_or_create(&self.container, &self.name, || {
            ConditionalAccumulator::new(&self.name, self.dtype, self.shape.clone(), &self.reduction)
        })?;
        if acc.dtype() != self.dtype {
            return Err(ctx.error(format!(
                "accumulator '{}' already exists with dtype {} but this node declares {}",
                self.name,
                acc.dtype(),
                self.dtype
            )));
        }
        let (c, n) = (self.container.clone(), self.name.clone());
        set_handle_output(ctx, &c, &n, ACCUMULATOR_TYPE_NAME, self.as_ref)
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

fn create(n: &NodeDef, as_ref: bool) -> Result<Box<dyn OpKernel>, Status> {
    let (container, name) = container_and_name(n)?;
    Ok(Box::new(Create {
        container,
        name,
        dtype: n.attr_type("dtype")?,
        shape: n.attr_shape("shape")?,
        reduction: n.attr_string("reduction_type")?,
        as_ref,
    }))
}

/// The accumulator named by input 0 (NotFound naming the node if it was never created).
pub(crate) fn accumulator(ctx: &OpContext) -> Result<Arc<ConditionalAccumulator>, Status> {
    let (c, n) = handle_names(ctx, 0)?;
    ctx.resources().lookup::<ConditionalAccumulator>(&c, &n).map_err(|e| {
        Status::not_found(format!(
            "node '{}' (op {}): accumulator '{c}/{n}' does not exist (run the op that creates it first): {}",
            ctx.node().name,
            ctx.node().op,
            e.message
        ))
    })
}

fn check_dtype(ctx: &OpContext, acc: &ConditionalAccumulator, dtype: DataType) -> Result<(), Status> {
    if acc.dtype() != dtype {
        return Err(ctx.error(format!(
            "accumulator '{}' holds {} gradients but this node's dtype is {}",
            acc.name(),
            acc.dtype(),
            dtype
        )));
    }
    Ok(())
}

struct ApplyGradient {
    dtype: DataType,
}

impl OpKernel for ApplyGradient {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let acc = accumulator(ctx)?;
        check_dtype(ctx, &acc, self.dtype)?;
        let step = ctx.input(1)?;
        let local_step = match step.dtype() {
            DataType::Int64 => step.scalar_value::<i64>()?,
            d => return Err(ctx.error(format!("local_step must be an int64 scalar, got a {d} tensor"))),
        };
        let grad = ctx.input(2)?;
        acc.apply_gradient(local_step, grad).map_err(|e| e.context(format!("node '{}'", ctx.node().name)))?;
        Ok(())
    }
}

struct TakeGradient {
    dtype: DataType,
}

impl OpKernel for TakeGradient {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        Err(ctx.error("AccumulatorTakeGradient must run asynchronously"))
    }
    fn is_async(&self) -> bool {
        true
    }
    fn compute_async(&self, ctx: OpContext, done: DoneCallback) {
        let prep = (|| {
            let acc = accumulator(&ctx)?;
            check_dtype(&ctx, &acc, self.dtype)?;
            let n = ctx.input(1)?;
            if n.dtype() != DataType::Int32 {
                return Err(ctx.error(format!("num_required must be an int32 scalar, got a {} tensor", n.dtype())));
            }
            Ok((acc, n.scalar_value::<i32>()?))
        })();
        match prep {
            // TensorFlow's op has no timeout: the step's deadline and cancellation bound it.
            Ok((acc, n)) => acc.take_gradient(n, ctx, done, None),
            Err(e) => done(ctx, Err(e)),
        }
    }
}

struct NumAccumulated;

impl OpKernel for NumAccumulated {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let acc = accumulator(ctx)?;
        ctx.set_output(0, Tensor::scalar(acc.num_accumulated()))
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

struct SetGlobalStep;

impl OpKernel for SetGlobalStep {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let acc = accumulator(ctx)?;
        let s = ctx.input(1)?;
        let step = match s.dtype() {
            DataType::Int64 => s.scalar_value::<i64>()?,
            d => return Err(ctx.error(format!("new_global_step must be an int64 scalar, got a {d} tensor"))),
        };
        acc.set_global_step(step);
        Ok(())
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ConditionalAccumulator", |n| create(n, true));
    r.add("ResourceConditionalAccumulator", |n| create(n, false));
    for op in ["AccumulatorApplyGradient", "ResourceAccumulatorApplyGradient"] {
        r.add(op, |n| Ok(Box::new(ApplyGradient { dtype: n.attr_type("dtype")? })));
    }
    for op in ["AccumulatorTakeGradient", "ResourceAccumulatorTakeGradient"] {
        r.add(op, |n| Ok(Box::new(TakeGradient { dtype: n.attr_type("dtype")? })));
    }
    for op in ["AccumulatorNumAccumulated", "ResourceAccumulatorNumAccumulated"] {
        r.add(op, |_| Ok(Box::new(NumAccumulated)));
    }
    for op in ["AccumulatorSetGlobalStep", "ResourceAccumulatorSetGlobalStep"] {
        r.add(op, |_| Ok(Box::new(SetGlobalStep)));
    }
}
