//! HistogramFixedWidth (`tf.histogram_fixed_width`): counts of `values` in `nbins` equal
//! bins spanning `value_range = [lo, hi]`. A value's bin is
//! `min(⌊(max(x, lo) - lo) / ((hi - lo) / nbins)⌋, nbins - 1)` computed in f64, so values
//! below `lo` count in the first bin and values at or above `hi` in the last, as in
//! TensorFlow. A NaN value counts in the first bin.

use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use crate::array::util::{check_alloc, FnKernel};
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext};

/// The bin index of every value.
pub fn bins(values: &[f64], lo: f64, hi: f64, nbins: usize) -> Vec<usize> {
    let step = (hi - lo) / nbins as f64;
    let last = (nbins - 1) as f64;
    values
        .iter()
        .map(|&x| {
            let b = ((x.max(lo) - lo) / step).min(last);
            // `as` saturates, and a NaN goes to 0.
            b as usize
        })
        .collect()
}

/// f64 views of the value types (int64 as TensorFlow's cast does: to the nearest double).
trait AsF64: TensorType + Copy {
    fn f(self) -> f64;
}
impl AsF64 for f32 {
    fn f(self) -> f64 {
        self as f64
    }
}
impl AsF64 for f64 {
    fn f(self) -> f64 {
        self
    }
}
impl AsF64 for i32 {
    fn f(self) -> f64 {
        self as f64
    }
}
impl AsF64 for i64 {
    fn f(self) -> f64 {
        self as f64
    }
}

/// The bin of every value.
fn value_bins<T: AsF64>(ctx: &OpContext, values: &Tensor, range: &Tensor, nbins: usize) -> Result<Vec<usize>, Status> {
    let r = range.as_slice::<T>()?;
    let (lo, hi) = (r[0], r[1]);
    let (lo_f, hi_f) = (lo.f(), hi.f());
    if lo_f.is_nan() || hi_f.is_nan() || lo_f >= hi_f {
        return Err(ctx
            .error(format!("value_range should satisfy value_range[0] < value_range[1], but got '[{lo_f}, {hi_f}]'")));
    }
    let v: Vec<f64> = values.as_slice::<T>()?.iter().map(|x| x.f()).collect();
    Ok(bins(&v, lo_f, hi_f, nbins))
}

/// `nbins` counts of the values in `bins`, counted in the output type (no second pass).
fn count<C: ferroflow_core::TensorType + Copy + Default + std::ops::AddAssign + From<u8>>(
    bins: &[usize],
    nbins: usize,
) -> Result<Tensor, Status> {
    let mut out = ferroflow_core::alloc::zeroed::<C>(&[nbins])?;
    for &b in bins {
        out[b] += C::from(1u8);
    }
    Tensor::new(vec![nbins], out)
}

fn histogram(ctx: &mut OpContext) -> Result<(), Status> {
    let values = ctx.input(0)?;
    let range = ctx.input(1)?;
    let nbins_t = ctx.input(2)?;
    if range.dims() != [2] {
        return Err(ctx.error(format!("value_range should be a vector of 2 elements, but got shape {}", range.shape())));
    }
    if nbins_t.rank() != 0 {
        return Err(ctx.error(format!("nbins should be a scalar, but got shape {}", nbins_t.shape())));
    }
    let nbins = nbins_t.scalar_value::<i32>()?;
    if nbins <= 0 {
        return Err(ctx.error(format!("nbins should be a positive number, but got '{nbins}'")));
    }
    if range.dtype() != values.dtype() {
        return Err(ctx.error(format!(
            "values ({}) and value_range ({}) must have one type",
            values.dtype(),
            range.dtype()
        )));
    }
    let nbins = nbins as usize;
    let out_type = ctx.node().attr.get("dtype").map(|_| ctx.node().attr_type("dtype")).transpose()?;
    let out_type = out_type.unwrap_or(DataType::Int32);
    if !matches!(out_type, DataType::Int32 | DataType::Int64) {
        return Err(ctx.error(format!("output dtype must be int32 or int64, got {out_type}")));
    }
    check_alloc(&[nbins], out_type).map_err(|e| ctx.error_with(e))?;
    let b = dispatch!(values.dtype(), ctx, [f32, f64, i32, i64], |T| value_bins::<T>(ctx, &values, &range, nbins))?;
    let out = if out_type == DataType::Int64 { count::<i64>(&b, nbins)? } else { count::<i32>(&b, nbins)? };
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("HistogramFixedWidth", |_| Ok(FnKernel::expensive(histogram)));
}
