//! Accumulator kernels: `ConditionalAccumulator` / `ResourceConditionalAccumulator` /
//! `SparseConditionalAccumulator` create (or find) the accumulator;
//! `[Resource]AccumulatorApplyGradient` / `SparseAccumulatorApplyGradient`,
//! `[Resource]AccumulatorTakeGradient` / `SparseAccumulatorTakeGradient` (asynchronous: they
//! wait without a thread) use it, and `[Resource]AccumulatorNumAccumulated`,
//! `[Resource]AccumulatorSetGlobalStep` serve both kinds.

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use super::accumulator::{AccumulatorKind, ConditionalAccumulator};
use super::handles::{container_and_name, exists_differently, named_resource, set_handle_output};
use super::sparse_accumulator::SparseGradient;
use super::waiters::start_waiting;
use crate::array::util::node_context;
use crate::{AsyncOpKernel, DoneCallback, KernelRegistry, OpContext, OpKernel};

/// TensorFlow-like type name recorded in accumulator resource handles.
pub const ACCUMULATOR_TYPE_NAME: &str = "N10tensorflow26ConditionalAccumulatorBaseE";

op_kernel! {
    struct Create {
        container: String,
        name: String,
        dtype: DataType,
        shape: Option<Vec<i64>>,
        reduction: String,
        as_ref: bool,
        kind: AccumulatorKind,
    }
    fn compute(&self, ctx) {
        let acc = ctx.resources().lookup_or_create(&self.container, &self.name, || {
            ConditionalAccumulator::new(&self.name, self.kind, self.dtype, self.shape.clone(), &self.reduction)
        })?;
        if acc.kind() != self.kind {
            return Err(ctx.error(format!(
                "accumulator '{}' already exists, created by {}",
                self.name,
                acc.kind().op_name()
            )));
        }
        if acc.dtype() != self.dtype {
            return Err(exists_differently(ctx, "accumulator", &self.name, "dtype", acc.dtype(), self.dtype));
        }
        set_handle_output(ctx, &self.container, &self.name, ACCUMULATOR_TYPE_NAME, self.as_ref)
    }
}

fn create(n: &NodeDef, as_ref: bool, kind: AccumulatorKind) -> Result<Box<dyn OpKernel>, Status> {
    let (container, name) = container_and_name(n)?;
    let dtype = n.attr_type("dtype")?;
    if kind == AccumulatorKind::Sparse && !matches!(dtype, DataType::Half | DataType::Float | DataType::Double) {
        // TensorFlow's answer too (InvalidArgument): its kernel is registered for these only.
        return Err(node_context(
            &n.name,
            Status::invalid_argument(format!(
                "no OpKernel was registered to support Op 'SparseConditionalAccumulator' with dtype {dtype} \
                 (registered: float16, float32, float64)"
            )),
        ));
    }
    Ok(Box::new(Create {
        container,
        name,
        dtype,
        shape: n.attr_shape("shape")?,
        reduction: n.attr_string("reduction_type")?,
        as_ref,
        kind,
    }))
}

/// The accumulator named by input 0 (NotFound naming the node if it was never created).
pub(crate) fn accumulator(ctx: &OpContext) -> Result<Arc<ConditionalAccumulator>, Status> {
    named_resource(ctx, "accumulator")
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

op_kernel! {
    struct ApplyGradient { dtype: DataType }
    fn compute(&self, ctx) {
        let acc = accumulator(ctx)?;
        check_dtype(ctx, &acc, self.dtype)?;
        let local_step = scalar_input::<i64>(ctx, 1, "local_step")?;
        let grad = ctx.input(2)?;
        acc.apply_gradient(local_step, grad).map_err(|e| node_context(&ctx.node().name, e))?;
        Ok(())
    }
}

/// The int32 or int64 scalar input `i` (`what` names it in errors, with TensorFlow's
/// wording).
fn scalar_input<T: TensorType>(ctx: &OpContext, i: usize, what: &str) -> Result<T, Status> {
    let t = ctx.input(i)?;
    if t.dtype() != T::DTYPE {
        return Err(ctx.error(format!("{what} must be an {} scalar, got a {} tensor", T::DTYPE, t.dtype())));
    }
    if t.rank() != 0 {
        return Err(ctx.error(format!("Argument {what} must be scalar, but had bad shape {}", t.shape())));
    }
    t.scalar_value::<T>()
}

op_kernel! {
    struct SparseApplyGradient { dtype: DataType, has_known_shape: bool }
    fn compute(&self, ctx) {
        let acc = accumulator(ctx)?;
        acc.expect_kind(AccumulatorKind::Sparse, "SparseAccumulatorApplyGradient").map_err(|e| ctx.error(e.message))?;
        check_dtype(ctx, &acc, self.dtype)?;
        let local_step = scalar_input::<i64>(ctx, 1, "local_step")?;
        let int64 = |i: usize, what: &str| {
            let t = ctx.input(i)?;
            if t.dtype() != DataType::Int64 {
                return Err(ctx.error(format!("{what} must be int64, got a {} tensor", t.dtype())));
            }
            Ok(t)
        };
        let grad = SparseGradient {
            indices: int64(2, "gradient_indices")?,
            values: ctx.input(3)?,
            shape: if self.has_known_shape { Some(int64(4, "gradient_shape")?) } else { None },
        };
        acc.apply_sparse_gradient(local_step, grad).map_err(|e| node_context(&ctx.node().name, e))?;
        Ok(())
    }
}

struct TakeGradient {
    dtype: DataType,
    kind: AccumulatorKind,
}

impl AsyncOpKernel for TakeGradient {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        let prep = |ctx: &OpContext| -> Result<_, Status> {
            let acc = accumulator(ctx)?;
            acc.expect_kind(self.kind, &ctx.node().op).map_err(|e| ctx.error(e.message))?;
            check_dtype(ctx, &acc, self.dtype)?;
            Ok((acc, scalar_input::<i32>(ctx, 1, "num_required")?))
        };
        // TensorFlow's op has no timeout: the step's deadline and cancellation bound it.
        start_waiting(ctx, done, prep, |(acc, n), ctx, done| acc.take_gradient(n, ctx, done, None));
    }
}

op_kernel! {
    struct NumAccumulated;
    fn compute(&self, ctx) {
        let acc = accumulator(ctx)?;
        ctx.set_output(0, Tensor::scalar(acc.num_accumulated()))
    }
}

op_kernel! {
    struct SetGlobalStep;
    fn compute(&self, ctx) {
        let acc = accumulator(ctx)?;
        acc.set_global_step(scalar_input::<i64>(ctx, 1, "new_global_step")?);
        Ok(())
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    use AccumulatorKind::{Dense, Sparse};
    r.add_cheap("ConditionalAccumulator", |n| create(n, true, Dense));
    r.add_cheap("ResourceConditionalAccumulator", |n| create(n, false, Dense));
    r.add_cheap("SparseConditionalAccumulator", |n| create(n, true, Sparse));
    for op in ["AccumulatorApplyGradient", "ResourceAccumulatorApplyGradient"] {
        r.add(op, |n| Ok(Box::new(ApplyGradient { dtype: n.attr_type("dtype")? })));
    }
    r.add("SparseAccumulatorApplyGradient", |n| {
        Ok(Box::new(SparseApplyGradient {
            dtype: n.attr_type("dtype")?,
            has_known_shape: n.attr_bool("has_known_shape")?,
        }))
    });
    for op in ["AccumulatorTakeGradient", "ResourceAccumulatorTakeGradient"] {
        r.add(op, |n| Ok(Box::new(TakeGradient { dtype: n.attr_type("dtype")?, kind: Dense })));
    }
    r.add("SparseAccumulatorTakeGradient", |n| {
        Ok(Box::new(TakeGradient { dtype: n.attr_type("dtype")?, kind: Sparse }))
    });
    for op in ["AccumulatorNumAccumulated", "ResourceAccumulatorNumAccumulated"] {
        r.add_cheap(op, |_| Ok(Box::new(NumAccumulated)));
    }
    for op in ["AccumulatorSetGlobalStep", "ResourceAccumulatorSetGlobalStep"] {
        r.add_cheap(op, |_| Ok(Box::new(SetGlobalStep)));
    }
}
