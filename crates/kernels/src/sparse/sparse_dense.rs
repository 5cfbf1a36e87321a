//! `SparseTensorDenseMatMul` (`op(A) @ op(B)`, A sparse 2-D) and `SparseTensorDenseAdd`
//! (`A + B`, dense).

use ferroflow_core::{NodeAttrs, Shape, Status, Tensor};

use super::elem::SegElem;
use super::util::sparse_input;
use crate::array::util::{check_alloc, copy_vec};
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

struct MatMul {
    adjoint_a: bool,
    adjoint_b: bool,
}

/// `out[r, :] += v * op(B)[c, :]` for each entry (r, c, v) of op(A).
fn matmul_typed<T: SegElem>(
    entries: &[(usize, usize)],
    a: &Tensor,
    b: &Tensor,
    (m, n): (usize, usize),
    adjoint_b: bool,
) -> Result<Tensor, Status> {
    let av = a.as_slice::<T>()?;
    let bv = b.as_slice::<T>()?;
    let bcols = b.dims()[1];
    let mut out = ferroflow_core::alloc::zeroed::<T>(&[m, n])?;
    if n > 0 {
        if adjoint_b {
            // op(B)[c, j] = B[j, c]: a strided column of B.
            for (e, &(r, c)) in entries.iter().enumerate() {
                let v = av[e];
                for (j, o) in out[r * n..(r + 1) * n].iter_mut().enumerate() {
                    *o = o.add(v.mul(bv[j * bcols + c]));
                }
            }
        } else {
            for (e, &(r, c)) in entries.iter().enumerate() {
                let v = av[e];
                let row = &bv[c * n..(c + 1) * n];
                out[r * n..(r + 1) * n].iter_mut().zip(row).for_each(|(o, &x)| *o = o.add(v.mul(x)));
            }
        }
    }
    Tensor::new(Shape::new(vec![m, n]), out)
}

impl OpKernel for MatMul {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (idx, a, shape) = sparse_input(ctx, 0, ["a_indices", "a_values", "a_shape"])?;
        let b = ctx.input(3)?;
        if shape.len() != 2 || idx.rank != 2 {
            return Err(ctx.error(format!(
                "Tensor 'a_shape' is not a vector of 2 elements, or a_indices has {} columns",
                idx.rank
            )));
        }
        if b.rank() != 2 {
            return Err(ctx.error(format!("Tensor 'b' is not a matrix, got shape {}", b.shape())));
        }
        if a.dtype() != b.dtype() {
            return Err(ctx.error("a_values and b must have one dtype"));
        }
        if shape.iter().any(|&d| d < 0) {
            return Err(ctx.error(format!("a_shape has a negative dimension: {shape:?}")));
        }
        let (rows, cols) = (shape[0] as u64, shape[1] as u64);
        let (m, inner_a) = if self.adjoint_a { (cols, rows) } else { (rows, cols) };
        let (inner_b, n) = if self.adjoint_b { (b.dims()[1], b.dims()[0]) } else { (b.dims()[0], b.dims()[1]) };
        if inner_a != inner_b as u64 {
            return Err(ctx.error(format!(
                "Cannot multiply A and B because inner dimension does not match: {inner_a} vs. {inner_b}.  Did you \
                 forget a transpose?  Dimensions of A: [{rows}, {cols}).  Dimensions of B: {}",
                b.shape()
            )));
        }
        let m = usize::try_from(m).map_err(|_| ctx.error("a_shape is too large"))?;
        let mut entries = Vec::with_capacity(idx.n);
        for i in 0..idx.n {
            let (r, c) = (idx.row(i)[0], idx.row(i)[1]);
            if r < 0 || r as u64 >= rows || c < 0 || c as u64 >= cols {
                let (k, d, lim) = if r < 0 || r as u64 >= rows { (r, 0, rows) } else { (c, 1, cols) };
                return Err(ctx.error(format!("k ({k}) from index[{i},{d}] out of bounds (>={lim})")));
            }
            let (r, c) = (r as usize, c as usize);
            entries.push(if self.adjoint_a { (c, r) } else { (r, c) });
        }
        check_alloc(&[m, n], b.dtype()).map_err(|e| ctx.error_with(e))?;
        let adj_b = self.adjoint_b;
        let out =
            dispatch!(b.dtype(), ctx, [f32, f64, i32, i64], |T| matmul_typed::<T>(&entries, &a, &b, (m, n), adj_b))?;
        ctx.set_output(0, out)
    }
}

fn add_typed<T: SegElem>(offsets: &[usize], a: &Tensor, b: &Tensor) -> Result<Tensor, Status> {
    let av = a.as_slice::<T>()?;
    let mut out = copy_vec::<T>(b)?;
    for (&o, &v) in offsets.iter().zip(av) {
        out[o] = out[o].add(v);
    }
    Tensor::new(b.shape().clone(), out)
}

op_kernel! {
    struct DenseAdd;
    fn compute(&self, ctx) {
        let (idx, a, shape) = sparse_input(ctx, 0, ["a_indices", "a_values", "a_shape"])?;
        let b = ctx.input(3)?;
        let bdims: Vec<i64> = b.dims().iter().map(|&d| d as i64).collect();
        if shape != bdims {
            return Err(ctx.error(format!("Dimension mismatch: a_shape = {shape:?} but b.shape = {}", b.shape())));
        }
        if idx.rank != shape.len() {
            return Err(ctx.error(format!("a_indices has {} columns but a_shape has {} dims", idx.rank, shape.len())));
        }
        if a.dtype() != b.dtype() {
            return Err(ctx.error("a_values and b must have one dtype"));
        }
        let mut offsets = Vec::with_capacity(idx.n);
        for i in 0..idx.n {
            let mut off = 0usize;
            for (k, &x) in idx.row(i).iter().enumerate() {
                if x < 0 || x >= shape[k] {
                    return Err(ctx.error(format!("Index {i} of a_indices is out of bounds of a_shape {shape:?}")));
                }
                off = off * b.dims()[k] + x as usize;
            }
            offsets.push(off);
        }
        let out = dispatch!(b.dtype(), ctx, [f32, f64, i32, i64, u8, i8, i16, u16, u32, u64], |T| add_typed::<T>(
            &offsets, &a, &b
        ))?;
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseTensorDenseMatMul", |n| {
        let flag = |k: &str| if n.has_attr(k) { n.attr_bool(k) } else { Ok(false) };
        Ok(Box::new(MatMul { adjoint_a: flag("adjoint_a")?, adjoint_b: flag("adjoint_b")? }))
    });
    r.add("SparseTensorDenseAdd", |_| Ok(Box::new(DenseAdd)));
}
