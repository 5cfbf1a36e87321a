//! The gradients of quantize-and-dequantize. The output is a step function of the input, so
//! central differences say nothing; TensorFlow's gradients are straight-through estimators
//! and these tests check the graph gradients give exactly their values: `V2` and `V3` pass
//! the incoming gradient everywhere and give the range none, `V4` passes it where the input
//! lies in [`input_min`, `input_max`] (per slice along `axis`) and gives the range ends
//! zeros.

use ferroflow_core::Tensor;
use ferroflow_graph::{gradients, ops, Output, Scope};
use ferroflow_runtime::{DirectSession, StepRunner};

#[derive(Clone, Copy)]
enum Op {
    V2,
    V3,
    V4,
}

/// The gradients of `sum(w * qdq(x))` with respect to x, min and max (`None`: no gradient).
fn grads(op: Op, x: Vec<f32>, min: Tensor, max: Tensor, axis: i64, given: bool, w: Vec<f32>) -> Vec<Option<Vec<f32>>> {
    let s = Scope::new_root();
    let dims = vec![2, x.len() / 2];
    let xo = ops::constant(&s, Tensor::new(dims.clone(), x).unwrap());
    let (lo, hi) = (ops::constant(&s, min), ops::constant(&s, max));
    let o = ops::QdqOptions { range_given: given, axis, ..ops::QdqOptions::default() };
    let y = match op {
        Op::V2 => ops::quantize_and_dequantize(&s, xo.clone(), lo.clone(), hi.clone(), o, true),
        Op::V4 => ops::quantize_and_dequantize(&s, xo.clone(), lo.clone(), hi.clone(), o, false),
        Op::V3 => {
            let bits = ops::constant(&s, Tensor::scalar(8i32));
            ops::quantize_and_dequantize_v3(&s, xo.clone(), lo.clone(), hi.clone(), bits, o)
        }
    };
    let loss = ops::sum(
        &s,
        ops::mul(&s, y, ops::constant(&s, Tensor::new(dims, w).unwrap())),
        ops::constant(&s, vec![0i32, 1]),
        false,
    );
    let g = gradients(&s, &[loss], &[xo, lo, hi], None).unwrap();
    s.status().unwrap();
    let present: Vec<&Output> = g.iter().flatten().collect();
    let sess = DirectSession::new(s.graph());
    let mut out = sess.run(&[], &present, &[]).unwrap().into_iter();
    g.iter().map(|o| o.as_ref().map(|_| out.next().unwrap().as_slice::<f32>().unwrap().to_vec())).collect()
}

fn x() -> Vec<f32> {
    vec![-3.0, -0.5, 0.5, 3.0, 2.0, -2.0]
}

fn w() -> Vec<f32> {
    vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
}

#[test]
fn v4_gradient_is_clipped_to_the_given_range() {
    let g = grads(Op::V4, x(), Tensor::scalar(-1.0f32), Tensor::scalar(2.0f32), -1, true, w());
    // In [-1, 2]: -0.5, 0.5 and 2.0 (the end itself counts).
    assert_eq!(g[0], Some(vec![0.0, 2.0, 3.0, 0.0, 5.0, 0.0]));
    assert_eq!(g[1], Some(vec![0.0]));
    assert_eq!(g[2], Some(vec![0.0]));
}

#[test]
fn v4_per_axis_gradient_uses_each_slices_range() {
    // Per column of the 2x3 input; the range is the one passed in (not given to the forward
    // op, which then quantizes over each column's own range, as TensorFlow does).
    let min = Tensor::new(vec![3], vec![-4.0f32, 0.0, -2.0]).unwrap();
    let max = Tensor::new(vec![3], vec![-1.0f32, 1.0, 0.0]).unwrap();
    let g = grads(Op::V4, x(), min, max, 1, false, w());
    // Column 0: -3 in, 3 out; column 1: -0.5 out, 2 out; column 2: 0.5 out, -2 in.
    assert_eq!(g[0], Some(vec![1.0, 0.0, 0.0, 0.0, 0.0, 6.0]));
    assert_eq!(g[1], Some(vec![0.0; 3]));
    assert_eq!(g[2], Some(vec![0.0; 3]));
}

#[test]
fn v2_and_v3_pass_the_gradient_straight_through() {
    for op in [Op::V2, Op::V3] {
        let g = grads(op, x(), Tensor::scalar(-1.0f32), Tensor::scalar(2.0f32), -1, true, w());
        assert_eq!(g[0], Some(w()));
        assert_eq!((g[1].clone(), g[2].clone()), (None, None));
    }
}
