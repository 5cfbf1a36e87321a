//! Decoder-level fuzzing, no server: `Tensor::from_proto` over mutated TensorProtos (huge
//! declared shapes, dtypes and value lists that disagree, mangled bytes), and what a task
//! builds from a received GraphDef (`Graph::import`, the worker's `Executor::new` with its
//! kernels, the master's `rewrite_for_client` and `partition`) over mutated graphs. Every
//! input must give Ok or an error, never a panic, and no single allocation may exceed the
//! task's memory limit (plus the size of the input itself): a small message must not make a
//! task reserve what it declares.

use crate::fuzz;

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ferroflow_core::proto::{GraphDef, TensorProto};
use ferroflow_core::Tensor;
use ferroflow_distributed::{partition, PartitionOptions, SplitBy};
use ferroflow_graph::rewrite_for_client;
use fuzz::largest;
use fuzz::{bytes as fbytes, graphs, values, Run};
use prost::Message;

/// Runs `f`, returning its result (or its panic as a message) and the largest allocation
/// it made on this thread.
fn measured<T>(f: impl FnOnce() -> T) -> (Result<T, String>, usize) {
    largest::reset();
    let r = catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default()
    });
    (r, largest::largest())
}

/// The most one decode may allocate at once: the memory limit, plus room proportional to
/// the input (a decoded copy of what arrived).
fn allowance(input_len: usize) -> usize {
    ferroflow_core::memory_limit() as usize + 8 * input_len + (1 << 20)
}

#[test]
fn fuzz_tensor_protos() {
    let mut run = Run::start("tensor_proto", 30_000);
    for i in 0..run.iters {
        let mut rng = run.rng(i);
        let mut t = values::tensor(&mut rng);
        if rng.one_in(2) {
            values::mutate_tensor(&mut rng, &mut t);
        }
        let encoded = t.encode_to_vec();
        let bytes = if rng.one_in(3) { fbytes::mutate(&mut rng, &encoded) } else { encoded };
        let (decoded, largest) = measured(|| TensorProto::decode(bytes.as_slice()).map(|p| Tensor::from_proto(&p)));
        let label = match &decoded {
            Err(p) => {
                run.finding(i, format!("panicked: {p} on {t:?}"));
                "PANIC".to_string()
            }
            Ok(Err(_)) => "prost error".to_string(),
            Ok(Ok(Err(e))) => {
                if e.message.is_empty() {
                    run.finding(i, format!("an error without a message: {e:?}"));
                }
                format!("{:?}", e.code)
            }
            Ok(Ok(Ok(_))) => "OK".to_string(),
        };
        if largest > allowance(bytes.len()) {
            run.finding(i, format!("a {}-byte proto allocated {largest} bytes at once ({label}): {t:?}", bytes.len()));
        }
        run.outcome(label);
    }
    run.finish();
}

const PS: &str = "/job:ps/replica:0/task:0/device:CPU:0";
const WORKER: &str = "/job:worker/replica:0/task:0/device:CPU:0";

#[test]
fn fuzz_graph_defs() {
    let mut run = Run::start("graph_def", 3_000);
    let ops = graphs::op_names();
    // A partition-like graph (every node on one task) and a graph over two tasks.
    let one_task = graphs::seed_graph(WORKER, WORKER);
    let two_tasks = graphs::seed_graph(PS, WORKER);
    let incarnations: HashMap<String, u64> = [(PS.to_string(), 1), (WORKER.to_string(), 2)].into();
    for i in 0..run.iters {
        let mut rng = run.rng(i);
        let base = if rng.one_in(2) { &one_task } else { &two_tasks };
        let mut g = graphs::mutated(&mut rng, base, &ops);
        let mut input_len = g.encoded_len();
        if rng.one_in(4) {
            let b = fbytes::mutate(&mut rng, &g.encode_to_vec());
            input_len = b.len();
            match GraphDef::decode(b.as_slice()) {
                Ok(d) => g = d,
                Err(_) => {
                    run.outcome("prost error");
                    continue;
                }
            }
        }
        let names: Vec<String> = g.node.iter().map(|n| n.name.clone()).collect();
        let fetch = values::tensor_name(&mut rng, &names);
        let (r, largest) = measured(|| {
            let imported = ferroflow_graph::Graph::import(&g).map(|_| ());
            let exec = ferroflow_runtime::Executor::new(&g).map(|_| ());
            let parts = rewrite_for_client(&g, &["p:0"], &[fetch.as_str()], &[], WORKER, 2).and_then(|c| {
                partition(&c.graph, &PartitionOptions { incarnations: &incarnations, split_by: SplitBy::Task })
            });
            [imported.err(), exec.err(), parts.err()]
        });
        let label = match &r {
            Err(p) => {
                run.finding(i, format!("panicked: {p} on {g:?}"));
                "PANIC".to_string()
            }
            Ok(errs) => {
                for e in errs.iter().flatten() {
                    if e.message.is_empty() {
                        run.finding(i, format!("an error without a message: {e:?}"));
                    }
                }
                errs.iter()
                    .map(|e| e.as_ref().map_or("ok".to_string(), |e| format!("{:?}", e.code)))
                    .collect::<Vec<_>>()
                    .join("/")
            }
        };
        if largest > allowance(input_len) {
            run.finding(i, format!("a {input_len}-byte graph allocated {largest} bytes at once ({label})"));
        }
        run.outcome(label);
    }
    run.finish();
}
