//! `SparseSparseMaximum`, `SparseSparseMinimum` (`tf.sparse.maximum`/`minimum`): two sparse
//! tensors of one dense shape, combined entry by entry over the union of their indices, an
//! index missing on one side counting as 0 there. Indices are walked in order (both inputs
//! sorted, as TensorFlow requires); the output lists the union in that order.

use std::cmp::Ordering;

use ferroflow_core::{half, Shape, Status, Tensor};

use super::util::{sparse_input, Indices};
use crate::dispatch::dispatch;
use crate::math::elem::Num;
use crate::{KernelRegistry, OpContext, OpKernel};

struct SparseSparse {
    max: bool,
}

/// The union of `a` and `b`'s indices, and the values of both sides there (0 where absent).
fn union<T: Num>(a: &Indices, av: &[T], b: &Indices, bv: &[T], max: bool) -> Result<(Vec<i64>, Vec<T>), Status> {
    // Eigen's default (`a < b ? b : a` and `b < a ? b : a`), as TensorFlow's functors.
    let pick = |x: T, y: T| {
        let y_wins = if max { x < y } else { y < x };
        if y_wins {
            y
        } else {
            x
        }
    };
    let (mut i, mut j) = (0, 0);
    let mut idx = ferroflow_core::alloc::with_capacity::<i64>(&[a.n + b.n, a.rank])?;
    let mut vals = ferroflow_core::alloc::with_capacity::<T>(&[a.n + b.n])?;
    while i < a.n || j < b.n {
        let ord = match (i < a.n, j < b.n) {
            (true, true) => a.row(i).cmp(b.row(j)),
            (true, false) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match ord {
            Ordering::Equal => {
                idx.extend_from_slice(a.row(i));
                vals.push(pick(av[i], bv[j]));
                i += 1;
                j += 1;
            }
            Ordering::Less => {
                idx.extend_from_slice(a.row(i));
                vals.push(pick(av[i], T::default()));
                i += 1;
            }
            Ordering::Greater => {
                idx.extend_from_slice(b.row(j));
                vals.push(pick(T::default(), bv[j]));
                j += 1;
            }
        }
    }
    Ok((idx, vals))
}

impl SparseSparse {
    fn run<T: Num>(
        &self,
        ctx: &mut OpContext,
        a: &Indices,
        av: &Tensor,
        b: &Indices,
        bv: &Tensor,
    ) -> Result<(), Status> {
        let (idx, vals) = union(a, av.as_slice::<T>()?, b, bv.as_slice::<T>()?, self.max)?;
        let n = vals.len();
        ctx.set_output(0, Tensor::new(Shape::new(vec![n, a.rank]), idx)?)?;
        ctx.set_output(1, Tensor::new(Shape::new(vec![n]), vals)?)
    }
}

impl OpKernel for SparseSparse {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (a, av, a_shape) = sparse_input(ctx, 0, ["Input a_indices", "Input a_values", "Input a_shape"])?;
        let (b, bv, b_shape) = sparse_input(ctx, 3, ["Input b_indices", "Input b_values", "Input b_shape"])?;
        if a_shape != b_shape {
            return Err(ctx.error(format!(
                "Operands' shapes do not match: got {a_shape:?} and {b_shape:?} for {}",
                ctx.node().op
            )));
        }
        if a.rank != a_shape.len() || b.rank != b_shape.len() {
            return Err(ctx.error(format!(
                "Sparse tensors must have as many index columns as their shape has dims: got {} and {} for shape {a_shape:?}",
                a.rank, b.rank
            )));
        }
        if av.dtype() != bv.dtype() {
            return Err(ctx.error(format!("a_values are {} but b_values are {}", av.dtype(), bv.dtype())));
        }
        dispatch!(av.dtype(), ctx, [f32, f64, i32, i64, i16, i8, u8, u16, u32, u64, half::f16, half::bf16], |T| self
            .run::<T>(ctx, &a, &av, &b, &bv))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseSparseMaximum", |_| Ok(Box::new(SparseSparse { max: true })));
    r.add("SparseSparseMinimum", |_| Ok(Box::new(SparseSparse { max: false })));
}
