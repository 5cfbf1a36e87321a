//! Numeric checks of the SparseDenseCwiseMul and SparseDenseCwiseDiv gradients, for the
//! sparse values and the dense side, with dense sides of full, broadcast and lower rank; and
//! of the SparseAdd and SparseSlice gradients (through the gradient ops SparseAddGrad and
//! SparseSliceGrad): overlapping and disjoint entries, an entry the threshold drops (its
//! gradient is zero on both sides), a slice keeping some entries.

use crate::util::*;
use ferroflow_core::Tensor;
use ferroflow_graph::{ops, Output, Scope};

fn cwise(s: &Scope, op: &str, values: Output, dense: Output) -> Output {
    let ind = ferroflow_graph::ops::constant(
        s,
        Tensor::new(vec![5, 3], vec![1i64, 2, 0, 0, 0, 1, 0, 2, 1, 2, 1, 1, 0, 0, 0]).unwrap(),
    );
    let shape = ferroflow_graph::ops::constant(s, Tensor::vec(vec![3i64, 3, 2]));
    s.op(op).input(ind).input(values).input(shape).input(dense).build().output(0)
}

#[test]
fn sparse_dense_cwise_mul_and_div() {
    for op in ["SparseDenseCwiseMul", "SparseDenseCwiseDiv"] {
        for (i, dense) in [vec![3, 3, 2], vec![3, 1, 2], vec![2], vec![1, 3, 1]].into_iter().enumerate() {
            // Dense values away from 0, so the quotient is smooth.
            let d = values(&dense, 600 + i as u64, 0.5, 2.0, &[], 0.0);
            let vals = [uniform(&[5], 610 + i as u64), d];
            for mode in [Mode::Static, Mode::Dims] {
                let e = check(|s, v| cwise(s, op, x(v, 0), x(v, 1)), &vals, &[0, 1], mode);
                ok(&format!("{op} dense {dense:?} {mode:?}"), e, TOL);
            }
        }
    }
}

fn matrix(s: &Scope, rows: &[[i64; 2]]) -> Output {
    ops::constant(s, Tensor::new(vec![rows.len(), 2], rows.concat()).unwrap())
}

fn sparse_add(s: &Scope, a: Output, b: Output, thresh: f64) -> Output {
    let a_ind = matrix(s, &[[0, 1], [1, 1], [2, 0]]);
    let b_ind = matrix(s, &[[0, 0], [0, 1], [2, 2]]);
    let shape = i64s(s, &[3, 3]);
    s.op("SparseAdd")
        .input(a_ind)
        .input(a)
        .input(shape.clone())
        .input(b_ind)
        .input(b)
        .input(shape)
        .input(ops::constant(s, thresh))
        .build()
        .output(1)
}

#[test]
fn sparse_add_gradient() {
    // a's [1,1] (0.1, alone) falls under the 0.5 threshold: dropped, zero gradient.
    let a = Tensor::new(vec![3], vec![1.5f64, 0.1, -2.0]).unwrap();
    let b = Tensor::new(vec![3], vec![0.7f64, 2.5, -1.25]).unwrap();
    for thresh in [0.0, 0.5] {
        for mode in [Mode::Static, Mode::Dims] {
            let e = check(|s, v| sparse_add(s, x(v, 0), x(v, 1), thresh), &[a.clone(), b.clone()], &[0, 1], mode);
            ok(&format!("SparseAdd thresh {thresh} {mode:?}"), e, TOL);
        }
    }
}

#[test]
fn sparse_slice_gradient() {
    let build = |s: &Scope, v: &[Output]| {
        let ind = matrix(s, &[[0, 0], [1, 0], [1, 2], [2, 1], [3, 3]]);
        let o = s
            .op("SparseSlice")
            .input(ind)
            .input(x(v, 0))
            .input(i64s(s, &[4, 4]))
            .input(i64s(s, &[1, 1]))
            .input(i64s(s, &[2, 2]))
            .build();
        o.output(1)
    };
    for mode in [Mode::Static, Mode::Dims] {
        let e = check(build, &[uniform(&[5], 41)], &[0], mode);
        ok(&format!("SparseSlice {mode:?}"), e, TOL);
    }
}
