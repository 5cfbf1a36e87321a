//! Stateful random kernels: `RandomUniform`, `RandomStandardNormal`, `TruncatedNormal`,
//! `RandomUniformInt`. Seeded kernels reproduce TensorFlow's numbers bit for bit; each run
//! of a kernel continues its stream (successive runs give new numbers, as in TensorFlow).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor, TensorType};

use super::distributions::{
    fill, Distribution, NormalF32, NormalF64, TruncatedF32, TruncatedF64, UniformF32, UniformF64, UniformI32,
    UniformI64,
};
use super::guarded::{GuardedPhilox, SAMPLES_PER_OUTPUT};
use crate::{KernelRegistry, OpContext, OpKernel};

/// The scalar bounds `lo` (`minval`) and `hi` (`maxval`) of a uniform integer op as `T`;
/// InvalidArgument unless `minval < maxval` (checked only when `check`).
pub(super) fn int_bounds<T>(ctx: &OpContext, lo: &Tensor, hi: &Tensor, check: bool) -> Result<(T, T), Status>
where
    T: TensorType + PartialOrd + std::fmt::Display,
{
    let (l, h) = (lo.scalar_value::<T>()?, hi.scalar_value::<T>()?);
    if check && l >= h {
        return Err(ctx.error(format!("Need minval < maxval: {l} >= {h}")));
    }
    Ok((l, h))
}

/// Parses a shape input (a vector of int32 or int64), TensorFlow's `MakeShape`.
pub fn shape_from_tensor(ctx: &OpContext, t: &Tensor) -> Result<Shape, Status> {
    if t.rank() != 1 {
        return Err(ctx.error(format!("shape must be a vector of {{int32,int64}}, got shape {}", t.shape())));
    }
    let dims: Vec<i64> = match t.dtype() {
        DataType::Int32 => t.as_slice::<i32>()?.iter().map(|&d| d as i64).collect(),
        DataType::Int64 => t.as_slice::<i64>()?.to_vec(),
        d => return Err(ctx.error(format!("shape must be a vector of {{int32,int64}}, got {d}"))),
    };
    Shape::from_i64(&dims).map_err(|e| ctx.error(e.message))
}

#[derive(Clone, Copy)]
enum Kind {
    Uniform,
    Normal,
    Truncated,
}

struct RandomOp {
    kind: Kind,
    dtype: DataType,
    gen: GuardedPhilox,
}

/// `n` samples in a buffer from the fallible allocation path (the caller checked the budget).
fn generate<D: Distribution>(dist: &D, gen: &GuardedPhilox, n: usize) -> Result<Vec<D::T>, Status>
where
    D::T: ferroflow_core::TensorType,
{
    let mut v = ferroflow_core::alloc::zeroed::<D::T>(&[n])?;
    let base = gen.reserve_outputs(n, SAMPLES_PER_OUTPUT);
    fill(dist, base, &mut v);
    Ok(v)
}

impl OpKernel for RandomOp {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let shape = shape_from_tensor(ctx, &ctx.input(0)?)?;
        ferroflow_core::check_tensor_alloc(shape.dims(), self.dtype).map_err(|e| ctx.error_with(e))?;
        let n = shape.num_elements();
        let out = match (self.kind, self.dtype) {
            (Kind::Uniform, DataType::Float) => Tensor::new(shape, generate(&UniformF32, &self.gen, n)?)?,
            (Kind::Uniform, _) => Tensor::new(shape, generate(&UniformF64, &self.gen, n)?)?,
            (Kind::Normal, DataType::Float) => Tensor::new(shape, generate(&NormalF32, &self.gen, n)?)?,
            (Kind::Normal, _) => Tensor::new(shape, generate(&NormalF64, &self.gen, n)?)?,
            (Kind::Truncated, DataType::Float) => Tensor::new(shape, generate(&TruncatedF32, &self.gen, n)?)?,
            (Kind::Truncated, _) => Tensor::new(shape, generate(&TruncatedF64, &self.gen, n)?)?,
        };
        ctx.set_output(0, out)
    }
}

fn make(node: &NodeDef, kind: Kind) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = node.attr_type("dtype")?;
    if !dtype.is_float() {
        return Err(Status::unimplemented(format!("dtype {dtype} is not supported (float32 and float64 are)"))
            .in_node(&node.name, &node.op));
    }
    Ok(Box::new(RandomOp { kind, dtype, gen: GuardedPhilox::from_node(node)? }))
}

op_kernel! {
    struct RandomUniformInt { gen: GuardedPhilox }
    fn compute(&self, ctx) {
        let shape = shape_from_tensor(ctx, &ctx.input(0)?)?;
        let (lo, hi) = (ctx.input(1)?, ctx.input(2)?);
        if hi.rank() != 0 {
            return Err(ctx.error(format!("maxval must be 0-D, got shape {}", hi.shape())));
        }
        if lo.rank() != 0 {
            return Err(ctx.error(format!("minval must be 0-D, got shape {}", lo.shape())));
        }
        let n = shape.num_elements();
        if lo.dtype() != hi.dtype() {
            return Err(ctx.error(format!("minval is {} but maxval is {}", lo.dtype(), hi.dtype())));
        }
        ferroflow_core::check_tensor_alloc(shape.dims(), lo.dtype()).map_err(|e| ctx.error_with(e))?;
        if n == 0 {
            return ctx.set_output(0, Tensor::zeros(lo.dtype(), shape)?);
        }
        let out = match lo.dtype() {
            DataType::Int32 => {
                let (l, h) = int_bounds::<i32>(ctx, &lo, &hi, true)?;
                let d = UniformI32 { lo: l, range: (h as u32).wrapping_sub(l as u32) };
                Tensor::new(shape, generate(&d, &self.gen, n)?)?
            }
            DataType::Int64 => {
                let (l, h) = int_bounds::<i64>(ctx, &lo, &hi, true)?;
                let d = UniformI64 { lo: l, range: (h as u64).wrapping_sub(l as u64) };
                Tensor::new(shape, generate(&d, &self.gen, n)?)?
            }
            d => return Err(ctx.error(format!("minval and maxval must be int32 or int64, got {d}"))),
        };
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("RandomUniform", |n| make(n, Kind::Uniform));
    r.add("RandomStandardNormal", |n| make(n, Kind::Normal));
    r.add("TruncatedNormal", |n| make(n, Kind::Truncated));
    r.add("RandomUniformInt", |n| Ok(Box::new(RandomUniformInt { gen: GuardedPhilox::from_node(n)? })));
}
