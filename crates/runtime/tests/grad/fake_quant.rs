//! The gradients of fake quantization. A quantized value is piecewise constant, so central
//! differences say nothing; TensorFlow's gradient is the straight-through estimator, and
//! these tests check the graph gradients give exactly its values: the incoming gradient
//! where the input lies in the nudged range, and, for the `Vars` forms, the sums below and
//! above the range as the gradients of `min` and `max`.

use ferroflow_core::Tensor;
use ferroflow_graph::{gradients, ops, Scope};
use ferroflow_runtime::{DirectSession, StepRunner};

/// The gradients of `sum(w * fake_quant(x))` with respect to x, min and max.
fn grads(per_channel: bool, x: Vec<f32>, dims: Vec<usize>, min: Tensor, max: Tensor, w: Vec<f32>) -> Vec<Vec<f32>> {
    let s = Scope::new_root();
    let xo = ops::constant(&s, Tensor::new(dims.clone(), x).unwrap());
    let (lo, hi) = (ops::constant(&s, min), ops::constant(&s, max));
    let y = ops::fake_quant_with_min_max_vars(&s, xo.clone(), lo.clone(), hi.clone(), 8, per_channel);
    let loss = ops::sum(
        &s,
        ops::mul(&s, y, ops::constant(&s, Tensor::new(dims, w).unwrap())),
        ops::constant(&s, vec![0i32, 1]),
        false,
    );
    let g: Vec<_> = gradients(&s, &[loss], &[xo, lo, hi], None).unwrap().into_iter().map(Option::unwrap).collect();
    s.status().unwrap();
    let sess = DirectSession::new(s.graph());
    let out = sess.run(&[], &g.iter().collect::<Vec<_>>(), &[]).unwrap();
    out.iter().map(|t| t.as_slice::<f32>().unwrap().to_vec()).collect()
}

#[test]
fn vars_gradient_is_straight_through_and_sums_the_clipped_parts() {
    let x = vec![-3.0, -0.5, 0.5, 3.0, 2.0, -2.0];
    let w = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let g = grads(false, x, vec![2, 3], Tensor::scalar(-1.0f32), Tensor::scalar(1.0f32), w);
    assert_eq!(g[0], vec![0.0, 2.0, 3.0, 0.0, 0.0, 0.0]);
    assert_eq!(g[1], vec![1.0 + 6.0]);
    assert_eq!(g[2], vec![4.0 + 5.0]);
}

#[test]
fn per_channel_gradient_sums_each_channel() {
    // Two rows of three channels with ranges [-1, 1], [0, 2] and the all-zero range (whose
    // gradient passes everything and gives its ends none).
    let x = vec![-2.0, -0.5, 5.0, 0.5, 3.0, -5.0];
    let w = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let min = Tensor::new(vec![3], vec![-1.0f32, 0.0, 0.0]).unwrap();
    let max = Tensor::new(vec![3], vec![1.0f32, 2.0, 0.0]).unwrap();
    let g = grads(true, x, vec![2, 3], min, max, w);
    assert_eq!(g[0], vec![0.0, 0.0, 3.0, 4.0, 0.0, 6.0]);
    assert_eq!(g[1], vec![1.0, 2.0, 0.0]);
    assert_eq!(g[2], vec![0.0, 5.0, 0.0]);
}
