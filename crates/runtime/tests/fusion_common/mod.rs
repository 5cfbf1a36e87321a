//! What the fusion tests (`fusion.rs`, `fusion_pool.rs`) share: seeded float32 values, the
//! loss-and-gradients fetches of their small networks, a network's graph fused and its ops
//! counted, and running a network with fusion on or off to compare the results bit for bit.

use ferroflow_core::proto::GraphDef;
use ferroflow_core::Tensor;
use ferroflow_graph::{gradients, ops, Output, Scope};
use ferroflow_runtime::{fuse_ops, DirectSession, StepRunner};

pub fn seeded(dims: &[usize], seed: u64) -> Tensor {
    ferroflow_kernels::testutil::seeded_f32(dims, seed)
}

/// The loss `sum(logits²)` of 2-D `logits`, then the gradient of every parameter: a
/// network's fetches.
pub fn loss_and_gradients(s: &Scope, logits: Output, params: &[Output]) -> Vec<Output> {
    let loss = ops::sum(s, ops::square(s, logits), ops::constant(s, Tensor::vec(vec![0i32, 1])), false);
    let grads = gradients(s, std::slice::from_ref(&loss), params, None).unwrap();
    let mut fetches = vec![loss];
    fetches.extend(grads.into_iter().map(|g| g.expect("every parameter has a gradient")));
    fetches
}

/// The graph of the network `net` builds, the same graph fused, and the number of fusions.
pub fn plain_and_fused(net: fn(&Scope) -> (Output, Vec<Output>)) -> (GraphDef, GraphDef, usize) {
    let s = Scope::new_root();
    let _ = net(&s);
    let gd = s.graph().to_graph_def();
    let (fused, n) = fuse_ops(&gd);
    (gd, fused, n)
}

/// The number of nodes of type `op` in `gd`.
pub fn count_ops(gd: &GraphDef, op: &str) -> usize {
    gd.node.iter().filter(|n| n.op == op).count()
}

/// Builds the network `net` (its input placeholder and fetches) on a fresh graph and runs
/// its fetches once, feeding `input`, with fusion on or off.
fn run_net(fusion: bool, net: fn(&Scope) -> (Output, Vec<Output>), input: &Tensor) -> Vec<Tensor> {
    let s = Scope::new_root();
    let (x, fetches) = net(&s);
    let sess = DirectSession::new(s.graph());
    sess.set_fusion(fusion);
    let fetches: Vec<&Output> = fetches.iter().collect();
    sess.run(&[(&x, input.clone())], &fetches, &[]).unwrap()
}

/// Runs the network `net` builds with fusion on and off, feeding `input`; asserts it has
/// `n` fetches and that each fused float32 result has the shape and the very bits of its
/// plain twin. Returns the fused results.
pub fn fused_equals_plain(net: fn(&Scope) -> (Output, Vec<Output>), input: &Tensor, n: usize) -> Vec<Tensor> {
    let (fused, plain) = (run_net(true, net, input), run_net(false, net, input));
    assert_eq!(fused.len(), n);
    for (i, (a, b)) in fused.iter().zip(plain).enumerate() {
        assert_eq!(a.dims(), b.dims(), "fetch {i}");
        let (a, b) = (a.as_slice::<f32>().unwrap(), b.as_slice::<f32>().unwrap());
        assert!(a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()), "fetch {i}: {a:?} vs {b:?}");
    }
    fused
}
