//! LowerBound and UpperBound (row-wise binary search of `values` in `sorted_inputs`) and
//! Bucketize (the bucket of each element among sorted float boundaries).
// `!(a < b)` is meant: NaN compares false, as in TensorFlow's kernels.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use ferroflow_core::proto::attr_value::Value as AttrKind;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::util::kernel_dtype;
use crate::array::util::collect_vec;
use crate::dispatch::dispatch;
use crate::math::elem::Num;
use crate::{KernelRegistry, OpContext, OpKernel};

struct Bound {
    upper: bool,
    out: DataType,
}

/// The first position in `row` whose element is `>= v` (lower) or `> v` (upper).
#[inline]
fn bound<T: Num>(row: &[T], v: T, upper: bool) -> usize {
    if upper {
        row.partition_point(|&e| !(v < e))
    } else {
        row.partition_point(|&e| e < v)
    }
}

impl Bound {
    fn run<T: Num>(&self, ctx: &mut OpContext, s: &Tensor, v: &Tensor) -> Result<(), Status> {
        let (ss, vs) = (s.as_slice::<T>()?, v.as_slice::<T>()?);
        let (b, n, m) = (s.dims()[0], s.dims()[1], v.dims()[1]);
        let mut out = ferroflow_core::alloc::with_capacity::<i64>(v.dims())?;
        for i in 0..b {
            let row = &ss[i * n..(i + 1) * n];
            out.extend(vs[i * m..(i + 1) * m].iter().map(|&x| bound(row, x, self.upper) as i64));
        }
        let t = match self.out {
            DataType::Int32 => {
                Tensor::new(v.shape().clone(), collect_vec(v.dims(), out.into_iter().map(|i| i as i32))?)?
            }
            _ => Tensor::new(v.shape().clone(), out)?,
        };
        ctx.set_output(0, t)
    }
}

impl OpKernel for Bound {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let s = ctx.input(0)?;
        let v = ctx.input(1)?;
        if s.rank() != 2 || v.rank() != 2 {
            return Err(ctx.error(format!(
                "sorted_inputs and values must be 2-D, got shapes {} and {}",
                s.shape(),
                v.shape()
            )));
        }
        if s.dims()[0] != v.dims()[0] {
            return Err(ctx.error("Leading dim_size of both tensors must match."));
        }
        if s.dtype() != v.dtype() {
            return Err(ctx.error(format!("sorted_inputs is {} but values is {}", s.dtype(), v.dtype())));
        }
        if self.out == DataType::Int32 && s.dims()[1] >= i32::MAX as usize {
            return Err(ctx.error("trailing dim_size must less than INT_MAX for int32 output type"));
        }
        dispatch!(s.dtype(), ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| self.run::<T>(ctx, &s, &v))
    }
}

struct Bucketize {
    boundaries: Vec<f64>,
}

impl Bucketize {
    fn run<T: Num>(&self, ctx: &mut OpContext, x: &Tensor) -> Result<(), Status> {
        let b = &self.boundaries;
        let out = collect_vec(
            x.dims(),
            x.as_slice::<T>()?.iter().map(|&v| b.partition_point(|&e| !(v.to_f64() < e)) as i32),
        )?;
        ctx.set_output(0, Tensor::new(x.shape().clone(), out)?)
    }
}

impl OpKernel for Bucketize {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        dispatch!(x.dtype(), ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx, &x))
    }
}

fn bucketize(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    use DataType::*;
    kernel_dtype(n, "T", &[Float, Double, Int32, Int64])?;
    let b = match &n.attr_value("boundaries")?.value {
        Some(AttrKind::List(l)) => l.f.clone(),
        _ => return Err(n.node_error("attr 'boundaries' must be a list(float)")),
    };
    if b.windows(2).any(|w| !(w[0] <= w[1])) {
        return Err(n.node_error("Expected sorted boundaries"));
    }
    Ok(Box::new(Bucketize { boundaries: b.into_iter().map(|v| v as f64).collect() }))
}

fn make_bound(n: &NodeDef, upper: bool) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Bound { upper, out: kernel_dtype(n, "out_type", &[DataType::Int32, DataType::Int64])? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("LowerBound", |n| make_bound(n, false));
    r.add("UpperBound", |n| make_bound(n, true));
    r.add("Bucketize", bucketize);
}
