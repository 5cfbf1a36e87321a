//! ClipByValue, BroadcastArgs, LinSpace and EnsureShape.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::util::kernel_dtype;
use crate::array::util::{
    check_alloc, collect_vec, dims_str, index_scalar, index_tensor, index_vec, shape_input, FnKernel,
};
use crate::dispatch::dispatch;
use crate::math::elem::{Float, Num};
use crate::{KernelRegistry, OpContext, OpKernel};

fn clip_typed<T: Num>(x: &Tensor, lo: &Tensor, hi: &Tensor) -> Result<Tensor, Status> {
    let (xs, ls, hs) = (x.as_slice::<T>()?, lo.as_slice::<T>()?, hi.as_slice::<T>()?);
    let pick = |s: &[T], i: usize| if s.len() == 1 { s[0] } else { s[i] };
    let out: Vec<T> = if ls.len() == 1 && hs.len() == 1 {
        let (l, h) = (ls[0], hs[0]);
        collect_vec(x.dims(), xs.iter().map(|&v| v.tf_min(h).tf_max(l)))?
    } else {
        collect_vec(x.dims(), xs.iter().enumerate().map(|(i, &v)| v.tf_min(pick(hs, i)).tf_max(pick(ls, i))))?
    };
    Tensor::new(x.shape().clone(), out)
}

fn clip_by_value(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let lo = ctx.input(1)?;
    let hi = ctx.input(2)?;
    let ok = |t: &Tensor| t.rank() == 0 || t.shape() == x.shape();
    if !ok(&lo) || !ok(&hi) {
        return Err(ctx.error(format!(
            "clip_value_min and clip_value_max must be either of the same shape as input, or a scalar. input shape: {} clip_value_min shape: {} clip_value_max shape: {}",
            dims_str(x.dims()),
            dims_str(lo.dims()),
            dims_str(hi.dims())
        )));
    }
    if lo.dtype() != x.dtype() || hi.dtype() != x.dtype() {
        return Err(ctx.error("clip_value_min and clip_value_max must have the input's dtype"));
    }
    let out =
        dispatch!(x.dtype(), ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| clip_typed::<T>(&x, &lo, &hi))?;
    ctx.set_output(0, out)
}

fn broadcast_args(ctx: &mut OpContext) -> Result<(), Status> {
    let a = ctx.input(0)?;
    let b = ctx.input(1)?;
    if a.rank() != 1 || b.rank() != 1 {
        return Err(ctx.error(format!("In[0] and In[1] must be vectors, got shapes {} and {}", a.shape(), b.shape())));
    }
    let (x, y) = (index_vec(&a).map_err(|e| ctx.error(e.message))?, index_vec(&b).map_err(|e| ctx.error(e.message))?);
    let n = x.len().max(y.len());
    let mut out = vec![0i64; n];
    let pad = |v: &[i64], i: usize| if i + v.len() >= n { v[i + v.len() - n] } else { 1 };
    let bad = || {
        let s = |v: &[i64]| format!("[{}]", v.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","));
        ctx.error(format!("Incompatible shapes: {} vs. {}", s(&x), s(&y)))
    };
    for (i, o) in out.iter_mut().enumerate() {
        let (p, q) = (pad(&x, i), pad(&y, i));
        if p < 0 || q < 0 {
            return Err(bad());
        }
        *o = match (p, q) {
            (p, q) if p == q => p,
            (1, q) => q,
            (p, 1) => p,
            _ => return Err(bad()),
        };
    }
    ctx.set_output(0, index_tensor(a.dtype(), vec![n], out).map_err(|e| ctx.error(e.message))?)
}

fn lin_typed<T: Float>(ctx: &mut OpContext, start: &Tensor, stop: &Tensor, n: usize) -> Result<(), Status> {
    let (a, b) = (start.as_slice::<T>()?[0], stop.as_slice::<T>()?[0]);
    let out: Vec<T> = if n == 1 {
        vec![a]
    } else {
        let step = (b - a) / T::from_usize(n - 1);
        collect_vec(&[n], (0..n).map(|i| if i == n - 1 { b } else { a + step * T::from_usize(i) }))?
    };
    ctx.set_output(0, Tensor::new(vec![n], out)?)
}

fn lin_space(ctx: &mut OpContext) -> Result<(), Status> {
    let start = ctx.input(0)?;
    let stop = ctx.input(1)?;
    let num = ctx.input(2)?;
    for (what, t) in [("start", &start), ("stop", &stop), ("num", &num)] {
        if t.rank() != 0 {
            return Err(ctx.error(format!("{what} must be a scalar, not shape {}", t.shape())));
        }
    }
    let n = index_scalar(&num).map_err(|e| ctx.error(e.message))?;
    if n <= 0 {
        return Err(ctx.error(format!("Requires num > 0: {n}")));
    }
    if stop.dtype() != start.dtype() {
        return Err(ctx.error("start and stop must have the same dtype"));
    }
    check_alloc(&[n as usize], start.dtype()).map_err(|e| ctx.error_with(e))?;
    dispatch!(start.dtype(), ctx, [f32, f64], |T| lin_typed::<T>(ctx, &start, &stop, n as usize))
}

struct EnsureShape {
    shape: Option<Vec<i64>>,
}

impl OpKernel for EnsureShape {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        if let Some(want) = &self.shape {
            let ok = want.len() == x.rank() && want.iter().zip(x.dims()).all(|(&w, &d)| w < 0 || w as usize == d);
            if !ok {
                let w: Vec<String> = want.iter().map(|&d| if d < 0 { "?".into() } else { d.to_string() }).collect();
                return Err(ctx.error(format!(
                    "Shape of tensor {} {} is not compatible with expected shape [{}].",
                    ctx.node().input.first().map(String::as_str).unwrap_or(""),
                    dims_str(x.dims()),
                    w.join(",")
                )));
            }
        }
        ctx.set_output(0, x)
    }
    fn is_expensive(&self) -> bool {
        false
    }
}

fn ensure_shape(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(EnsureShape { shape: n.attr_shape("shape")? }))
}

op_kernel! {
    struct Empty { dtype: DataType }
    fn compute(&self, ctx) {
        let shape = shape_input(ctx, 0, |s| format!("shape must be a vector of int32, got shape {}", s.shape()))?;
        check_alloc(shape.dims(), self.dtype).map_err(|e| ctx.error_with(e))?;
        ctx.set_output(0, Tensor::zeros(self.dtype, shape)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Empty", |n| Ok(Box::new(Empty { dtype: n.attr_type("dtype")? })));
    r.add("ClipByValue", |_| Ok(FnKernel::expensive(clip_by_value)));
    r.add("BroadcastArgs", |n| {
        kernel_dtype(n, "T", &[DataType::Int32, DataType::Int64])?;
        Ok(FnKernel::cheap(broadcast_args))
    });
    r.add("LinSpace", |n| {
        kernel_dtype(n, "T", &[DataType::Float, DataType::Double])?;
        Ok(FnKernel::expensive(lin_space))
    });
    r.add("EnsureShape", ensure_shape);
}
