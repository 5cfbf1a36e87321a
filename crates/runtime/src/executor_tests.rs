//! Unit tests of the executor (kept beside it, in their own file for size).
use super::*;
use crate::rendezvous::LocalRendezvous;
use ferroflow_core::proto::GraphDef;
use ferroflow_core::Tensor;
use ferroflow_graph::{ops, Scope};
use ferroflow_kernels::ResourceMgr;

fn step() -> Arc<StepCtx> {
    let device = "/job:localhost/replica:0/task:0/device:CPU:0";
    Arc::new(StepCtx::new(1, Arc::new(LocalRendezvous::new()), Arc::new(ResourceMgr::new()), device))
}

/// An executor of `x + x` for a constant `x` of `n` floats, and the Add node's index.
fn add_of(n: usize) -> (Arc<Executor>, usize) {
    let s = Scope::new_root();
    let x = ops::constant(&s, Tensor::vec(vec![1.0f32; n]));
    let sum = ops::add(&s, x.clone(), x);
    let exec = Arc::new(Executor::new(&s.graph().to_graph_def()).unwrap());
    let id = exec.nodes.iter().position(|n| n.def.name == sum.op_name()).unwrap();
    (exec, id)
}

#[test]
fn kernels_measured_cheap_run_inline() {
    let (exec, small) = add_of(4);
    // Add is an expensive kernel: before it ran, it goes to the pool.
    assert!(exec.goes_to_pool(small));
    // A 4-element add takes far less than the threshold. (Up to 200 steps: a run
    // preempted on a busy machine counts as slow and is averaged away.)
    for _ in 0..200 {
        exec.run(step(), None).unwrap();
        if !exec.goes_to_pool(small) {
            break;
        }
    }
    assert!(!exec.goes_to_pool(small), "{} ns", exec.nodes[small].cost_ns.load(Ordering::Relaxed));
}

/// Starts a step with `start`, waits for its result and says whether it finished on
/// the calling thread.
fn finished_inline(start: impl FnOnce(StepDone)) -> (bool, Result<(), Status>) {
    let (tx, rx) = std::sync::mpsc::channel();
    start(Box::new(move |r| drop(tx.send((std::thread::current().id(), r)))));
    let (thread, r) = rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap();
    (thread == std::thread::current().id(), r)
}

#[test]
fn an_async_thread_runs_only_cheap_nodes() {
    // Const and Identity are cheap: the step ends on the calling thread.
    let s = Scope::new_root();
    let x = ops::constant(&s, 1.0f32);
    ops::identity(&s, x);
    let cheap = Arc::new(Executor::new(&s.graph().to_graph_def()).unwrap());
    let (inline, r) = finished_inline(|d| cheap.run_async_cheap_here(step(), d));
    assert!(inline && r.is_ok(), "{r:?}");
    // An Add that has never run goes to the pool: run_async keeps it on this thread,
    // run_async_cheap_here never does, and the step still completes.
    let (exec, id) = add_of(1 << 20);
    assert!(exec.goes_to_pool(id));
    let (inline, r) = finished_inline(|d| exec.run_async(step(), d));
    assert!(inline && r.is_ok(), "{r:?}");
    let (exec, _) = add_of(1 << 20);
    let (inline, r) = finished_inline(|d| exec.run_async_cheap_here(step(), d));
    assert!(!inline && r.is_ok(), "{r:?}");
    assert!(!cheap_only(), "the flag is cleared when the start returns");
}

#[test]
fn kernels_measured_costly_stay_on_the_pool() {
    let (exec, n) = add_of(1 << 22);
    for _ in 0..3 {
        exec.run(step(), None).unwrap();
    }
    assert!(exec.goes_to_pool(n), "{} ns", exec.nodes[n].cost_ns.load(Ordering::Relaxed));
}

#[test]
fn cost_estimates_average_out_one_slow_run() {
    let (exec, id) = add_of(4);
    let n = &exec.nodes[id];
    let us = std::time::Duration::from_micros;
    n.record_cost(us(1));
    assert_eq!(n.cost_ns.load(Ordering::Relaxed), 1_000, "the first run is taken as is");
    n.record_cost(us(1_000));
    assert_eq!(n.cost_ns.load(Ordering::Relaxed), 500_500, "then the mean with the estimate");
    for _ in 0..9 {
        n.record_cost(us(1));
    }
    assert!(n.cost_ns.load(Ordering::Relaxed) < INLINE_BELOW_NS, "{}", n.cost_ns.load(Ordering::Relaxed));
}

fn raw(name: &str, op: &str, inputs: &[&str]) -> ferroflow_core::proto::NodeDef {
    let mut n = ferroflow_graph::graph_util::node_def(name, op, inputs);
    if op == "Const" {
        n.attr.insert("value".into(), ferroflow_core::attr::tensor(&Tensor::scalar(1.0f32)));
        n.attr.insert("dtype".into(), ferroflow_core::attr::ty(ferroflow_core::DataType::Float));
    } else {
        n.attr.insert("T".into(), ferroflow_core::attr::ty(ferroflow_core::DataType::Float));
    }
    n
}

#[test]
fn a_cycle_is_refused_when_the_graph_is_built_naming_a_node() {
    // x -> a -> b -> a: a cycle that no Enter leads into, beside a root.
    let gd = GraphDef {
        node: vec![raw("x", "Const", &[]), raw("a", "AddV2", &["x", "b"]), raw("b", "Identity", &["a"])],
        ..Default::default()
    };
    let e = Executor::new(&gd).err().expect("a cycle");
    assert_eq!(e.code, ferroflow_core::Code::InvalidArgument, "{e}");
    assert!(e.message.contains("cycle") && (e.message.contains("'a'") || e.message.contains("'b'")), "{e}");
    // Only the cycle: no node can start.
    let gd = GraphDef { node: vec![raw("a", "Identity", &["b"]), raw("b", "Identity", &["a"])], ..Default::default() };
    let e = Executor::new(&gd).err().expect("a cycle");
    assert!(e.message.contains("cycle"), "{e}");
}

#[test]
fn loop_ops_outside_a_loop_are_refused_when_the_graph_is_built() {
    for (op, what) in [("NextIteration", "NextIteration"), ("Exit", "Exit")] {
        let gd = GraphDef {
            node: vec![raw("x", "Const", &[]), raw("n", op, &["x"]), raw("y", "Identity", &["n"])],
            ..Default::default()
        };
        let e = Executor::new(&gd).err().expect("a loop op outside a loop");
        assert_eq!(e.code, ferroflow_core::Code::InvalidArgument, "{e}");
        assert!(e.message.contains(&format!("(op {what}) is not inside a while loop frame")), "{e}");
    }
}

#[test]
fn a_graph_moves_into_its_executor_and_consts_keep_their_value_once() {
    // x = [1, 2]; y = x + x, fetched through a _Send; the nodes move in (from_graph).
    let s = Scope::new_root();
    let x = ops::constant(&s, Tensor::vec(vec![1.0f32, 2.0]));
    let y = ops::add(&s, x.clone(), x.clone());
    let gd = s.graph().to_graph_def();
    let by_copy = Executor::new(&gd).unwrap();
    let exec = Arc::new(Executor::from_graph(gd).unwrap());
    assert_eq!(exec.num_nodes(), by_copy.num_nodes());
    let c = exec.nodes.iter().find(|n| n.def.name == x.op_name()).unwrap();
    assert!(!c.def.attr.contains_key("value"), "the Const kernel holds the value, the node does not");
    assert!(c.def.attr.contains_key("dtype"));
    let a = exec.nodes.iter().position(|n| n.def.name == y.op_name()).unwrap();
    let edges: Vec<(usize, usize)> = c.out_edges.iter().map(|e| (e.dst, e.input)).collect();
    assert_eq!(edges, vec![(a, 0), (a, 1)], "one slot, both inputs of the add, in input order");
    exec.run(step(), None).unwrap();
}
