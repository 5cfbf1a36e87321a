//! Numeric checks of the gradients of Slice, StridedSlice (every mask), StridedSliceGrad,
//! Pad, PadV2, Tile and BroadcastTo.

use crate::util::{assert_grad, i32s, i64s, rand};
use ferroflow_core::Tensor;
use ferroflow_graph::ops::{self, SliceMasks};
use ferroflow_graph::{Output, Scope};

/// Builds the op under test from its input.
type Build<'a> = Box<dyn Fn(&Scope, Output) -> Output + 'a>;

#[test]
fn slice() {
    assert_grad(
        "[4,5] begin [1,2] size [2,-1]",
        |s, x| ops::slice(s, x[0].clone(), i32s(s, &[1, 2]), i32s(s, &[2, -1])),
        &[rand(&[4, 5], 1)],
        &[0],
    );
    assert_grad(
        "[3,4,2] int64 begin [0,1,1] size [3,2,1]",
        |s, x| ops::slice(s, x[0].clone(), i64s(s, &[0, 1, 1]), i64s(s, &[3, 2, 1])),
        &[rand(&[3, 4, 2], 2)],
        &[0],
    );
    assert_grad(
        "[5] begin [4] size [1]",
        |s, x| ops::slice(s, x[0].clone(), i32s(s, &[4]), i32s(s, &[1])),
        &[rand(&[5], 3)],
        &[0],
    );
    assert_grad(
        "empty slice",
        |s, x| ops::slice(s, x[0].clone(), i32s(s, &[1, 0]), i32s(s, &[0, 2])),
        &[rand(&[2, 2], 4)],
        &[0],
    );
}

/// `x[b:e:st]` with the given masks, int32 indices.
fn ss(s: &Scope, x: Output, b: &[i32], e: &[i32], st: &[i32], m: SliceMasks) -> Output {
    ops::strided_slice(s, x, i32s(s, b), i32s(s, e), i32s(s, st), m)
}

#[test]
fn strided_slice_masks() {
    let none = SliceMasks::default();
    let cases: Vec<(&str, Vec<usize>, Build)> = vec![
        ("x[1:3]", vec![5, 3], Box::new(move |s, x| ss(s, x, &[1], &[3], &[1], none))),
        (
            "x[:, 0] (shrink)",
            vec![4, 3],
            Box::new(|s, x| {
                ss(s, x, &[0, 0], &[0, 1], &[1, 1], SliceMasks { begin: 1, end: 1, shrink_axis: 2, ..none })
            }),
        ),
        ("x[::-1]", vec![5], Box::new(|s, x| ss(s, x, &[0], &[0], &[-1], SliceMasks { begin: 1, end: 1, ..none }))),
        (
            "x[::-1] rank 2",
            vec![3, 2],
            Box::new(|s, x| ss(s, x, &[0], &[0], &[-1], SliceMasks { begin: 1, end: 1, ..none })),
        ),
        (
            "x[..., 1]",
            vec![2, 3, 4],
            Box::new(|s, x| ss(s, x, &[0, 1], &[0, 2], &[1, 1], SliceMasks { ellipsis: 1, shrink_axis: 2, ..none })),
        ),
        (
            "x[tf.newaxis, 1:]",
            vec![3, 2],
            Box::new(|s, x| ss(s, x, &[0, 1], &[0, 0], &[1, 1], SliceMasks { new_axis: 1, end: 2, ..none })),
        ),
        (
            "x[1:, tf.newaxis, ..., ::2]",
            vec![3, 2, 5],
            Box::new(|s, x| {
                let m = SliceMasks { new_axis: 2, ellipsis: 4, begin: 8, end: 9, ..none };
                ss(s, x, &[1, 0, 0, 0], &[0, 0, 0, 0], &[1, 1, 1, 2], m)
            }),
        ),
        (
            "x[3:0:-2, 1:]",
            vec![5, 3],
            Box::new(|s, x| ss(s, x, &[3, 1], &[0, 0], &[-2, 1], SliceMasks { end: 2, ..none })),
        ),
        (
            "x[-1] (negative shrink)",
            vec![4, 2],
            Box::new(|s, x| ss(s, x, &[-1], &[0], &[1], SliceMasks { shrink_axis: 1, ..none })),
        ),
        ("x[-3:-1]", vec![5], Box::new(|s, x| ss(s, x, &[-3], &[-1], &[1], none))),
        (
            "x[1, 2] of rank 2 (scalar)",
            vec![3, 4],
            Box::new(|s, x| ss(s, x, &[1, 2], &[2, 3], &[1, 1], SliceMasks { shrink_axis: 3, ..none })),
        ),
        (
            "x[1:, ::2] int64",
            vec![3, 5],
            Box::new(|s, x| {
                let m = SliceMasks { end: 3, ..none };
                ops::strided_slice(s, x, i64s(s, &[1, 0]), i64s(s, &[0, 0]), i64s(s, &[1, 2]), m)
            }),
        ),
        ("out-of-range ends are clamped x[1:100]", vec![4], Box::new(|s, x| ss(s, x, &[1], &[100], &[1], none))),
    ];
    for (what, dims, f) in cases {
        assert_grad(what, |s, x| f(s, x[0].clone()), &[rand(&dims, 5)], &[0]);
    }
}

#[test]
fn strided_slice_grad_of_grad() {
    // StridedSliceGrad is linear in dy; its gradient is the forward slice.
    let m = SliceMasks { begin: 1, end: 1, shrink_axis: 2, ..Default::default() };
    assert_grad(
        "StridedSliceGrad x[:, 1]",
        |s, x| {
            ops::strided_slice_grad(
                s,
                i32s(s, &[3, 4]),
                i32s(s, &[0, 1]),
                i32s(s, &[0, 2]),
                i32s(s, &[1, 1]),
                x[0].clone(),
                m,
            )
        },
        &[rand(&[3], 6)],
        &[0],
    );
    assert_grad(
        "StridedSliceGrad x[4:0:-2]",
        |s, x| {
            let d = Default::default();
            ops::strided_slice_grad(s, i32s(s, &[6]), i32s(s, &[4]), i32s(s, &[0]), i32s(s, &[-2]), x[0].clone(), d)
        },
        &[rand(&[2], 7)],
        &[0],
    );
}

fn paddings(v: &[i32]) -> Tensor {
    Tensor::new(vec![v.len() / 2, 2], v.to_vec()).unwrap()
}

#[test]
fn pad() {
    assert_grad(
        "[2,3] [[1,0],[2,1]]",
        |s, x| ops::pad(s, x[0].clone(), ops::constant(s, paddings(&[1, 0, 2, 1]))),
        &[rand(&[2, 3], 8)],
        &[0],
    );
    assert_grad(
        "[2,1,2] int64 paddings",
        |s, x| {
            let p = Tensor::new(vec![3, 2], vec![0i64, 1, 2, 0, 1, 1]).unwrap();
            ops::pad(s, x[0].clone(), ops::constant(s, p))
        },
        &[rand(&[2, 1, 2], 9)],
        &[0],
    );
    assert_grad(
        "[4] no padding",
        |s, x| ops::pad(s, x[0].clone(), ops::constant(s, paddings(&[0, 0]))),
        &[rand(&[4], 10)],
        &[0],
    );
    assert_grad(
        "PadV2 with constant 2.5",
        |s, x| ops::pad_v2(s, x[0].clone(), ops::constant(s, paddings(&[1, 1, 0, 2])), ops::constant(s, 2.5f64)),
        &[rand(&[2, 2], 11)],
        &[0],
    );
}

#[test]
fn tile() {
    for (dims, m) in
        [(vec![2, 3], vec![2, 1]), (vec![3], vec![3]), (vec![2, 1, 2], vec![1, 3, 2]), (vec![1, 2], vec![3, 2])]
    {
        assert_grad(
            &format!("{dims:?} x {m:?}"),
            |s, x| ops::tile(s, x[0].clone(), i32s(s, &m)),
            &[rand(&dims, 12)],
            &[0],
        );
    }
    assert_grad("int64 multiples", |s, x| ops::tile(s, x[0].clone(), i64s(s, &[2, 2])), &[rand(&[2, 2], 13)], &[0]);
    assert_grad("multiple 0", |s, x| ops::tile(s, x[0].clone(), i32s(s, &[0, 2])), &[rand(&[2, 2], 14)], &[0]);
}

#[test]
fn broadcast_to() {
    for (dims, to) in [
        (vec![3], vec![2, 3]),
        (vec![2, 1], vec![2, 4]),
        (vec![1, 3, 1], vec![2, 3, 4]),
        (vec![], vec![2, 2]),
        (vec![2, 2], vec![2, 2]),
        (vec![3, 1], vec![2, 1, 3, 2]),
    ] {
        assert_grad(
            &format!("{dims:?} -> {to:?}"),
            |s, x| ops::broadcast_to(s, x[0].clone(), i32s(s, &to)),
            &[rand(&dims, 15)],
            &[0],
        );
    }
    assert_grad("int64 shape", |s, x| ops::broadcast_to(s, x[0].clone(), i64s(s, &[3, 2])), &[rand(&[2], 16)], &[0]);
}
