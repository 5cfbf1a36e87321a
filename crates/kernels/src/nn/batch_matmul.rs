//! `BatchMatMulV2`: batched matrix products with NumPy broadcasting of the batch dims.

use crate::dispatch::dispatch;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::common::{check_dtype, dims_str, unsupported_type};
use super::gemm::{GemmScalar, Mat, PAR_GEMM_MIN};
use crate::{OpContext, OpKernel};

struct BatchMatMul {
    adj_x: bool,
    adj_y: bool,
    dtype: DataType,
}

pub(crate) fn batch_matmul_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = node.attr_type("T")?;
    if !matches!(dtype, DataType::Float | DataType::Double | DataType::Int32 | DataType::Int64) {
        return Err(unsupported_type(node, dtype));
    }
    Ok(Box::new(BatchMatMul { adj_x: node.attr_bool("adj_x")?, adj_y: node.attr_bool("adj_y")?, dtype }))
}

/// Output batch dims and, per output batch, the flat batch index into each operand.
type Batches = (Vec<usize>, Vec<(usize, usize)>);

/// Broadcasts two batch shapes.
fn broadcast_batches(xb: &[usize], yb: &[usize]) -> Option<Batches> {
    let n = xb.len().max(yb.len());
    let pad = |d: &[usize]| -> Vec<usize> { std::iter::repeat_n(1, n - d.len()).chain(d.iter().copied()).collect() };
    let (xp, yp) = (pad(xb), pad(yb));
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(match (xp[i], yp[i]) {
            (a, b) if a == b => a,
            (1, b) => b,
            (a, 1) => a,
            _ => return None,
        });
    }
    // Row-major strides of each operand's batch, zero where broadcast.
    let strides = |p: &[usize]| -> Vec<usize> {
        let mut s = vec![0; n];
        let mut acc = 1;
        for i in (0..n).rev() {
            s[i] = if p[i] == 1 { 0 } else { acc };
            acc *= p[i];
        }
        s
    };
    let (xs, ys) = (strides(&xp), strides(&yp));
    let total: usize = out.iter().product();
    let mut idx = Vec::with_capacity(total);
    let mut pos = vec![0usize; n];
    for _ in 0..total {
        let xi = pos.iter().zip(&xs).map(|(p, s)| p * s).sum();
        let yi = pos.iter().zip(&ys).map(|(p, s)| p * s).sum();
        idx.push((xi, yi));
        for d in (0..n).rev() {
            pos[d] += 1;
            if pos[d] < out[d] {
                break;
            }
            pos[d] = 0;
        }
    }
    Some((out, idx))
}

impl BatchMatMul {
    fn run<T: GemmScalar>(&self, ctx: &mut OpContext, x: &Tensor, y: &Tensor) -> Result<(), Status> {
        let (xd, yd) = (x.dims(), y.dims());
        let (xr, yr) = (xd.len(), yd.len());
        let (xrows, xcols, yrows, ycols) = (xd[xr - 2], xd[xr - 1], yd[yr - 2], yd[yr - 1]);
        let (m, k) = if self.adj_x { (xcols, xrows) } else { (xrows, xcols) };
        let (ky, n) = if self.adj_y { (ycols, yrows) } else { (yrows, ycols) };
        if k != ky {
            return Err(ctx.error(format!("Matrix size-incompatible: In[0]: {}, In[1]: {}", x.shape(), y.shape())));
        }
        let Some((mut out_dims, idx)) = broadcast_batches(&xd[..xr - 2], &yd[..yr - 2]) else {
            return Err(ctx.error(format!(
                "In[0] and In[1] must have compatible batch dimensions: {} vs. {}",
                x.shape(),
                y.shape()
            )));
        };
        out_dims.extend([m, n]);
        let (xs, ys) = (x.as_slice::<T>()?, y.as_slice::<T>()?);
        let mut out = vec![T::default(); out_dims.iter().product()];
        let (xm, ym) = (xrows * xcols, yrows * ycols);
        let y_batches = yd[..yr - 2].iter().product::<usize>();
        if !self.adj_x && y_batches == 1 {
            // One product: the batch folds into the rows of x.
            let rows = idx.len() * m;
            let xv = &xs[..rows * k];
            T::gemm(
                rows,
                n,
                k,
                Mat::row_major(xv, xcols, false),
                Mat::row_major(ys, ycols, self.adj_y),
                &mut out,
                n,
                false,
                true,
            );
        } else if m * n > 0 {
            let one = |(b, c): (usize, &mut [T])| {
                let (xi, yi) = idx[b];
                let xv = Mat::row_major(&xs[xi * xm..(xi + 1) * xm], xcols, self.adj_x);
                let yv = Mat::row_major(&ys[yi * ym..(yi + 1) * ym], ycols, self.adj_y);
                T::gemm(m, n, k, xv, yv, c, n, false, idx.len() == 1);
            };
            if idx.len() > 1 && m * n * k * idx.len() >= PAR_GEMM_MIN && rayon::current_num_threads() > 1 {
                out.par_chunks_mut(m * n).enumerate().for_each(one);
            } else {
                out.chunks_mut(m * n).enumerate().for_each(one);
            }
        }
        ctx.set_output(0, Tensor::new(out_dims, out)?)
    }
}

impl OpKernel for BatchMatMul {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let y = ctx.input(1)?;
        for (i, t) in [&x, &y].into_iter().enumerate() {
            if t.rank() < 2 {
                return Err(ctx.error(format!(
                    "In[{i}] ndims must be >= 2: {} (shape {})",
                    t.rank(),
                    dims_str(t.dims())
                )));
            }
            check_dtype(ctx.node(), &format!("input {i}"), t.dtype(), self.dtype)?;
        }
        dispatch!(self.dtype, ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx, &x, &y))
    }
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn bmm(x: Tensor, y: Tensor, ax: bool, ay: bool) -> Result<Tensor, Status> {
        let n =
            node("BatchMatMulV2", &[("T", attr::ty(x.dtype())), ("adj_x", attr::bool(ax)), ("adj_y", attr::bool(ay))]);
        run_kernel(n, vec![x, y], 1).map(|mut v| v.remove(0))
    }

    #[test]
    fn broadcasts_batches() {
        // x: [2,1,2,2], y: [3,2,1] -> out [2,3,2,1]
        let x = Tensor::new(vec![2, 1, 2, 2], vec![1.0f32, 0., 0., 1., 2., 0., 0., 2.]).unwrap();
        let y = Tensor::new(vec![3, 2, 1], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap();
        let z = bmm(x, y, false, false).unwrap();
        assert_eq!(z.dims(), &[2, 3, 2, 1]);
        assert_eq!(z.as_slice::<f32>().unwrap(), &[1., 2., 3., 4., 5., 6., 2., 4., 6., 8., 10., 12.]);
    }

    #[test]
    fn adjoints_and_shared_rhs() {
        // x: [2,3,2] with adj_x -> [2,2,3]; y: [3,1] shared.
        let x = Tensor::new(vec![2, 3, 2], (0..12).map(|v| v as f64).collect::<Vec<_>>()).unwrap();
        let y = Tensor::new(vec![1, 3], vec![1.0f64, 1., 1.]).unwrap();
        let z = bmm(x.clone(), y.clone(), true, true).unwrap();
        assert_eq!(z.dims(), &[2, 2, 1]);
        assert_eq!(z.as_slice::<f64>().unwrap(), &[6., 9., 24., 27.]);
        let y = Tensor::new(vec![2, 1], vec![1.0f64, 10.]).unwrap();
        let z = bmm(x, y, false, false).unwrap();
        assert_eq!(z.dims(), &[2, 3, 1]);
        assert_eq!(z.as_slice::<f64>().unwrap(), &[10., 32., 54., 76., 98., 120.]);
    }

    #[test]
    fn errors() {
        let x = Tensor::zeros(DataType::Float, vec![2, 2, 3]).unwrap();
        let y = Tensor::zeros(DataType::Float, vec![3, 3, 2]).unwrap();
        let e = bmm(x.clone(), y, false, false).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("compatible batch dimensions"), "{e}");
        let y = Tensor::zeros(DataType::Float, vec![2, 2]).unwrap();
        let e = bmm(x, y, false, false).unwrap_err();
        assert!(e.message.contains("Matrix size-incompatible: In[0]: [2,2,3], In[1]: [2,2]"), "{e}");
    }
}
