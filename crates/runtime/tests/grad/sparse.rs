//! Numeric checks of the segment reductions' gradients: `Segment*`, `UnsortedSegment*` and
//! `SparseSegment*[WithNumSegments]` (through the `SparseSegment*Grad` kernels).

use crate::util::{assert_grad, distinct, i32s, i64s, rand};
use ferroflow_graph::ops;

#[test]
fn sorted_segment_sum_and_mean() {
    for op in ["SegmentSum", "SegmentMean"] {
        assert_grad(
            &format!("{op} [6,3] ids [0,0,2,2,2,4]"),
            |s, x| ops::segment_reduce(s, op, x[0].clone(), i32s(s, &[0, 0, 2, 2, 2, 4])),
            &[rand(&[6, 3], 1)],
            &[0],
        );
        assert_grad(
            &format!("{op} [4,2,2] int64 ids [1,1,1,3]"),
            |s, x| ops::segment_reduce(s, op, x[0].clone(), i64s(s, &[1, 1, 1, 3])),
            &[rand(&[4, 2, 2], 2)],
            &[0],
        );
    }
}

#[test]
fn sorted_segment_min_max_prod() {
    // Distinct values: no ties at the maximum / minimum.
    for op in ["SegmentMax", "SegmentMin", "SegmentProd"] {
        assert_grad(
            &format!("{op} [5,3] ids [0,0,1,3,3]"),
            |s, x| ops::segment_reduce(s, op, x[0].clone(), i32s(s, &[0, 0, 1, 3, 3])),
            &[distinct(&[5, 3], 3)],
            &[0],
        );
    }
}

#[test]
fn unsorted_segment_reductions() {
    for op in ["UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"] {
        assert_grad(
            &format!("{op} [6,2] ids [3,0,-1,3,1,0] into 5"),
            |s, x| {
                let ids = i32s(s, &[3, 0, -1, 3, 1, 0]);
                ops::unsorted_segment_reduce(s, op, x[0].clone(), ids, ops::constant(s, 5i32))
            },
            &[distinct(&[6, 2], 4)],
            &[0],
        );
        assert_grad(
            &format!("{op} [2,3,2] 2-D int64 ids into 3"),
            |s, x| {
                let ids = ops::constant(s, ferroflow_core::Tensor::new(vec![2, 3], vec![1i64, 0, 1, 2, 0, 2]).unwrap());
                ops::unsorted_segment_reduce(s, op, x[0].clone(), ids, ops::constant(s, 3i64))
            },
            &[distinct(&[2, 3, 2], 5)],
            &[0],
        );
    }
}

#[test]
fn sparse_segment_reductions() {
    for kind in ["Sum", "Mean", "SqrtN"] {
        assert_grad(
            &format!("SparseSegment{kind} [5,3] indices [0,3,3,1,4,2]"),
            |s, x| {
                let (idx, seg) = (i32s(s, &[0, 3, 3, 1, 4, 2]), i32s(s, &[0, 0, 1, 3, 3, 3]));
                ops::sparse_segment_reduce(s, kind, x[0].clone(), idx, seg, None)
            },
            &[rand(&[5, 3], 6)],
            &[0],
        );
        assert_grad(
            &format!("SparseSegment{kind}WithNumSegments [4,2] int64 ids into 6"),
            |s, x| {
                let (idx, seg) = (i64s(s, &[2, 0, 2]), i64s(s, &[1, 1, 4]));
                ops::sparse_segment_reduce(s, kind, x[0].clone(), idx, seg, Some(ops::constant(s, 6i32)))
            },
            &[rand(&[4, 2], 7)],
            &[0],
        );
    }
}

fn idx64(s: &ferroflow_graph::Scope, rows: usize, v: &[i64]) -> ferroflow_graph::Output {
    ops::constant(s, ferroflow_core::Tensor::new(vec![rows, v.len() / rows], v.to_vec()).unwrap())
}

#[test]
fn sparse_fill_empty_rows() {
    assert_grad(
        "SparseFillEmptyRows values and default, rows 0, 2, 4 empty",
        |s, x| {
            let idx = idx64(s, 3, &[3, 1, 1, 0, 3, 0]);
            let (_, values, _, _) = ops::sparse_fill_empty_rows(s, idx, x[0].clone(), i64s(s, &[5, 2]), x[1].clone());
            // Weighted so each output position matters differently.
            ops::mul(s, values, ops::constant(s, vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]))
        },
        &[rand(&[3], 8), rand(&[], 9)],
        &[0, 1],
    );
}

#[test]
fn sparse_reorder() {
    assert_grad(
        "SparseReorder values",
        |s, x| {
            let idx = idx64(s, 4, &[1, 2, 0, 3, 1, 0, 0, 1]);
            let (_, values) = ops::sparse_reorder(s, idx, x[0].clone(), i64s(s, &[2, 4]));
            ops::mul(s, values, ops::constant(s, vec![1.0f64, -2.0, 3.0, 0.5]))
        },
        &[rand(&[4], 10)],
        &[0],
    );
}

#[test]
fn sparse_tensor_dense_mat_mul() {
    for (adj_a, adj_b) in [(false, false), (true, false), (false, true), (true, true)] {
        assert_grad(
            &format!("SparseTensorDenseMatMul adjoint_a {adj_a} adjoint_b {adj_b}"),
            |s, x| {
                let (idx, shape) = if adj_a {
                    (idx64(s, 4, &[0, 0, 2, 0, 1, 1, 3, 2]), i64s(s, &[4, 3]))
                } else {
                    (idx64(s, 4, &[0, 0, 0, 2, 1, 1, 2, 3]), i64s(s, &[3, 4]))
                };
                ops::sparse_tensor_dense_mat_mul(s, idx, x[0].clone(), shape, x[1].clone(), adj_a, adj_b)
            },
            &[rand(&[4], 11), rand(if adj_b { &[2, 4] } else { &[4, 2] }, 12)],
            &[0, 1],
        );
    }
}
