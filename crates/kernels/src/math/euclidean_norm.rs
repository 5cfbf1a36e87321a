//! `EuclideanNorm`: `sqrt(sum(x²))` over `reduction_indices` (TensorFlow's reduction
//! semantics: negative axes, `keep_dims`; no axes still squares and roots
//! each element, so the result is `|x|` as in TensorFlow), for float,
//! double, half and bfloat16 (the narrow types accumulate in float32).

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use super::bcast::map_unary;
use super::common::{kernel_type, typed};
use super::elem::Float;
use super::reduce::{reduced_shape, reduction_mask};
use super::reduce_loops::{reduce_axes, SumR};
use crate::array::util::collect_vec;
use crate::{KernelRegistry, OpContext, OpKernel};

struct EuclideanNorm {
    ty: DataType,
    keep_dims: bool,
}

/// Computes in `T` the norms of the elements `S` (widened by `up`, narrowed by `down`).
fn run<S, T: Float>(k: &EuclideanNorm, ctx: &mut OpContext, up: fn(S) -> T, down: fn(T) -> S) -> Result<(), Status>
where
    S: TensorType + Copy + Sync + Default + Send,
{
    let x = ctx.input(0)?;
    let mask = reduction_mask(ctx, x.rank(), &ctx.input(1)?)?;
    let shape = reduced_shape(x.dims(), &mask, k.keep_dims);
    let sq = map_unary(x.dims(), typed::<S>(ctx, &x)?, |v| {
        let w = up(v);
        w * w
    })?;
    let sums = reduce_axes::<T, SumR>(&sq, x.dims(), &mask)?;
    let out = collect_vec(shape.dims(), sums.into_iter().map(|v| down(v.sqrt())))?;
    ctx.set_output(0, Tensor::new(shape, out)?)
}

impl OpKernel for EuclideanNorm {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        match self.ty {
            DataType::Float => run::<f32, f32>(self, ctx, |v| v, |v| v),
            DataType::Double => run::<f64, f64>(self, ctx, |v| v, |v| v),
            DataType::Half => run::<f16, f32>(self, ctx, f16::to_f32, f16::from_f32),
            _ => run::<bf16, f32>(self, ctx, bf16::to_f32, bf16::from_f32),
        }
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    kernel_type(n, "Tidx", &[DataType::Int32, DataType::Int64])?;
    let ty = kernel_type(n, "T", &[DataType::Float, DataType::Double, DataType::Half, DataType::BFloat16])?;
    Ok(Box::new(EuclideanNorm { ty, keep_dims: n.attr_bool("keep_dims").unwrap_or(false) }))
}

/// Registers the kernel.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("EuclideanNorm", make);
}
