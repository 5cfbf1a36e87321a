//! `RaggedTensorToSparse` (`RaggedTensor.to_sparse()`, e.g. `tf.strings.split(...).to_sparse()`):
//! the ragged tensor with `RAGGED_RANK` row-splits vectors (outermost first) and flat values
//! `[nvals, d1, ...]` as a sparse tensor of rank `1 + RAGGED_RANK + (values rank - 1)`. Each
//! value's index is its row at every ragged level, its position in its innermost row, then
//! its position in the dense inner dims; entries come in row-major order. The dense shape is
//! the row count, the longest row of every ragged level, then the inner dims.

use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use crate::array::util::{check_alloc, index_vec};
use crate::KernelRegistry;

op_kernel! {
    struct RaggedTensorToSparse { ragged_rank: usize }
    fn compute(&self, ctx) {
        let k = self.ragged_rank;
        if ctx.num_inputs() != k + 1 {
            return Err(ctx.error(format!(
                "expected {} row splits and the values, got {} inputs",
                k,
                ctx.num_inputs()
            )));
        }
        let mut splits = Vec::with_capacity(k);
        for i in 0..k {
            let t = ctx.input(i)?;
            if t.rank() != 1 {
                return Err(ctx.error(format!("rt_nested_splits[{i}] must be a vector, got shape {}", t.shape())));
            }
            let v = index_vec(&t).map_err(|e| ctx.error(e.message))?;
            if v.is_empty() {
                return Err(ctx.error("ragged splits may not be empty."));
            }
            if v[0] != 0 {
                return Err(ctx.error(format!("First value of ragged splits must be 0, got {}", v[0])));
            }
            if v.windows(2).any(|p| p[1] < p[0]) {
                return Err(ctx.error("Ragged splits should be non decreasing."));
            }
            splits.push(v);
        }
        let values = ctx.input(k)?;
        if values.rank() == 0 {
            return Err(ctx.error("rt_dense_values must have rank >= 1"));
        }
        // Each level's splits end at the next level's row count; the last at the values'.
        for i in 0..k {
            let want = if i + 1 < k { splits[i + 1].len() as i64 - 1 } else { values.dims()[0] as i64 };
            let last = *splits[i].last().unwrap_or(&0);
            if last != want {
                return Err(ctx.error(format!(
                    "Final value of ragged splits must match the length the corresponding ragged values: got {last}, \
                     expected {want}"
                )));
            }
        }
        let inner = &values.dims()[1..];
        let per_value: usize = inner.iter().product();
        let nvals = values.dims()[0];
        let rank = 1 + k + inner.len();
        let total = nvals * per_value;
        check_alloc(&[total, rank], DataType::Int64).map_err(|e| ctx.error_with(e))?;
        let mut indices = ferroflow_core::alloc::with_capacity::<i64>(&[total, rank])?;
        let mut prefix = vec![0i64; 1 + k];
        // Walks the rows outermost first, in order; at the innermost level each value's
        // elements get the inner dims' positions.
        fn walk(
            splits: &[Vec<i64>],
            level: usize,
            start: usize,
            end: usize,
            prefix: &mut Vec<i64>,
            inner: &[usize],
            out: &mut Vec<i64>,
        ) {
            for row in start..end {
                prefix[level] = (row - start) as i64;
                if level == splits.len() {
                    let n: usize = inner.iter().product();
                    for flat in 0..n {
                        out.extend_from_slice(prefix);
                        let mut rest = flat;
                        let at = out.len();
                        out.resize(at + inner.len(), 0);
                        for d in (0..inner.len()).rev() {
                            out[at + d] = (rest % inner[d]) as i64;
                            rest /= inner[d];
                        }
                    }
                } else {
                    let s = &splits[level];
                    walk(splits, level + 1, s[row] as usize, s[row + 1] as usize, prefix, inner, out);
                }
            }
        }
        let rows = splits[0].len() - 1;
        walk(&splits, 0, 0, rows, &mut prefix, inner, &mut indices);
        let mut shape = vec![rows as i64];
        for s in &splits {
            shape.push(s.windows(2).map(|p| p[1] - p[0]).max().unwrap_or(0));
        }
        shape.extend(inner.iter().map(|&d| d as i64));
        let flat = values.reshape(vec![total])?;
        ctx.set_output(0, Tensor::new(vec![total, rank], indices)?)?;
        ctx.set_output(1, flat)?;
        ctx.set_output(2, Tensor::new(vec![rank], shape)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("RaggedTensorToSparse", |n| {
        let k = n.attr_int("RAGGED_RANK")?;
        if k < 1 {
            return Err(Status::invalid_argument(format!("RaggedTensorToSparse: RAGGED_RANK must be >= 1, got {k}")));
        }
        Ok(Box::new(RaggedTensorToSparse { ragged_rank: k as usize }))
    });
}
