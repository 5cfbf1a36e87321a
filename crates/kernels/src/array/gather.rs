//! Gather (v1) and GatherV2 (axis, batch_dims). Indices are validated before any copy:
//! an out-of-range index is InvalidArgument `indices[i,j] = v is not in [0, n)`.

use rayon::prelude::*;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor, TensorType};

use super::util::{index_scalar, index_vec, product, PAR_THRESHOLD};
use crate::{KernelRegistry, OpContext, OpKernel};

/// Formats flat position `i` of a tensor of `dims` as `a,b,c`.
pub fn multi_index(mut i: usize, dims: &[usize]) -> String {
    let mut parts = vec![String::new(); dims.len()];
    for k in (0..dims.len()).rev() {
        let d = dims[k].max(1);
        parts[k] = (i % d).to_string();
        i /= d;
    }
    parts.join(",")
}

/// Geometry of a gather: `out[b, o, i, k] = params[b, o, idx[b, i], k]`.
struct Plan {
    batch: usize,
    outer: usize,
    limit: usize,
    n: usize,
    inner: usize,
}

fn gather_typed<T: TensorType>(params: &Tensor, idx: &[i64], p: &Plan) -> Result<Vec<T>, Status> {
    let src = params.as_slice::<T>()?;
    let rows = p.batch * p.outer * p.n;
    let total = rows * p.inner;
    let src_off = |r: usize| -> usize {
        let i = r % p.n;
        let bo = r / p.n;
        let b = bo / p.outer;
        (bo * p.limit + idx[b * p.n + i] as usize) * p.inner
    };
    if total == 0 {
        return Ok(Vec::new());
    }
    if !std::mem::needs_drop::<T>() && total >= PAR_THRESHOLD && rows >= 2 {
        let mut out = ferroflow_core::alloc::filled(&[rows, p.inner], src[0].clone())?;
        let chunk_rows = rows.div_ceil(4 * rayon::current_num_threads().max(1));
        out.par_chunks_mut(chunk_rows * p.inner).enumerate().for_each(|(c, chunk)| {
            for (j, row) in chunk.chunks_mut(p.inner).enumerate() {
                let s = src_off(c * chunk_rows + j);
                row.clone_from_slice(&src[s..s + p.inner]);
            }
        });
        return Ok(out);
    }
    let mut out = ferroflow_core::alloc::with_capacity(&[rows, p.inner])?;
    if p.inner == 1 {
        out.extend((0..rows).map(|r| src[src_off(r)].clone()));
    } else {
        for r in 0..rows {
            let s = src_off(r);
            out.extend_from_slice(&src[s..s + p.inner]);
        }
    }
    Ok(out)
}

/// Gathers `params` along `axis` with `batch_dims` leading batch dims (all normalized and
/// validated by the caller, except the index values).
pub(crate) fn do_gather(
    ctx: &OpContext,
    params: &Tensor,
    indices: &Tensor,
    axis: usize,
    batch_dims: usize,
) -> Result<Tensor, Status> {
    let pd = params.dims();
    let limit = pd[axis];
    let idx = index_vec(indices).map_err(|e| ctx.error(e.message))?;
    if let Some(k) = idx.iter().position(|&v| v < 0 || v >= limit as i64) {
        return Err(ctx.error(format!(
            "indices[{}] = {} is not in [0, {limit})",
            multi_index(k, indices.dims()),
            idx[k]
        )));
    }
    let plan = Plan {
        batch: product(&pd[..batch_dims]),
        outer: product(&pd[batch_dims..axis]),
        limit,
        n: product(&indices.dims()[batch_dims..]),
        inner: product(&pd[axis + 1..]),
    };
    let mut out_dims: Vec<usize> = pd[..axis].to_vec();
    out_dims.extend_from_slice(&indices.dims()[batch_dims..]);
    out_dims.extend_from_slice(&pd[axis + 1..]);
    ferroflow_core::with_dtype!(params.dtype(), T => Tensor::new(out_dims.clone(), gather_typed::<T>(params, &idx, &plan)?))
}

fn gather_v1(ctx: &mut OpContext) -> Result<(), Status> {
    let params = ctx.input(0)?;
    let indices = ctx.input(1)?;
    if params.rank() < 1 {
        return Err(ctx.error("params must be at least 1 dimensional"));
    }
    let out = do_gather(ctx, &params, &indices, 0, 0)?;
    ctx.set_output(0, out)
}

op_kernel! {
    struct GatherV2 { batch_dims: i64 }
    fn compute(&self, ctx) {
        let [params, indices, axis_t] = ctx.inputs()?;
        if axis_t.num_elements() != 1 {
            return Err(ctx.error(format!("axis must be scalar, but got shape {}", axis_t.shape())));
        }
        let axis = index_scalar(&axis_t).map_err(|e| ctx.error(e.message))?;
        let pr = params.rank() as i64;
        let min_rank = if axis < 0 { -axis } else { axis + 1 };
        if pr < min_rank {
            return Err(ctx.error(format!("Shape must be at least rank {min_rank} but is rank {pr}")));
        }
        let axis = if axis < 0 { axis + pr } else { axis };
        let mut bd = self.batch_dims;
        if bd != 0 {
            let ir = indices.rank() as i64;
            if bd < -ir || bd > ir {
                return Err(ctx.error(format!("Expected batch_dims in the range [{}, {ir}], but got {bd}", -ir)));
            }
            if bd < 0 {
                bd += ir;
            }
            if bd >= pr {
                return Err(ctx.error(format!("batch_dims ({bd}) must be less than rank(params) ({pr}).")));
            }
            if bd > axis {
                return Err(ctx.error(format!("batch_dims ({bd}) must be less than or equal to axis ({axis}).")));
            }
            for i in 0..bd as usize {
                if params.dims()[i] != indices.dims()[i] {
                    return Err(ctx.error(format!(
                        "params.shape[{i}]: {} should be equal to indices.shape[{i}]: {}",
                        params.dims()[i],
                        indices.dims()[i]
                    )));
                }
            }
        }
        let out = do_gather(ctx, &params, &indices, axis as usize, bd as usize)?;
        ctx.set_output(0, out)
    }
}

fn gather_v2_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(GatherV2 { batch_dims: n.attr_int("batch_dims")? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Gather", |_| Ok(super::util::FnKernel::expensive(gather_v1)));
    r.add("GatherV2", gather_v2_factory);
}
