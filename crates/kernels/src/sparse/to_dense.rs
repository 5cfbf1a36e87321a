//! `SparseToDense`: a dense tensor of `default_value` with `sparse_values` at
//! `sparse_indices` (0-D, 1-D or 2-D); with `validate_indices`, the indices must be in
//! bounds, sorted and unique, as TensorFlow checks them.

use ferroflow_core::{NodeAttrs, Shape, Status, Tensor, TensorType};

use super::util::{dense_dims, out_of_bounds};
use crate::array::util::{check_alloc, index_vec};
use crate::KernelRegistry;

fn idx_str(v: &[i64]) -> String {
    format!("[{}]", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","))
}

/// TensorFlow's `SparseTensor::IndicesValid` check: in bounds, strictly increasing.
pub(crate) fn validate_sorted(idx: &[i64], rank: usize, shape: &[i64]) -> Result<(), String> {
    let n = idx.len().checked_div(rank).unwrap_or(0);
    for i in 0..n {
        let row = &idx[i * rank..(i + 1) * rank];
        if out_of_bounds(row, shape) {
            return Err(format!(
                "indices[{i}] = {} is out of bounds: need 0 <= index < {}",
                idx_str(row),
                idx_str(shape)
            ));
        }
        if i > 0 {
            let prev = &idx[(i - 1) * rank..i * rank];
            match prev.cmp(row) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => return Err(format!("indices[{i}] = {} is repeated", idx_str(row))),
                std::cmp::Ordering::Greater => {
                    return Err(format!(
                        "indices[{i}] = {} is out of order. Many sparse ops require sorted indices.\n    Use \
                         `tf.sparse.reorder` to create a correctly ordered copy.\n\n",
                        idx_str(row)
                    ))
                }
            }
        }
    }
    Ok(())
}

fn scatter<T: TensorType + Clone>(
    dims: &[usize],
    idx: &[i64],
    (n, rank): (usize, usize),
    values: &Tensor,
    default: &Tensor,
) -> Result<Tensor, Status> {
    let vals = values.as_slice::<T>()?;
    let mut out = ferroflow_core::alloc::filled(dims, default.as_slice::<T>()?[0].clone())?;
    for i in 0..n {
        let mut off = 0usize;
        for (k, &x) in idx[i * rank..(i + 1) * rank].iter().enumerate() {
            off = off * dims[k] + x as usize;
        }
        out[off] = vals[if values.rank() == 0 { 0 } else { i }].clone();
    }
    Tensor::new(Shape::new(dims.to_vec()), out)
}

op_kernel! {
    struct SparseToDense { validate: bool }
    fn compute(&self, ctx) {
        let (it, st, values, default) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, ctx.input(3)?);
        if it.rank() > 2 {
            return Err(
                ctx.error(format!("sparse_indices should be a scalar, vector, or matrix, got shape {}", it.shape()))
            );
        }
        let n = if it.rank() > 0 { it.dims()[0] } else { 1 };
        let rank = if it.rank() > 1 { it.dims()[1] } else { 1 };
        if st.rank() != 1 {
            return Err(ctx.error(format!("output_shape must be rank 1, got shape {}", st.shape())));
        }
        if st.dims()[0] != rank {
            return Err(
                ctx.error(format!("output_shape has incorrect number of elements: {} should be: {rank}", st.dims()[0]))
            );
        }
        if !(values.rank() == 0 || (values.rank() == 1 && values.dims()[0] == n)) {
            return Err(
                ctx.error(format!("sparse_values has incorrect shape {}, should be [] or [{n}]", values.shape()))
            );
        }
        if default.rank() != 0 {
            return Err(ctx.error("default_value should be a scalar."));
        }
        if values.dtype() != default.dtype() {
            return Err(ctx.error("sparse_values and default_value must have one dtype"));
        }
        let shape = index_vec(&st).map_err(|e| ctx.error(e.message))?;
        let dims = dense_dims(ctx, "output_shape", &shape)?;
        let idx = index_vec(&it).map_err(|e| ctx.error(e.message))?;
        if self.validate {
            validate_sorted(&idx, rank, &shape).map_err(|e| ctx.error(e))?;
        } else if let Some(i) = (0..n).find(|&i| out_of_bounds(&idx[i * rank..(i + 1) * rank], &shape)) {
            return Err(ctx.error(format!("indices[{i}] is out of bounds of output_shape {shape:?}")));
        }
        check_alloc(&dims, values.dtype()).map_err(|e| ctx.error_with(e))?;
        let out =
            ferroflow_core::with_dtype!(values.dtype(), T => scatter::<T>(&dims, &idx, (n, rank), &values, &default))?;
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseToDense", |n| {
        let validate = if n.has_attr("validate_indices") { n.attr_bool("validate_indices")? } else { true };
        Ok(Box::new(SparseToDense { validate }))
    });
}
