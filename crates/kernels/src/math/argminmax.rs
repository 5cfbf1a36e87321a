//! ArgMax / ArgMin along one axis (`dimension`: a scalar int32/int64), as `output_type`
//! (int32 or int64). Ties give the first index; NaN never wins (Eigen's reducer starting at
//! `lowest()` / `highest()` with strict comparisons).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Shape, Status, Tensor, TensorType};
use rayon::prelude::*;

use super::bcast::{chunk_len, PAR_THRESHOLD};
use super::common::{kernel_type, typed};
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Elements ArgMax/ArgMin accept.
trait ArgElem: TensorType + Copy + PartialOrd + Send + Sync {
    const LOWEST: Self;
    const HIGHEST: Self;
}
macro_rules! arg_elem {
    ($($t:ty: $lo:expr, $hi:expr);*) => {$(
        impl ArgElem for $t {
            const LOWEST: Self = $lo;
            const HIGHEST: Self = $hi;
        }
    )*};
}
arg_elem!(f32: f32::MIN, f32::MAX; f64: f64::MIN, f64::MAX; i32: i32::MIN, i32::MAX; i64: i64::MIN, i64::MAX;
    u8: 0, u8::MAX; bool: false, true);

const ARG_TYPES: &[DataType] =
    &[DataType::Float, DataType::Double, DataType::Int32, DataType::Int64, DataType::UInt8, DataType::Bool];

struct Arg {
    max: bool,
    ty: DataType,
    out: DataType,
}

/// Index of the best element of `[outer, r, inner]` along `r`, into `out` (`outer * inner`).
fn arg_block<T: ArgElem>(x: &[T], r: usize, inner: usize, out: &mut [i64], max: bool) {
    let better = |a: T, b: T| if max { a > b } else { a < b };
    let start = if max { T::LOWEST } else { T::HIGHEST };
    let block = r * inner;
    if inner == 1 {
        for (o, row) in out.iter_mut().zip(x.chunks_exact(block)) {
            let (mut best, mut idx) = (start, 0usize);
            for (i, &v) in row.iter().enumerate() {
                if better(v, best) {
                    best = v;
                    idx = i;
                }
            }
            *o = idx as i64;
        }
        return;
    }
    let mut best = vec![start; inner];
    for (o, xb) in out.chunks_exact_mut(inner).zip(x.chunks_exact(block)) {
        best.fill(start);
        o.fill(0);
        for (i, row) in xb.chunks_exact(inner).enumerate() {
            for ((b, oi), &v) in best.iter_mut().zip(o.iter_mut()).zip(row) {
                if better(v, *b) {
                    *b = v;
                    *oi = i as i64;
                }
            }
        }
    }
}

fn compute_arg<T: ArgElem>(ctx: &mut OpContext, k: &Arg) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let d = ctx.input(1)?;
    if d.rank() != 0 {
        return Err(ctx.error(format!("dim must be a scalar, but received tensor of shape: {}", d.shape())));
    }
    let dim = match d.dtype() {
        DataType::Int32 => typed::<i32>(ctx, &d)?[0] as i64,
        DataType::Int64 => typed::<i64>(ctx, &d)?[0],
        t => return Err(ctx.error(format!("dimension must be int32 or int64, got {t}"))),
    };
    let rank = x.rank() as i64;
    if dim < -rank || dim >= rank {
        return Err(ctx.error(format!("Expected dimension in the range [{}, {rank}), but got {dim}", -rank)));
    }
    let axis = if dim < 0 { dim + rank } else { dim } as usize;
    let dims = x.dims();
    let r = dims[axis];
    if r == 0 {
        return Err(ctx.error(format!("Reduction axis {axis} is empty in shape {}", x.shape())));
    }
    let outer: usize = dims[..axis].iter().product();
    let inner: usize = dims[axis + 1..].iter().product();
    let xs = typed::<T>(ctx, &x)?;
    let mut out = vec![0i64; outer * inner];
    if xs.len() > PAR_THRESHOLD && outer >= 2 && inner > 0 {
        let per = (chunk_len(xs.len()) / (r * inner)).max(1);
        out.par_chunks_mut(per * inner)
            .zip(xs.par_chunks(per * r * inner))
            .for_each(|(o, xb)| arg_block(xb, r, inner, o, k.max));
    } else if xs.len() > PAR_THRESHOLD && inner >= 2 {
        // One outer block: split the columns (each column keeps its own running best).
        let w = chunk_len(inner).min(inner);
        out.par_chunks_mut(w).enumerate().for_each(|(c, o)| {
            let cols: Vec<T> =
                xs.chunks_exact(inner).flat_map(|row| row[c * w..c * w + o.len()].iter().copied()).collect();
            arg_block(&cols, r, o.len(), o, k.max);
        });
    } else if inner > 0 {
        arg_block(xs, r, inner, &mut out, k.max);
    }
    let shape = Shape::new(dims.iter().enumerate().filter(|&(i, _)| i != axis).map(|(_, &d)| d).collect::<Vec<_>>());
    let t = match k.out {
        DataType::Int32 => Tensor::new(shape, out.into_iter().map(|v| v as i32).collect::<Vec<_>>())?,
        _ => Tensor::new(shape, out)?,
    };
    ctx.set_output(0, t)
}

impl OpKernel for Arg {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        dispatch!(self.ty, ctx, [f32, f64, i32, i64, u8, bool], |T| compute_arg::<T>(ctx, self))
    }
}

fn make(n: &NodeDef, max: bool) -> Result<Box<dyn OpKernel>, Status> {
    kernel_type(n, "Tidx", &[DataType::Int32, DataType::Int64])?;
    Ok(Box::new(Arg {
        max,
        ty: kernel_type(n, "T", ARG_TYPES)?,
        out: kernel_type(n, "output_type", &[DataType::Int32, DataType::Int64])?,
    }))
}

/// Registers ArgMax and ArgMin.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ArgMax", |n| make(n, true));
    r.add("ArgMin", |n| make(n, false));
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn arg(op: &str, x: Tensor, dim: Tensor, out: DataType) -> Result<Tensor, Status> {
        let n =
            node(op, &[("T", attr::ty(x.dtype())), ("Tidx", attr::ty(dim.dtype())), ("output_type", attr::ty(out))]);
        run_kernel(n, vec![x, dim], 1).map(|mut v| v.remove(0))
    }

    #[test]
    fn values() {
        let x = Tensor::new(vec![2usize, 3], vec![1.0f32, 5., 5., 7., 0., 7.]).unwrap();
        let a = arg("ArgMax", x.clone(), Tensor::scalar(1i32), DataType::Int64).unwrap();
        assert_eq!(a.as_slice::<i64>().unwrap(), &[1, 0]);
        let a = arg("ArgMin", x.clone(), Tensor::scalar(-2i64), DataType::Int32).unwrap();
        assert_eq!(a.as_slice::<i32>().unwrap(), &[0, 1, 0]);
        let n = Tensor::vec(vec![f32::NAN, 1., 2.]);
        assert_eq!(
            arg("ArgMax", n.clone(), Tensor::scalar(0i32), DataType::Int64).unwrap().as_slice::<i64>().unwrap(),
            &[2]
        );
        assert_eq!(arg("ArgMin", n, Tensor::scalar(0i32), DataType::Int64).unwrap().as_slice::<i64>().unwrap(), &[1]);
        let b = Tensor::vec(vec![false, true, true]);
        assert_eq!(arg("ArgMax", b, Tensor::scalar(0i32), DataType::Int64).unwrap().as_slice::<i64>().unwrap(), &[1]);
        let big = Tensor::new(
            vec![3usize, 40_000],
            (0..120_000i32).map(|i| (i % 40_000) * (1 - 2 * (i / 40_000 % 2))).collect::<Vec<_>>(),
        )
        .unwrap();
        let a = arg("ArgMax", big.clone(), Tensor::scalar(1i32), DataType::Int64).unwrap();
        assert_eq!(a.as_slice::<i64>().unwrap(), &[39_999, 0, 39_999]);
        let a = arg("ArgMin", big, Tensor::scalar(0i32), DataType::Int64).unwrap();
        assert_eq!(&a.as_slice::<i64>().unwrap()[..3], &[0, 1, 1]);
    }

    #[test]
    fn errors() {
        let x = || Tensor::zeros(DataType::Float, vec![0, 3]).unwrap();
        let e = arg("ArgMax", x(), Tensor::scalar(0i32), DataType::Int64).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("Reduction axis 0 is empty in shape [0,3]"), "{e}");
        let ok = arg("ArgMax", x(), Tensor::scalar(1i32), DataType::Int64).unwrap();
        assert_eq!(ok.dims(), &[0]);
        let e = arg("ArgMax", x(), Tensor::scalar(2i32), DataType::Int64).unwrap_err();
        assert!(e.message.contains("Expected dimension in the range [-2, 2), but got 2"), "{e}");
        let e = arg("ArgMax", x(), Tensor::vec(vec![1i32]), DataType::Int64).unwrap_err();
        assert!(e.message.contains("dim must be a scalar, but received tensor of shape: [1]"), "{e}");
        let e = arg("ArgMax", Tensor::scalar(1.0f32), Tensor::scalar(0i32), DataType::Int64).unwrap_err();
        assert!(e.message.contains("range [0, 0)"), "{e}");
    }
}
