//! Fuzzing the kernels a received graph runs, in process (the executor a worker builds
//! from RegisterGraph, without the RPCs, so many more graphs per second): constants of
//! the common dtypes and shapes (and integers that are huge, negative or zero, as shape,
//! size, count and index inputs) feed one to three nodes of any registered op with
//! generated attrs, sometimes with the graph mutated further. Every step must end with a
//! status within its deadline; a kernel that panics (the executor contains it as INTERNAL
//! "the kernel panicked") is a finding, as is any other panic.

use crate::fuzz;

use ferroflow_runtime::StepRunner;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use ferroflow_core::proto::{AttrValue, GraphDef, NodeDef};
use ferroflow_core::{attr, DataType, Tensor};
use ferroflow_runtime::{DirectSession, RunOptions};
use fuzz::{graphs, largest, Rng, Run};

/// A single allocation this large (16 times the fuzzers' memory budget) is a finding.
const OVER_BUDGET: usize = 64 << 20;

fn konst(name: &str, t: &Tensor) -> NodeDef {
    let mut n = NodeDef { name: name.into(), op: "Const".into(), ..Default::default() };
    n.attr.insert("dtype".into(), attr::ty(t.dtype()));
    n.attr.insert("value".into(), attr::tensor(t));
    n
}

/// Constants of every common dtype in several shapes, and odd integers.
fn constants() -> Vec<Tensor> {
    let f = |shape: Vec<usize>| {
        let n: usize = shape.iter().product();
        Tensor::new(shape, (0..n).map(|i| i as f32 * 0.5 - 1.0).collect::<Vec<_>>()).unwrap()
    };
    vec![
        Tensor::scalar(1.5f32),
        f(vec![3]),
        f(vec![2, 3]),
        f(vec![1, 2, 2, 1]),
        f(vec![0, 2]),
        Tensor::scalar(2i32),
        Tensor::vec(vec![1i32, 0, 2]),
        Tensor::new(vec![2, 2], vec![0i32, 1, 1, 0]).unwrap(),
        Tensor::vec(vec![-1i32]),
        Tensor::scalar(-5i32),
        Tensor::scalar(i32::MAX),
        Tensor::vec(vec![i32::MAX, 2]),
        Tensor::vec(vec![i32::MIN, -1, 3]),
        Tensor::scalar(0i32),
        Tensor::scalar(3i64),
        Tensor::vec(vec![1i64 << 33, 2]),
        Tensor::vec(vec![-1i64, i64::MAX]),
        Tensor::scalar(0.25f64),
        Tensor::vec(vec![1.0f64, -2.0]),
        Tensor::scalar(true),
        Tensor::vec(vec![true, false, true]),
        Tensor::scalar(b"a,b".to_vec()),
        Tensor::vec(vec![b"x".to_vec(), Vec::new()]),
        Tensor::vec(vec![1u8, 255]),
        Tensor::vec(Vec::<f32>::new()),
        Tensor::vec(vec![f32::NAN, f32::INFINITY]),
        // Small inputs whose broadcasts, products and repeats are far over the budget.
        f(vec![2048, 1]),
        f(vec![1, 2048]),
        Tensor::new(vec![2048, 1], vec![true; 2048]).unwrap(),
        Tensor::vec(vec![0i32; 4096]),
        Tensor::scalar(vec![b'x'; 2 << 10]),
    ]
}

fn node(name: &str, op: &str, input: &[&str], attrs: &[(&str, AttrValue)]) -> NodeDef {
    let mut n = NodeDef { name: name.into(), op: op.into(), ..Default::default() };
    n.input = input.iter().map(|s| s.to_string()).collect();
    for (k, v) in attrs {
        n.attr.insert(k.to_string(), v.clone());
    }
    n
}

/// Stateful nodes whose outputs are references and handles (a variable, a resource
/// variable, queues, a table, a stack), with initializers generated nodes may depend on.
fn stateful_nodes() -> Vec<NodeDef> {
    let f = || attr::ty(DataType::Float);
    let shape = || attr::shape(Some(&[3]));
    vec![
        node("v", "VariableV2", &[], &[("dtype", f()), ("shape", shape())]),
        node("v_init", "Assign", &["v", "c1"], &[("T", f())]),
        node("rv", "VarHandleOp", &[], &[("dtype", f()), ("shape", shape())]),
        node("rv_init", "AssignVariableOp", &["rv", "c1"], &[("dtype", f())]),
        node("q", "FIFOQueueV2", &[], &[("component_types", attr::list_type(&[DataType::Float]))]),
        node("q_ref", "FIFOQueue", &[], &[("component_types", attr::list_type(&[DataType::Int32]))]),
        node(
            "table",
            "HashTableV2",
            &[],
            &[("key_dtype", attr::ty(DataType::Int64)), ("value_dtype", attr::ty(DataType::Float))],
        ),
        node("stack", "StackV2", &["c5"], &[("elem_type", f())]),
    ]
}

fn graph(rng: &mut Rng, consts: &[Tensor], ops: &[String]) -> (GraphDef, Vec<String>) {
    let mut g = GraphDef::default();
    for (i, t) in consts.iter().enumerate() {
        g.node.push(konst(&format!("c{i}"), t));
    }
    g.node.extend(stateful_nodes());
    let mut fetches = Vec::new();
    for k in 0..1 + rng.below(3) {
        let typed = graphs::typed_nodes(&g);
        let op = rng.pick(ops).clone();
        let name = format!("op{k}");
        let mut n = graphs::synth_node(rng, &op, name.clone(), &typed);
        if rng.one_in(2) {
            n.input.extend(["^v_init".to_string(), "^rv_init".to_string()]);
        }
        g.node.push(n);
        fetches.push(format!("{name}:0"));
    }
    if rng.one_in(8) {
        graphs::mutate_graph(rng, &mut g, ops);
    }
    (g, fetches)
}

#[test]
fn fuzz_kernels_of_generated_graphs() {
    let _one_at_a_time = crate::fuzz::exclusive();
    let mut run = Run::start("kernels", 3000);
    let ops = graphs::op_names();
    let consts = constants();
    for i in 0..run.iters {
        let mut rng = run.rng(i);
        let (g, fetches) = graph(&mut rng, &consts, &ops);
        let fetch = vec![fetches[rng.below(fetches.len())].clone()];
        let started = Instant::now();
        largest::reset_anywhere();
        let r = catch_unwind(AssertUnwindSafe(|| {
            let s = DirectSession::from_graph_def(&g)?;
            let opts = RunOptions { timeout: Some(Duration::from_millis(500)), ..Default::default() };
            s.run_by_name(&[], &fetch, &[], &opts)
        }));
        let took = started.elapsed();
        let ops_of = || g.node.iter().filter(|n| n.name.starts_with("op")).map(|n| n.op.clone()).collect::<Vec<_>>();
        let mut said = String::new();
        let label = match r {
            Err(p) => {
                let m = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
                run.finding(i, format!("panicked ({:?}) running {:?}: {g:?}", m, ops_of()));
                "PANIC".to_string()
            }
            Ok(Ok(_)) => "OK".to_string(),
            Ok(Err(e)) => {
                if e.message.contains("panicked") {
                    run.finding(i, format!("{e} in {g:?}"));
                } else if e.message.is_empty() {
                    run.finding(i, format!("{:?} without a message running {:?}", e.code, ops_of()));
                }
                said = e.message.clone();
                format!("{:?}", e.code)
            }
        };
        // Every output sized from its inputs goes through the budget (4 MiB here): a single
        // buffer many times larger means a kernel that amplified its inputs unchecked.
        let big = largest::largest_anywhere();
        if big > OVER_BUDGET {
            run.finding(i, format!("one allocation of {big} bytes running {:?} under a 4 MiB budget", ops_of()));
        }
        if took > Duration::from_secs(5) {
            run.finding(i, format!("took {took:?} running {:?}", ops_of()));
        }
        run.outcome_with(label, &format!("{}: {said}", ops_of().join(",")));
    }
    run.finish();
}
