//! Numeric checks of the SparseDenseCwiseMul and SparseDenseCwiseDiv gradients, for the
//! sparse values and the dense side, with dense sides of full, broadcast and lower rank.

mod grad_util;

use ferroflow_core::Tensor;
use ferroflow_graph::{Output, Scope};
use grad_util::*;

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
