//! `SparseReorder`: a sparse tensor's entries in row-major (lexicographic index) order;
//! entries with equal indices keep their order.

use ferroflow_core::{Shape, Status, Tensor, TensorType};

use super::util::sparse_input;
use crate::array::util::collect_vec;
use crate::KernelRegistry;

fn permute<T: TensorType + Clone>(values: &Tensor, perm: &[usize]) -> Result<Tensor, Status> {
    let v = values.as_slice::<T>()?;
    Tensor::new(Shape::new(vec![perm.len()]), collect_vec(&[perm.len()], perm.iter().map(|&i| v[i].clone()))?)
}

op_kernel! {
    struct SparseReorder;
    fn compute(&self, ctx) {
        let (idx, values, shape) = sparse_input(ctx, 0, ["Input indices", "Input values", "Input shape"])?;
        if shape.len() != idx.rank {
            return Err(ctx.error(format!(
                "Input indices should have {} columns (the length of the shape), got {}",
                shape.len(),
                idx.rank
            )));
        }
        let mut perm: Vec<usize> = (0..idx.n).collect();
        if !(1..idx.n).all(|i| idx.row(i - 1) <= idx.row(i)) {
            perm.sort_by(|&a, &b| idx.row(a).cmp(idx.row(b)));
        }
        let mut out = ferroflow_core::alloc::with_capacity::<i64>(&[idx.n, idx.rank])?;
        for &p in &perm {
            out.extend_from_slice(idx.row(p));
        }
        let vals = ferroflow_core::with_dtype!(values.dtype(), T => permute::<T>(&values, &perm))?;
        ctx.set_output(0, Tensor::new(Shape::new(vec![idx.n, idx.rank]), out)?)?;
        ctx.set_output(1, vals)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseReorder", |_| Ok(Box::new(SparseReorder)));
}
