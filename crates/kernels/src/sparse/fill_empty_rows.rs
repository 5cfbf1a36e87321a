//! `SparseFillEmptyRows`: every empty row of a 2-D (or higher) sparse tensor gets one entry
//! `[row, 0, ...]` with `default_value`; the output is ordered by row (within a row, in
//! input order), with the map from each input entry to its output position.
//! `SparseFillEmptyRowsGrad`: the values' gradient through that map, and the default
//! value's (the sum of the gradients of the filled entries).
// The loops walk several parallel arrays by one index.
#![allow(clippy::needless_range_loop)]

use ferroflow_core::{DataType, Shape, Status, Tensor, TensorType};

use super::elem::SegElem;
use super::util::sparse_input;
use crate::array::util::{check_alloc, collect_vec, index_vec};
use crate::dispatch::dispatch;
use crate::KernelRegistry;

fn fill_values<T: TensorType + Clone>(values: &Tensor, default: &Tensor, order: &[i64]) -> Result<Tensor, Status> {
    let v = values.as_slice::<T>()?;
    let d = &default.as_slice::<T>()?[0];
    let out =
        collect_vec(&[order.len()], order.iter().map(|&o| if o < 0 { d.clone() } else { v[o as usize].clone() }))?;
    Tensor::new(Shape::new(vec![order.len()]), out)
}

op_kernel! {
    struct SparseFillEmptyRows;
    fn compute(&self, ctx) {
        let (idx, values, shape) = sparse_input(ctx, 0, ["indices", "values", "dense_shape"])?;
        let default = ctx.input_of_rank(3, 0, "default_value must be a scalar, got shape ")?;
        if values.dtype() != default.dtype() {
            return Err(ctx.error("values and default_value must have one dtype"));
        }
        if shape.is_empty() {
            return Err(ctx.error("dense_shape must not be empty"));
        }
        if idx.rank != shape.len() {
            return Err(ctx.error(format!(
                "indices must have {} columns (the rank of dense_shape), got {}",
                shape.len(),
                idx.rank
            )));
        }
        let rows =
            usize::try_from(shape[0]).map_err(|_| ctx.error(format!("dense_shape[0] is negative: {}", shape[0])))?;
        if rows == 0 && idx.n > 0 {
            return Err(
                ctx.error(format!("Received SparseTensor with dense_shape[0] = 0 but indices.shape[0] = {}", idx.n))
            );
        }
        check_alloc(&[rows], DataType::Bool).map_err(|e| ctx.error_with(e))?;
        let mut count = ferroflow_core::alloc::zeroed::<i64>(&[rows])?;
        for i in 0..idx.n {
            let r = idx.row(i)[0];
            if r < 0 || r as u64 >= rows as u64 {
                return Err(ctx.error(format!("indices({i}, 0) is invalid: {r} >= {rows}")));
            }
            count[r as usize] += 1;
        }
        let empty = collect_vec(&[rows], count.iter().map(|&c| c == 0))?;
        // Output position of each row's first entry.
        let mut start = ferroflow_core::alloc::with_capacity::<i64>(&[rows])?;
        let mut total = 0usize;
        for &c in &count {
            start.push(total as i64);
            total += (c as usize).max(1);
        }
        check_alloc(&[total, idx.rank], DataType::Int64).map_err(|e| ctx.error_with(e))?;
        // The input entry at each output position (-1: a filled one).
        let mut order = ferroflow_core::alloc::filled(&[total], -1i64)?;
        let mut out_idx = ferroflow_core::alloc::zeroed::<i64>(&[total, idx.rank])?;
        let mut reverse = ferroflow_core::alloc::zeroed::<i64>(&[idx.n])?;
        // The counts are done with: the buffer becomes each row's next output position.
        let mut next = count;
        next.copy_from_slice(&start);
        for i in 0..idx.n {
            let r = idx.row(i)[0] as usize;
            let p = next[r] as usize;
            next[r] += 1;
            order[p] = i as i64;
            out_idx[p * idx.rank..(p + 1) * idx.rank].copy_from_slice(idx.row(i));
            reverse[i] = p as i64;
        }
        for (r, &e) in empty.iter().enumerate() {
            if e {
                out_idx[start[r] as usize * idx.rank] = r as i64;
            }
        }
        let out_values = ferroflow_core::with_dtype!(values.dtype(), T => fill_values::<T>(&values, &default, &order))?;
        ctx.set_output(0, Tensor::new(Shape::new(vec![total, idx.rank]), out_idx)?)?;
        ctx.set_output(1, out_values)?;
        ctx.set_output(2, Tensor::new(Shape::new(vec![rows]), empty)?)?;
        ctx.set_output(3, Tensor::new(Shape::new(vec![idx.n]), reverse)?)
    }
}

fn grad_typed<T: SegElem>(map: &[usize], grad: &Tensor) -> Result<(Tensor, Tensor), Status> {
    let g = grad.as_slice::<T>()?;
    let mut used = ferroflow_core::alloc::zeroed::<bool>(grad.dims())?;
    let d = collect_vec(
        &[map.len()],
        map.iter().map(|&p| {
            used[p] = true;
            g[p]
        }),
    )?;
    let rest = g.iter().zip(&used).filter(|(_, &u)| !u).fold(T::ZERO, |a, (&v, _)| a.add(v));
    Ok((Tensor::new(Shape::new(vec![map.len()]), d)?, Tensor::scalar(rest)))
}

op_kernel! {
    struct SparseFillEmptyRowsGrad;
    fn compute(&self, ctx) {
        let m = ctx.input_of_rank(0, 1, "reverse_index_map must be a vector, saw: ")?;
        let grad = ctx.input_of_rank(1, 1, "grad_values must be a vector, saw: ")?;
        let n = grad.dims()[0];
        let map = index_vec(&m).map_err(|e| ctx.error(e.message))?;
        let mut slots = Vec::with_capacity(map.len());
        for (i, &p) in map.iter().enumerate() {
            if p < 0 || p as u64 >= n as u64 {
                return Err(
                    ctx.error(format!("Elements in reverse index must be in [0, {n}) but got {p} at index {i}"))
                );
            }
            slots.push(p as usize);
        }
        let (d, dd) = dispatch!(grad.dtype(), ctx, [f32, f64, i32, i64], |T| grad_typed::<T>(&slots, &grad))?;
        ctx.set_output(0, d)?;
        ctx.set_output(1, dd)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseFillEmptyRows", |_| Ok(Box::new(SparseFillEmptyRows)));
    r.add("SparseFillEmptyRowsGrad", |_| Ok(Box::new(SparseFillEmptyRowsGrad)));
}
