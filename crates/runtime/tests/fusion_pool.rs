//! The remapper's max-pool rewrite: `MaxPool` + `MaxPoolGrad` (+ `ReluGrad`) run as
//! `_MaxPoolWithIndex` + `_MaxPoolGradWithIndex`, with results and gradients equal bit for
//! bit to the plain graph, and pools whose gradient reads something else left alone.

mod fusion_common;

use ferroflow_core::{DataType, NodeAttrs, Tensor};
use ferroflow_graph::{ops, Output, Scope};
use ferroflow_runtime::StepRunner;
use ferroflow_runtime::{fuse_ops, DirectSession};
use fusion_common::{count_ops, fused_equals_plain, loss_and_gradients, plain_and_fused, seeded};

/// The MNIST CNN's shape in small: two conv + bias + relu + 2x2 max pool layers (the
/// second pool 3x3 stride 2, whose windows overlap), a dense layer, a loss and every
/// parameter's gradient.
fn net(s: &Scope) -> (Output, Vec<Output>) {
    let x = ops::placeholder_named(s, "x", DataType::Float, Some(&[-1, 8, 8, 2]));
    let f1 = ops::constant(s, seeded(&[3, 3, 2, 4], 1));
    let b1 = ops::constant(s, seeded(&[4], 2));
    let c1 = ops::relu(s, ops::bias_add(s, ops::conv2d(s, x.clone(), f1.clone(), &[1, 1, 1, 1], "SAME"), b1.clone()));
    let p1 = ops::max_pool(s, c1, &[1, 2, 2, 1], &[1, 2, 2, 1], "SAME");
    let f2 = ops::constant(s, seeded(&[3, 3, 4, 4], 3));
    let b2 = ops::constant(s, seeded(&[4], 4));
    let c2 = ops::relu(s, ops::bias_add(s, ops::conv2d(s, p1, f2.clone(), &[1, 1, 1, 1], "SAME"), b2.clone()));
    let p2 = ops::max_pool(s, c2, &[1, 3, 3, 1], &[1, 2, 2, 1], "SAME");
    let flat = ops::reshape(s, p2, ops::constant(s, Tensor::vec(vec![-1i32, 2 * 2 * 4])));
    let w = ops::constant(s, seeded(&[16, 3], 5));
    let logits = ops::mat_mul(s, flat, w.clone(), false, false);
    (x, loss_and_gradients(s, logits, &[f1, b1, f2, b2, w]))
}

#[test]
fn indexed_pools_give_the_plain_results_and_gradients_bit_for_bit() {
    let fused = fused_equals_plain(net, &seeded(&[3, 8, 8, 2], 7), 6);
    for (i, a) in fused.iter().enumerate() {
        assert!(a.as_slice::<f32>().unwrap().iter().any(|v| *v != 0.0), "fetch {i} is all zeros");
    }
}

#[test]
fn both_pools_are_indexed_and_the_relu_gradient_folds_where_windows_do_not_overlap() {
    let (gd, g, n) = plain_and_fused(net);
    assert_eq!(n, 2 + 2, "two conv chains, two pool gradients");
    assert_eq!(count_ops(&g, "MaxPool") + count_ops(&g, "MaxPoolGrad"), 0);
    assert_eq!(count_ops(&g, "_MaxPoolWithIndex"), 2);
    assert_eq!(count_ops(&g, "_MaxPoolGradWithIndex"), 2);
    // The 2x2 pool's ReluGrad is folded; the overlapping 3x3 pool's stays.
    assert_eq!(count_ops(&gd, "ReluGrad") - count_ops(&g, "ReluGrad"), 1);
    let folded: Vec<_> = g.node.iter().filter(|n| n.op == "_MaxPoolGradWithIndex").collect();
    assert_eq!(folded.iter().filter(|n| n.attr_bool("relu").unwrap()).count(), 1);
    // The folded node takes the ReluGrad's name, so its consumers still find it.
    for n in folded {
        assert!(gd.node.iter().any(|m| m.name == n.name && (m.op == "ReluGrad" || m.op == "MaxPoolGrad")));
        assert!(n.input[1].ends_with(":1"), "{:?}", n.input);
    }
}

#[test]
fn a_gradient_of_another_tensor_or_a_second_consumer_keeps_the_plain_ops() {
    let s = Scope::new_root();
    let x = ops::placeholder_named(&s, "x", DataType::Float, Some(&[1, 4, 4, 1]));
    let y = ops::max_pool(&s, x.clone(), &[1, 2, 2, 1], &[1, 2, 2, 1], "VALID");
    let other = ops::placeholder_named(&s, "other", DataType::Float, Some(&[1, 4, 4, 1]));
    let g = ops::placeholder_named(&s, "g", DataType::Float, Some(&[1, 2, 2, 1]));
    // MaxPoolGrad of a different input than the one pooled.
    let _ = ops::max_pool_grad(&s, other, y.clone(), g.clone(), &[1, 2, 2, 1], &[1, 2, 2, 1], "VALID");
    assert_eq!(fuse_ops(&s.graph().to_graph_def()).1, 0);

    // A gradient whose output is also fetched elsewhere: indexed, but the ReluGrad stays.
    let s = Scope::new_root();
    let x = ops::placeholder_named(&s, "x", DataType::Float, Some(&[1, 4, 4, 1]));
    let y = ops::max_pool(&s, x.clone(), &[1, 2, 2, 1], &[1, 2, 2, 1], "VALID");
    let g = ops::placeholder_named(&s, "g", DataType::Float, Some(&[1, 2, 2, 1]));
    let dx = ops::max_pool_grad(&s, x.clone(), y, g.clone(), &[1, 2, 2, 1], &[1, 2, 2, 1], "VALID");
    let r = ops::relu_grad(&s, dx.clone(), x.clone());
    let (gd, n) = fuse_ops(&s.graph().to_graph_def());
    assert_eq!((n, count_ops(&gd, "ReluGrad")), (1, 0), "the only consumer folds");
    let _ = ops::identity(&s, dx.clone());
    let (gd, n) = fuse_ops(&s.graph().to_graph_def());
    assert_eq!((n, count_ops(&gd, "ReluGrad")), (1, 1), "a second consumer keeps the ReluGrad");
    // In a session the fetch of `dx` is that second consumer.
    let sess = DirectSession::new(s.graph());
    let feeds = [(&x, seeded(&[1, 4, 4, 1], 1)), (&g, seeded(&[1, 2, 2, 1], 2))];
    let got = sess.run(&feeds, &[&dx, &r], &[]).unwrap();
    sess.set_fusion(false);
    assert_eq!(got, sess.run(&feeds, &[&dx, &r], &[]).unwrap());
}
