//! `SparseSplit` (`tf.sparse.split`): a sparse tensor cut into `num_split` pieces along
//! `split_dim` (negative counts from the end). A dimension of size `d` gives pieces of
//! `d / num_split` and the first `d % num_split` pieces one more; each entry goes to its
//! piece with its index shifted there, the pieces keeping the input's entry order.

use ferroflow_core::{NodeAttrs, Shape, Status, Tensor, TensorType};

use crate::array::util::{index_scalar, index_vec};
use crate::{KernelRegistry, OpContext, OpKernel};

struct SparseSplit {
    num_split: usize,
}

fn dims_str(t: &Tensor) -> String {
    format!("[{}]", t.dims().iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","))
}

/// The piece of index `x` and its index there, for pieces of `size` (the first `extra`
/// pieces one longer).
fn piece_of(x: i64, size: i64, extra: i64) -> (i64, i64) {
    let long = extra * (size + 1);
    if x < long {
        (x / (size + 1), x % (size + 1))
    } else {
        (extra + (x - long) / size, (x - long) % size)
    }
}

fn pick<T: TensorType + Clone>(values: &Tensor, members: &[usize]) -> Result<Tensor, Status> {
    let v = values.as_slice::<T>()?;
    Tensor::new(Shape::new(vec![members.len()]), members.iter().map(|&e| v[e].clone()).collect::<Vec<T>>())
}

impl OpKernel for SparseSplit {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (axis_t, ix, values, shape_t) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?, ctx.input(3)?);
        if axis_t.rank() != 0 {
            return Err(ctx.error(format!("Input axis should be a scalar but received shape {}", dims_str(&axis_t))));
        }
        if ix.rank() != 2 {
            return Err(ctx.error(format!("Input indices should be a matrix but received shape {}", dims_str(&ix))));
        }
        if values.rank() != 1 {
            // TensorFlow's message shows the indices' shape here.
            return Err(ctx.error(format!("Input values should be a vector but received shape {}", dims_str(&ix))));
        }
        if shape_t.rank() != 1 {
            return Err(ctx.error(format!("Input shape should be a vector but received shape {}", dims_str(&shape_t))));
        }
        let (n, rank) = (ix.dims()[0], ix.dims()[1]);
        if values.dims()[0] != n {
            return Err(ctx
                .error(format!("Number of elements in indices ({n}) and values ({}) do not match", values.dims()[0])));
        }
        let shape = index_vec(&shape_t).map_err(|e| ctx.error(e.message))?;
        if shape.len() != rank {
            return Err(ctx.error(format!("Index rank ({rank}) and shape rank ({}) do not match", shape.len())));
        }
        let idx = index_vec(&ix).map_err(|e| ctx.error(e.message))?;
        for e in 0..n {
            let row = &idx[e * rank..(e + 1) * rank];
            if row.iter().zip(&shape).any(|(&x, &d)| x < 0 || x >= d) {
                let shown = row.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
                return Err(ctx.error(format!("Sparse index tuple indices[{e}, :] = [{shown}] is out of bounds")));
            }
        }
        let given = index_scalar(&axis_t).map_err(|e| ctx.error(e.message))?;
        let r = rank as i64;
        let axis = if given < 0 { given + r } else { given };
        if axis < 0 || axis >= r {
            return Err(ctx.error(format!("Input axis should be in range [{}, {r}), got {given}", -r)));
        }
        let axis = axis as usize;
        let dim = shape[axis];
        let k = self.num_split as i64;
        if k < 1 || k > dim {
            return Err(ctx.error(format!(
                "Input num_split should be between 1 and the splitting dimension size ({dim}), got {k}"
            )));
        }
        if let Some(d) = shape.iter().find(|&&d| d < 0) {
            return Err(ctx.error(format!("Expected a non-negative size, got {d}")));
        }
        if self.num_split.checked_mul(3) != Some(ctx.num_outputs()) {
            return Err(ctx.error(format!(
                "num_split = {} does not match the node's {} outputs",
                self.num_split,
                ctx.num_outputs()
            )));
        }
        let (size, extra) = (dim / k, dim % k);
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); self.num_split];
        let mut rows: Vec<Vec<i64>> = vec![Vec::new(); self.num_split];
        for e in 0..n {
            let row = &idx[e * rank..(e + 1) * rank];
            let (p, at) = piece_of(row[axis], size, extra);
            let p = p as usize;
            members[p].push(e);
            rows[p].extend(row.iter().enumerate().map(|(j, &x)| if j == axis { at } else { x }));
        }
        for (p, (member, piece_rows)) in members.iter().zip(rows.iter_mut()).enumerate() {
            let len = size + i64::from((p as i64) < extra);
            let mut piece_shape = shape.clone();
            piece_shape[axis] = len;
            let vals = ferroflow_core::with_dtype!(values.dtype(), T => pick::<T>(&values, member))?;
            ctx.set_output(p, Tensor::new(Shape::new(vec![member.len(), rank]), std::mem::take(piece_rows))?)?;
            ctx.set_output(self.num_split + p, vals)?;
            ctx.set_output(2 * self.num_split + p, Tensor::new(Shape::new(vec![rank]), piece_shape)?)?;
        }
        Ok(())
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseSplit", |n| {
        let k = n.attr_int("num_split")?;
        if k < 1 {
            return Err(Status::invalid_argument(format!("num_split must be at least 1, got {k}")));
        }
        Ok(Box::new(SparseSplit { num_split: k as usize }))
    });
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code, DataType, Status, Tensor};

    use super::piece_of;
    use crate::testutil::{expect_node_error, node, run_kernel};

    #[test]
    fn uneven_pieces_give_the_first_ones_one_more() {
        // 7 in 3 pieces: [0, 3), [3, 5), [5, 7).
        let got: Vec<(i64, i64)> = (0..7).map(|x| piece_of(x, 2, 1)).collect();
        assert_eq!(got, vec![(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0), (2, 1)]);
        // Even: 6 in 3.
        assert_eq!(piece_of(5, 2, 0), (2, 1));
    }

    fn split(
        axis: Tensor,
        ix: &[i64],
        rows: usize,
        n_vals: usize,
        shape: &[i64],
        k: i64,
    ) -> Result<Vec<Tensor>, Status> {
        let n = node("SparseSplit", &[("num_split", attr::int(k)), ("T", attr::ty(DataType::Float))]);
        let inputs = vec![
            axis,
            Tensor::new(vec![rows, ix.len().checked_div(rows).unwrap_or(shape.len())], ix.to_vec()).unwrap(),
            Tensor::new(vec![n_vals], vec![1.0f32; n_vals]).unwrap(),
            Tensor::new(vec![shape.len()], shape.to_vec()).unwrap(),
        ];
        run_kernel(n, inputs, 3 * k.max(0) as usize)
    }

    fn err(r: Result<Vec<Tensor>, Status>, want: &str) {
        expect_node_error(r, Code::InvalidArgument, want);
    }

    #[test]
    fn tensorflows_errors() {
        let ix = [0, 0, 1, 2, 3, 1, 4, 4];
        let a = |x: i64| Tensor::scalar(x);
        err(
            split(a(0), &ix, 4, 4, &[5, 5], 6),
            "Input num_split should be between 1 and the splitting dimension size (5), got 6",
        );
        err(split(a(2), &ix, 4, 4, &[5, 5], 2), "Input axis should be in range [-2, 2), got 2");
        err(split(a(-3), &ix, 4, 4, &[5, 5], 2), "Input axis should be in range [-2, 2), got -3");
        let shifted: Vec<i64> = ix.iter().map(|x| x + 3).collect();
        err(split(a(0), &shifted, 4, 4, &[5, 5], 2), "Sparse index tuple indices[1, :] = [4, 5] is out of bounds");
        err(split(a(0), &ix, 4, 2, &[5, 5], 2), "Number of elements in indices (4) and values (2) do not match");
        err(split(a(0), &ix, 4, 4, &[5, 5, 5], 2), "Index rank (2) and shape rank (3) do not match");
        let vector = Tensor::new(vec![1], vec![0i64]).unwrap();
        err(split(vector, &ix, 4, 4, &[5, 5], 2), "Input axis should be a scalar but received shape [1]");
        err(split(a(0), &[], 0, 0, &[4, -4], 2), "Expected a non-negative size, got -4");
    }
}
