//! Range: `start + i·delta` for `i` in `0..size` (TensorFlow computes each element from
//! `start`, not by accumulation).

use std::cmp::Ordering;

use ferroflow_core::{DataType, Status, Tensor};

use super::util::{check_node_alloc, FnKernel};
use crate::{KernelRegistry, OpContext};

trait RangeNum: ferroflow_core::TensorType + Copy + PartialOrd + std::fmt::Display {
    const ZERO: Self;
    /// Number of elements, or an error message.
    fn count(start: Self, limit: Self, delta: Self) -> Result<usize, String>;
    fn at(start: Self, delta: Self, i: usize) -> Self;
}

macro_rules! range_int {
    ($($t:ty),*) => {$(
        impl RangeNum for $t {
            const ZERO: Self = 0;
            fn count(start: Self, limit: Self, delta: Self) -> Result<usize, String> {
                let span = (limit as i128 - start as i128).abs();
                let d = (delta as i128).abs();
                let n = (span + d - 1) / d;
                usize::try_from(n).map_err(|_| format!("Requires ((limit - start) / delta) <= {}", i64::MAX))
            }
            fn at(start: Self, delta: Self, i: usize) -> Self {
                (start as i128 + i as i128 * delta as i128) as $t
            }
        }
    )*};
}
range_int!(i32, i64);

macro_rules! range_float {
    ($($t:ty),*) => {$(
        impl RangeNum for $t {
            const ZERO: Self = 0.0;
            fn count(start: Self, limit: Self, delta: Self) -> Result<usize, String> {
                let n = ((limit - start) / delta).abs().ceil();
                if n.is_nan() || n as f64 > i64::MAX as f64 {
                    return Err(format!("Requires ((limit - start) / delta) <= {}", i64::MAX));
                }
                Ok(n as usize)
            }
            fn at(start: Self, delta: Self, i: usize) -> Self {
                start + i as $t * delta
            }
        }
    )*};
}
range_float!(f32, f64);

fn range_typed<T: RangeNum>(ctx: &OpContext, s: &Tensor, l: &Tensor, d: &Tensor) -> Result<Tensor, Status> {
    let (start, limit, delta) = (s.scalar_value::<T>()?, l.scalar_value::<T>()?, d.scalar_value::<T>()?);
    if delta == T::ZERO {
        return Err(ctx.error(format!("Requires delta != 0: {delta}")));
    }
    if delta > T::ZERO {
        if !matches!(start.partial_cmp(&limit), Some(Ordering::Less | Ordering::Equal)) {
            return Err(ctx.error(format!("Requires start <= limit when delta > 0: {start}/{limit}")));
        }
    } else if !matches!(start.partial_cmp(&limit), Some(Ordering::Greater | Ordering::Equal)) {
        return Err(ctx.error(format!("Requires start >= limit when delta < 0: {start}/{limit}")));
    }
    let n = T::count(start, limit, delta).map_err(|m| ctx.error(m))?;
    check_node_alloc(ctx, &[n], T::DTYPE)?;
    let mut out = ferroflow_core::alloc::with_capacity::<T>(&[n])?;
    out.extend((0..n).map(|i| T::at(start, delta, i)));
    Ok(Tensor::vec(out))
}

fn range(ctx: &mut OpContext) -> Result<(), Status> {
    let (s, l, d) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    for (name, t) in [("start", &s), ("limit", &l), ("delta", &d)] {
        if t.rank() != 0 {
            return Err(ctx.error(format!("{name} must be a scalar, not shape {}", t.shape())));
        }
    }
    let out = match s.dtype() {
        DataType::Float => range_typed::<f32>(ctx, &s, &l, &d),
        DataType::Double => range_typed::<f64>(ctx, &s, &l, &d),
        DataType::Int32 => range_typed::<i32>(ctx, &s, &l, &d),
        DataType::Int64 => range_typed::<i64>(ctx, &s, &l, &d),
        t => Err(ctx.error(format!("Range does not support {t}"))),
    }?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Range", |_| Ok(FnKernel::expensive(range)));
}
