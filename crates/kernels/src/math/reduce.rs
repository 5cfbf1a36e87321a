//! Reductions Sum, Mean, Max, Min, Prod over `reduction_indices` (scalar or vector of
//! int32/int64, negative axes allowed, empty = identity), with `keep_dims`.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor, TensorType, C128, C64};

use super::bcast::map_unary;
use super::common::{kernel_type, typed};
use super::dtypes::{NUMBER, REAL};
use super::elem::Num;
use super::reduce_loops::{reduce_axes, MaxR, MinR, ProdR, Reducer, SumR};
use crate::array::util::collect_vec;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Which reduction.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
}

/// Validated reduction axes as a per-dimension mask, with TensorFlow's error messages.
pub(crate) fn reduction_mask(ctx: &OpContext, input_rank: usize, axes: &Tensor) -> Result<Vec<bool>, Status> {
    let idx: Vec<i64> = match axes.dtype() {
        DataType::Int32 => typed::<i32>(ctx, axes)?.iter().map(|&v| v as i64).collect(),
        DataType::Int64 => typed::<i64>(ctx, axes)?.to_vec(),
        d => return Err(ctx.error(format!("reduction_indices must be int32 or int64, got {d}"))),
    };
    let rank = input_rank as i64;
    let mut mask = vec![false; input_rank];
    for &i in &idx {
        if i < -rank || i >= rank {
            return Err(ctx.error(format!("Invalid reduction dimension ({i} for input with {rank} dimension(s)")));
        }
        let a = if i < 0 { i + rank } else { i } as usize;
        if mask[a] {
            return Err(ctx.error(format!("Invalid reduction arguments: Axes contains duplicate dimension: {a}")));
        }
        mask[a] = true;
    }
    Ok(mask)
}

/// The output shape of a reduction.
pub(crate) fn reduced_shape(dims: &[usize], mask: &[bool], keep_dims: bool) -> Shape {
    Shape::new(
        dims.iter()
            .zip(mask)
            .filter_map(|(&d, &m)| match (m, keep_dims) {
                (false, _) => Some(d),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect::<Vec<_>>(),
    )
}

struct Reduce {
    kind: Kind,
    ty: DataType,
    keep_dims: bool,
}

fn run<T: Num, R: Reducer<T>>(x: &[T], dims: &[usize], mask: &[bool]) -> Result<Vec<T>, Status> {
    reduce_axes::<T, R>(x, dims, mask)
}

/// Mean of floats: sum, then divide by the count.
fn mean_float<T: Num>(x: &[T], dims: &[usize], mask: &[bool]) -> Result<Vec<T>, Status> {
    let count: usize = dims.iter().zip(mask).filter(|(_, &m)| m).map(|(&d, _)| d).product();
    let mut s = reduce_axes::<T, SumR>(x, dims, mask)?;
    if count != 1 {
        let c = T::from_usize(count);
        s.iter_mut().for_each(|v| *v = v.div(c));
    }
    Ok(s)
}

/// Mean of integers: TensorFlow sums in int64 (wrapping), divides (truncating), casts back;
/// an empty mean is 0.
fn mean_int<T: Num>(
    x: &[T],
    dims: &[usize],
    mask: &[bool],
    widen: fn(T) -> i64,
    narrow: fn(i64) -> T,
) -> Result<Vec<T>, Status> {
    let count: usize = dims.iter().zip(mask).filter(|(_, &m)| m).map(|(&d, _)| d).product();
    let wide = map_unary(dims, x, widen)?;
    let s = reduce_axes::<i64, SumR>(&wide, dims, mask)?;
    let n = s.len();
    collect_vec(&[n], s.into_iter().map(|v| narrow(if count == 0 { 0 } else { v.wrapping_div(count as i64) })))
}

/// Mean of one element type.
type MeanFn<T> = fn(&[T], &[usize], &[bool]) -> Result<Vec<T>, Status>;

fn reduce_values<T: Num>(
    kind: Kind,
    xs: &[T],
    dims: &[usize],
    mask: &[bool],
    mean: MeanFn<T>,
) -> Result<Vec<T>, Status> {
    match kind {
        Kind::Sum => run::<T, SumR>(xs, dims, mask),
        Kind::Prod => run::<T, ProdR>(xs, dims, mask),
        Kind::Max => run::<T, MaxR>(xs, dims, mask),
        Kind::Min => run::<T, MinR>(xs, dims, mask),
        Kind::Mean => mean(xs, dims, mask),
    }
}

/// Reduces the input with `f(kind, elements, dims, mask)` (an input reduced over no axis is
/// its own output).
fn compute_with<T: TensorType>(
    ctx: &mut OpContext,
    k: &Reduce,
    f: impl FnOnce(Kind, &[T], &[usize], &[bool]) -> Result<Vec<T>, Status>,
) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let axes = ctx.input(1)?;
    let mask = reduction_mask(ctx, x.rank(), &axes)?;
    let shape = reduced_shape(x.dims(), &mask, k.keep_dims);
    let xs = typed::<T>(ctx, &x)?;
    if !mask.iter().any(|&m| m) {
        return ctx.set_output(0, x.clone());
    }
    let out = f(k.kind, xs, x.dims(), &mask)?;
    ctx.set_output(0, Tensor::new(shape, out)?)
}

fn compute_typed<T: Num>(ctx: &mut OpContext, k: &Reduce, mean: MeanFn<T>) -> Result<(), Status> {
    compute_with::<T>(ctx, k, |kind, xs, dims, mask| reduce_values(kind, xs, dims, mask, mean))
}

/// half and bfloat16 accumulate in float32 and round the result once.
fn compute_half<H: Num>(ctx: &mut OpContext, k: &Reduce, to: fn(H) -> f32, from: fn(f32) -> H) -> Result<(), Status> {
    compute_with::<H>(ctx, k, |kind, xs, dims, mask| {
        let wide = map_unary(dims, xs, to)?;
        let r = reduce_values::<f32>(kind, &wide, dims, mask, mean_float::<f32>)?;
        map_unary(&[r.len()], &r, from)
    })
}

/// Folds the elements of each output position in input order (for complex numbers, which
/// have no ordering and so no [`Num`]).
fn reduce_generic<T: TensorType + Copy>(
    x: &[T],
    dims: &[usize],
    mask: &[bool],
    init: T,
    f: impl Fn(T, T) -> T,
) -> Result<Vec<T>, Status> {
    let mut ostride = vec![0; dims.len()];
    let mut len = 1;
    for d in (0..dims.len()).rev() {
        if !mask[d] {
            ostride[d] = len;
            len *= dims[d];
        }
    }
    let mut out = ferroflow_core::alloc::filled(&[len], init)?;
    let (mut idx, mut o) = (vec![0; dims.len()], 0);
    for &v in x {
        out[o] = f(out[o], v);
        for d in (0..dims.len()).rev() {
            idx[d] += 1;
            o += ostride[d];
            if idx[d] < dims[d] {
                break;
            }
            o -= ostride[d] * dims[d];
            idx[d] = 0;
        }
    }
    Ok(out)
}

/// Sum, Prod and Mean of complex numbers.
fn compute_complex<T>(ctx: &mut OpContext, k: &Reduce, zero: T, one: T, count: fn(usize) -> T) -> Result<(), Status>
where
    T: TensorType + Copy + std::ops::Add<Output = T> + std::ops::Mul<Output = T> + std::ops::Div<Output = T>,
{
    compute_with::<T>(ctx, k, |kind, xs, dims, mask| match kind {
        Kind::Prod => reduce_generic(xs, dims, mask, one, |a, b| a * b),
        Kind::Mean => {
            let n: usize = dims.iter().zip(mask).filter(|(_, &m)| m).map(|(&d, _)| d).product();
            let s = reduce_generic(xs, dims, mask, zero, |a, b| a + b)?;
            let len = s.len();
            collect_vec(&[len], s.into_iter().map(|v| v / count(n)))
        }
        // Max and Min are not registered for complex types.
        _ => reduce_generic(xs, dims, mask, zero, |a, b| a + b),
    })
}

impl OpKernel for Reduce {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        match self.ty {
            DataType::Float => compute_typed::<f32>(ctx, self, mean_float::<f32>),
            DataType::Double => compute_typed::<f64>(ctx, self, mean_float::<f64>),
            DataType::Int32 => compute_typed::<i32>(ctx, self, |x, d, m| mean_int(x, d, m, |v| v as i64, |v| v as i32)),
            DataType::Int64 => compute_typed::<i64>(ctx, self, |x, d, m| mean_int(x, d, m, |v| v, |v| v)),
            DataType::UInt8 => compute_typed::<u8>(ctx, self, |x, d, m| mean_int(x, d, m, |v| v as i64, |v| v as u8)),
            DataType::Int8 => compute_typed::<i8>(ctx, self, |x, d, m| mean_int(x, d, m, |v| v as i64, |v| v as i8)),
            DataType::Int16 => compute_typed::<i16>(ctx, self, |x, d, m| mean_int(x, d, m, |v| v as i64, |v| v as i16)),
            DataType::UInt16 => {
                compute_typed::<u16>(ctx, self, |x, d, m| mean_int(x, d, m, |v| v as i64, |v| v as u16))
            }
            DataType::UInt32 => {
                compute_typed::<u32>(ctx, self, |x, d, m| mean_int(x, d, m, |v| v as i64, |v| v as u32))
            }
            DataType::UInt64 => {
                compute_typed::<u64>(ctx, self, |x, d, m| mean_int(x, d, m, |v| v as i64, |v| v as u64))
            }
            DataType::Half => compute_half::<f16>(ctx, self, f16::to_f32, f16::from_f32),
            DataType::BFloat16 => compute_half::<bf16>(ctx, self, bf16::to_f32, bf16::from_f32),
            DataType::Complex64 => {
                compute_complex::<C64>(ctx, self, C64::new(0.0, 0.0), C64::new(1.0, 0.0), |n| C64::new(n as f32, 0.0))
            }
            DataType::Complex128 => compute_complex::<C128>(ctx, self, C128::new(0.0, 0.0), C128::new(1.0, 0.0), |n| {
                C128::new(n as f64, 0.0)
            }),
            d => Err(ctx.error(format!("unsupported dtype {d}"))),
        }
    }
}

fn make(n: &NodeDef, kind: Kind) -> Result<Box<dyn OpKernel>, Status> {
    kernel_type(n, "Tidx", &[DataType::Int32, DataType::Int64])?;
    // TensorFlow's CPU registrations: Max and Min need an order, so no complex types.
    let allowed = if matches!(kind, Kind::Max | Kind::Min) { REAL } else { NUMBER };
    Ok(Box::new(Reduce { kind, ty: kernel_type(n, "T", allowed)?, keep_dims: n.attr_bool("keep_dims")? }))
}

/// Registers the reduction kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Sum", |n| make(n, Kind::Sum));
    r.add("Mean", |n| make(n, Kind::Mean));
    r.add("Max", |n| make(n, Kind::Max));
    r.add("Min", |n| make(n, Kind::Min));
    r.add("Prod", |n| make(n, Kind::Prod));
}
