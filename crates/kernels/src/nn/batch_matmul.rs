//! `BatchMatMulV2`: batched matrix products with NumPy broadcasting of the batch dims.

use crate::dispatch::dispatch;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, C128, C64};

use super::common::type_attr;
use super::common::{check_dtype, dims_str, each_chunk};
use super::gemm::{GemmScalar, Mat, PAR_GEMM_MIN};
use crate::linalg::batch_bcast::{broadcast_batches, push_batch_pairs};
use crate::{OpContext, OpKernel};

struct BatchMatMul {
    adj_x: bool,
    adj_y: bool,
    dtype: DataType,
}

/// The types `BatchMatMulV2` runs on: the reals and complex64/complex128.
const BATCH_MATMUL_TYPES: &[DataType] =
    &[DataType::Float, DataType::Double, DataType::Int32, DataType::Int64, DataType::Complex64, DataType::Complex128];

pub(crate) fn batch_matmul_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = type_attr(node, BATCH_MATMUL_TYPES)?;
    Ok(Box::new(BatchMatMul { adj_x: node.attr_bool("adj_x")?, adj_y: node.attr_bool("adj_y")?, dtype }))
}

/// Per output batch, the flat batch index into each operand (the output was admitted, so
/// the count fits; the index list is admitted too, as it can outgrow a 1x1 output).
fn batch_pairs(out: &[usize], xs: &[usize], ys: &[usize]) -> Result<Vec<(usize, usize)>, Status> {
    let total: usize = out.iter().product();
    let bytes = total.checked_mul(std::mem::size_of::<(usize, usize)>());
    ferroflow_core::check_alloc_bytes(bytes.map(|b| b as u64), || format!("the {total} batch pairs of a BatchMatMul"))?;
    let mut idx = Vec::new();
    idx.try_reserve_exact(total).map_err(|_| {
        Status::resource_exhausted(format!("OOM when allocating the {total} batch pairs of a BatchMatMul"))
    })?;
    push_batch_pairs(out, xs, ys, &mut idx);
    Ok(idx)
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
        let Some((mut out_dims, bxs, bys)) = broadcast_batches(&xd[..xr - 2], &yd[..yr - 2]) else {
            return Err(ctx.error(format!(
                "In[0] and In[1] must have compatible batch dimensions: {} vs. {}",
                x.shape(),
                y.shape()
            )));
        };
        let batch_dims = out_dims.clone();
        out_dims.extend([m, n]);
        let (xs, ys) = (x.as_slice::<T>()?, y.as_slice::<T>()?);
        let mut out = ferroflow_core::alloc::zeroed::<T>(&out_dims)?;
        let idx = batch_pairs(&batch_dims, &bxs, &bys)?;
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
            let parallel = idx.len() > 1 && m * n * k * idx.len() >= PAR_GEMM_MIN && rayon::current_num_threads() > 1;
            each_chunk(&mut out, m * n, parallel, |b, c| {
                let (xi, yi) = idx[b];
                let xv = Mat::row_major(&xs[xi * xm..(xi + 1) * xm], xcols, self.adj_x);
                let yv = Mat::row_major(&ys[yi * ym..(yi + 1) * ym], ycols, self.adj_y);
                T::gemm(m, n, k, xv, yv, c, n, false, idx.len() == 1);
            });
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
        if self.dtype.is_complex() {
            // An adjoint of a complex matrix is its conjugate transpose: the transpose is a
            // view, the conjugate is taken here.
            let conj = |t: Tensor, adj: bool| -> Result<Tensor, Status> {
                if !adj {
                    return Ok(t);
                }
                dispatch!(t.dtype(), ctx, [C64, C128], |T| {
                    let v: Vec<T> = t.as_slice::<T>()?.iter().map(|c| c.conj()).collect();
                    Tensor::new(t.shape().clone(), v)
                })
            };
            let (x, y) = (conj(x, self.adj_x)?, conj(y, self.adj_y)?);
            return dispatch!(self.dtype, ctx, [C64, C128], |T| self.run::<T>(ctx, &x, &y));
        }
        dispatch!(self.dtype, ctx, [f32, f64, i32, i64], |T| self.run::<T>(ctx, &x, &y))
    }
}
