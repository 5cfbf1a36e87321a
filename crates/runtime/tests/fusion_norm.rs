//! Batch norms fused with their activations (TensorFlow's `_FusedBatchNormEx` and
//! `_FusedBatchNormGradEx`): results and gradients equal bit for bit to the unfused graph,
//! and pairs whose intermediates are read elsewhere left alone.

mod fusion_common;

use ferroflow_core::{DataType, Tensor};
use ferroflow_graph::{ops, Output, Scope};
use ferroflow_runtime::fuse_ops;
use fusion_common::{count_ops, fused_equals_plain, loss_and_gradients, plain_and_fused, seeded};

/// `act(batch_norm(x))` in training mode with batch statistics, on `x` of 3 channels.
fn bn_act(s: &Scope, x: Output, seed: u64, act: fn(&Scope, Output) -> Output) -> (Output, [Output; 2]) {
    // Scales of up to ±8, so that a Relu6 clips on both sides.
    let big: Vec<f32> = seeded(&[3], seed).as_slice::<f32>().unwrap().iter().map(|v| v * 8.0).collect();
    let scale = ops::constant(s, Tensor::new(vec![3], big).unwrap());
    let offset = ops::constant(s, seeded(&[3], seed + 1));
    let empty = || ops::constant(s, Tensor::new(vec![0], Vec::<f32>::new()).unwrap());
    let bn = ops::fused_batch_norm(s, x, scale.clone(), offset.clone(), empty(), empty(), 0.001, true);
    (act(s, bn.y), [scale, offset])
}

/// conv 3×3 → BN → Relu6 → conv 1×1 → BN → Relu → dense: the loss and the gradients of the
/// filters, scales, offsets and the dense weights.
fn net(s: &Scope) -> (Output, Vec<Output>) {
    let x = ops::placeholder_named(s, "x", DataType::Float, Some(&[-1, 5, 5, 2]));
    let f1 = ops::constant(s, seeded(&[3, 3, 2, 3], 1));
    let c1 = ops::conv2d(s, x.clone(), f1.clone(), &[1, 1, 1, 1], "SAME");
    let (h1, [g1, b1]) = bn_act(s, c1, 2, ops::relu6);
    let f2 = ops::constant(s, seeded(&[1, 1, 3, 3], 4));
    let c2 = ops::conv2d(s, h1, f2.clone(), &[1, 1, 1, 1], "SAME");
    let (h2, [g2, b2]) = bn_act(s, c2, 5, ops::relu);
    let flat = ops::reshape(s, h2, ops::constant(s, Tensor::vec(vec![-1i32, 75])));
    let w = ops::constant(s, seeded(&[75, 2], 7));
    let logits = ops::mat_mul(s, flat, w.clone(), false, false);
    (x, loss_and_gradients(s, logits, &[f1, g1, b1, f2, g2, b2, w]))
}

#[test]
fn fused_batch_norms_equal_the_unfused_ones_bit_for_bit() {
    let fused = fused_equals_plain(net, &seeded(&[4, 5, 5, 2], 9), 8);
    assert!(fused[0].scalar_value::<f32>().unwrap() > 0.0);
    // Both activations clip somewhere, so their gradients' masks matter.
    let dscale = fused[2].as_slice::<f32>().unwrap();
    assert!(dscale.iter().all(|v| v.is_finite() && *v != 0.0), "{dscale:?}");
}

/// The first activation of [`net`] clips at 0 and at 6 on the seeded input.
#[test]
fn the_relu6_of_the_test_net_clips_on_both_sides() {
    fn first(s: &Scope) -> (Output, Vec<Output>) {
        let x = ops::placeholder_named(s, "x", DataType::Float, Some(&[-1, 5, 5, 2]));
        let f1 = ops::constant(s, seeded(&[3, 3, 2, 3], 1));
        let c1 = ops::conv2d(s, x.clone(), f1, &[1, 1, 1, 1], "SAME");
        (x, vec![bn_act(s, c1, 2, ops::relu6).0])
    }
    let y = fused_equals_plain(first, &seeded(&[4, 5, 5, 2], 9), 1);
    let y = y[0].as_slice::<f32>().unwrap();
    assert!(y.contains(&0.0) && y.contains(&6.0) && y.iter().any(|v| *v > 0.0 && *v < 6.0));
}

#[test]
fn the_training_graph_fuses_both_pairs_and_their_gradients() {
    let (gd, fused, count) = plain_and_fused(net);
    assert_eq!(count, 4, "two forward pairs and two gradient pairs");
    assert_eq!(count_ops(&fused, "_FusedBatchNormEx"), 2);
    assert_eq!(count_ops(&fused, "_FusedBatchNormGradEx"), 2);
    for op in ["FusedBatchNormV3", "FusedBatchNormGradV3", "ReluGrad", "Relu6Grad", "Relu", "Relu6"] {
        assert_eq!(count_ops(&fused, op), 0, "{op} left");
    }
    // The activations keep their names as Identity nodes; the gradients' activation nodes go.
    assert_eq!(count_ops(&fused, "Identity"), count_ops(&gd, "Identity") + 2);
    assert_eq!(gd.node.len() - fused.node.len(), 2);
    let ex = fused.node.iter().find(|n| n.op == "_FusedBatchNormGradEx").unwrap();
    assert_eq!(ex.input.iter().filter(|i| !i.starts_with('^')).count(), 8, "{:?}", ex.input);
    // Each gradient's `y` is the activation of its own forward batch norm, so both kernels
    // recompute it from `x` (and `fused_batch_norms_equal_the_unfused_ones_bit_for_bit`
    // checks that this gives the unfused bits).
    for ex in fused.node.iter().filter(|n| n.op == "_FusedBatchNormGradEx") {
        assert!(ex.attr.contains_key("_y_from_x"), "{} does not recompute y", ex.name);
    }
}

#[test]
fn a_batch_norm_output_read_elsewhere_is_not_fused() {
    // y is fetched besides the activation: nothing fuses, and both runs agree.
    fn fetch_y(s: &Scope) -> (Output, Vec<Output>) {
        let x = ops::placeholder_named(s, "x", DataType::Float, Some(&[-1, 2, 2, 3]));
        let scale = ops::constant(s, seeded(&[3], 1));
        let offset = ops::constant(s, seeded(&[3], 2));
        let empty = || ops::constant(s, Tensor::new(vec![0], Vec::<f32>::new()).unwrap());
        let bn = ops::fused_batch_norm(s, x.clone(), scale, offset, empty(), empty(), 0.001, true);
        let r = ops::relu(s, bn.y.clone());
        (x, vec![bn.y, r])
    }
    // (A fetch is a `_Retval` reader by the time a session fuses; here another node.)
    let (gd, _, count) = plain_and_fused(fetch_y);
    assert_eq!(count, 1);
    let mut g = gd.clone();
    let bn = g.node.iter().find(|n| n.op == "FusedBatchNormV3").unwrap().name.clone();
    let reader = ferroflow_core::proto::NodeDef {
        name: "reads_y".into(),
        op: "Identity".into(),
        input: vec![bn],
        ..Default::default()
    };
    g.node.push(reader);
    assert_eq!(fuse_ops(&g).1, 0);
    fused_equals_plain(fetch_y, &seeded(&[2, 2, 2, 3], 3), 2);
    // A ReluGrad read twice keeps the gradient apart; the forward pair still fuses.
    let (gd, _, _) = plain_and_fused(net);
    let mut g = gd.clone();
    let relu_grad = g.node.iter().find(|n| n.op == "ReluGrad").unwrap().clone();
    let mut extra = relu_grad.clone();
    extra.name = "second_use".into();
    extra.input = vec![relu_grad.name.clone(), relu_grad.input[1].clone()];
    g.node.push(extra);
    let (fused, n) = fuse_ops(&g);
    assert_eq!(n, 3);
    assert_eq!(count_ops(&fused, "_FusedBatchNormGradEx"), 1);
}

#[test]
fn inference_batch_norms_fuse_too() {
    fn inference(s: &Scope) -> (Output, Vec<Output>) {
        let x = ops::placeholder_named(s, "x", DataType::Float, Some(&[-1, 3, 3, 3]));
        let v = |seed| ops::constant(s, seeded(&[3], seed));
        // A large scale and a small variance, so that Relu6 clips on both sides.
        let scale = ops::mul(s, v(1), ops::constant(s, Tensor::scalar(200.0f32)));
        let var = ops::square(s, v(4));
        let bn = ops::fused_batch_norm(s, x.clone(), scale, v(2), v(3), var, 0.001, false);
        (x, vec![ops::relu6(s, bn.y)])
    }
    let (_, fused, count) = plain_and_fused(inference);
    assert_eq!((count, count_ops(&fused, "_FusedBatchNormEx")), (1, 1));
    let got = fused_equals_plain(inference, &seeded(&[2, 3, 3, 3], 5), 1);
    let y = got[0].as_slice::<f32>().unwrap();
    assert!(y.contains(&0.0) && y.contains(&6.0) && y.iter().any(|v| *v > 0.0 && *v < 6.0), "{y:?}");
}

#[test]
fn inference_gradients_recompute_the_activation_bit_for_bit() {
    fn inference_grads(s: &Scope) -> (Output, Vec<Output>) {
        let x = ops::placeholder_named(s, "x", DataType::Float, Some(&[-1, 3, 3, 3]));
        let v = |seed| ops::constant(s, seeded(&[3], seed));
        let scale = ops::mul(s, v(1), ops::constant(s, Tensor::scalar(200.0f32)));
        let offset = v(2);
        let var = ops::square(s, v(4));
        let bn = ops::fused_batch_norm(s, x.clone(), scale.clone(), offset.clone(), v(3), var, 0.001, false);
        let flat = ops::reshape(s, ops::relu6(s, bn.y), ops::constant(s, Tensor::vec(vec![-1i32, 27])));
        (x.clone(), loss_and_gradients(s, flat, &[x, scale, offset]))
    }
    let (_, fused, _) = plain_and_fused(inference_grads);
    let ex: Vec<_> = fused.node.iter().filter(|n| n.op == "_FusedBatchNormGradEx").collect();
    assert_eq!(ex.len(), 1);
    assert!(ex[0].attr.contains_key("_y_from_x"));
    let got = fused_equals_plain(inference_grads, &seeded(&[2, 3, 3, 3], 5), 4);
    // The activation's mask cuts some elements' gradient and passes others.
    let dx = got[1].as_slice::<f32>().unwrap();
    assert!(dx.contains(&0.0) && dx.iter().any(|v| *v != 0.0), "{dx:?}");
}
