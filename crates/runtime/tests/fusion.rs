//! Operator fusion (TensorFlow's remapper on CPU): MatMul/Conv2D + BiasAdd (+ Relu) run
//! as one kernel, with results and gradients equal bit for bit to the unfused graph, and
//! chains whose intermediates are used elsewhere (fetched, consumed twice, control edges)
//! left alone.

mod fusion_common;

use ferroflow_core::proto::GraphDef;
use ferroflow_core::{DataType, Tensor};
use ferroflow_graph::{ops, Output, Scope};
use ferroflow_runtime::StepRunner;
use ferroflow_runtime::{fuse_ops, DirectSession};
use fusion_common::{count_ops, fused_equals_plain, loss_and_gradients, plain_and_fused, seeded};

/// A small CNN: conv 3x3 (4 channels) + bias + relu, then dense + bias + relu, then dense +
/// bias (no relu), a loss, and the gradients of every parameter: the input and the fetches.
fn net(s: &Scope) -> (Output, Vec<Output>) {
    let x = ops::placeholder_named(s, "x", DataType::Float, Some(&[-1, 6, 6, 2]));
    let f = ops::constant(s, seeded(&[3, 3, 2, 4], 1));
    let cb = ops::constant(s, seeded(&[4], 2));
    let c = ops::relu(s, ops::bias_add(s, ops::conv2d(s, x.clone(), f.clone(), &[1, 1, 1, 1], "SAME"), cb.clone()));
    let flat = ops::reshape(s, c, ops::constant(s, Tensor::vec(vec![-1i32, 6 * 6 * 4])));
    let w1 = ops::constant(s, seeded(&[144, 8], 3));
    let b1 = ops::constant(s, seeded(&[8], 4));
    let h = ops::relu(s, ops::bias_add(s, ops::mat_mul(s, flat, w1.clone(), false, false), b1.clone()));
    let w2 = ops::constant(s, seeded(&[8, 3], 5));
    let b2 = ops::constant(s, seeded(&[3], 6));
    let logits = ops::bias_add(s, ops::mat_mul(s, h, w2.clone(), false, false), b2.clone());
    (x, loss_and_gradients(s, logits, &[f, cb, w1, b1, w2, b2]))
}

#[test]
fn fused_results_and_gradients_equal_the_unfused_ones_bit_for_bit() {
    let fused = fused_equals_plain(net, &seeded(&[3, 6, 6, 2], 7), 7);
    assert!(fused[0].scalar_value::<f32>().unwrap() > 0.0);
}

fn ops_of(gd: &GraphDef) -> Vec<String> {
    gd.node.iter().map(|n| n.op.clone()).collect()
}

#[test]
fn the_training_graph_fuses_every_forward_chain() {
    let (gd, fused, count) = plain_and_fused(net);
    assert_eq!(count, 3, "conv+bias+relu, matmul+bias+relu, matmul+bias");
    let ops = ops_of(&fused);
    assert_eq!(count_ops(&fused, "_FusedConv2D"), 1);
    assert_eq!(count_ops(&fused, "_FusedMatMul"), 2);
    // The backward pass keeps its own ops: the gradients read the Relu outputs, which
    // the fused nodes now produce under the Relu's names.
    assert!(ops.iter().any(|o| o == "ReluGrad"));
    assert!(ops.iter().any(|o| o == "BiasAddGrad"));
    assert_eq!(count_ops(&fused, "Conv2D"), 0);
    assert_eq!(gd.node.len() - fused.node.len(), 5, "3 chains fuse 3 + 3 + 2 nodes into 3");
    let relu_names: Vec<&str> = gd.node.iter().filter(|n| n.op == "Relu").map(|n| n.name.as_str()).collect();
    for r in relu_names {
        let f = fused.node.iter().find(|m| m.name == r).expect("the fused node keeps the Relu's name");
        assert!(f.op.starts_with("_Fused"), "{} is {}", f.name, f.op);
    }
}

/// `relu(x · w + b)` on a fed `[-1, 2]` input: the scope, `x`, and the MatMul, BiasAdd and
/// Relu outputs.
fn dense_relu() -> (Scope, Output, [Output; 3]) {
    let s = Scope::new_root();
    let x = ops::placeholder_named(&s, "x", DataType::Float, Some(&[-1, 2]));
    let w = ops::constant(&s, seeded(&[2, 2], 1));
    let b = ops::constant(&s, seeded(&[2], 2));
    let mm = ops::mat_mul(&s, x.clone(), w, false, false);
    let ba = ops::bias_add(&s, mm.clone(), b);
    let r = ops::relu(&s, ba.clone());
    (s, x, [mm, ba, r])
}

#[test]
fn an_intermediate_used_elsewhere_is_not_fused() {
    // Fetching the BiasAdd output (or the MatMul's) keeps that chain as it is.
    let (s, x, [mm, ba, r]) = dense_relu();
    let sess = DirectSession::new(s.graph());
    let feed = seeded(&[2, 2], 3);
    let got = sess.run(&[(&x, feed.clone())], &[&mm, &ba, &r], &[]).unwrap();
    sess.set_fusion(false);
    let want = sess.run(&[(&x, feed)], &[&mm, &ba, &r], &[]).unwrap();
    assert_eq!(got, want);

    // A second consumer of the MatMul, and a control edge from the BiasAdd.
    let gd = s.graph().to_graph_def();
    let mut two = gd.clone();
    let mut extra = two.node.iter().find(|n| n.op == "Relu").unwrap().clone();
    extra.name = "second_use".into();
    extra.input = vec![mm.name()];
    two.node.push(extra);
    assert_eq!(fuse_ops(&two).1, 0);
    let with_control_from = |node: &str| {
        let mut g = gd.clone();
        let mut noop = ferroflow_core::proto::NodeDef { name: "after".into(), op: "NoOp".into(), ..Default::default() };
        noop.input = vec![format!("^{node}")];
        g.node.push(noop);
        fuse_ops(&g)
    };
    assert_eq!(with_control_from(mm.op_name()).1, 0, "a control edge out of the MatMul keeps the chain");
    // A control edge out of the BiasAdd: MatMul + BiasAdd fuse under the BiasAdd's name
    // (the edge still finds it), the Relu stays apart.
    let (g, n) = with_control_from(ba.op_name());
    assert_eq!(n, 1);
    let f = g.node.iter().find(|m| m.name == ba.op_name()).unwrap();
    assert_eq!(f.op, "_FusedMatMul");
    assert!(g.node.iter().any(|m| m.op == "Relu"));
    // Without those, the chain fuses.
    assert_eq!(fuse_ops(&gd).1, 1);
}

#[test]
fn nodes_on_different_devices_are_not_fused() {
    let (s, _, _) = dense_relu();
    let mut gd = s.graph().to_graph_def();
    for n in gd.node.iter_mut() {
        n.device =
            if n.op == "MatMul" { "/job:ps/task:0/device:CPU:0" } else { "/job:worker/task:0/device:CPU:0" }.into();
    }
    assert_eq!(fuse_ops(&gd).1, 0);
}
