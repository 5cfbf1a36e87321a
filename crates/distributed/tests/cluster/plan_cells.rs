//! The master's plan cache has one cell per step signature: a step whose plan is cached
//! never waits behind another signature being planned, concurrent first runs of one
//! signature plan (and register their graphs) once, and a run waiting for another's
//! planning gives up at its own deadline. Planning is slowed by delaying RegisterGraph in
//! an in-memory cluster's fault filters.

use crate::common;

use std::time::{Duration, Instant};

use common::Cluster;
use ferroflow_core::Code;
use ferroflow_distributed::{Fault, GrpcSession, Rule, ServerOptions, WorkerRpc};
use ferroflow_graph::{ops, Output, Scope, Variable};
use ferroflow_runtime::{RunOptions, StepRunner};

const PS: &str = "/job:ps/task:0";
const WORKER: &str = "/job:worker/task:0";

/// A variable on the ps and three tensors on the worker computed from it: each fetch is
/// a signature of its own, planned across both tasks.
fn setup() -> (Cluster, std::sync::Arc<ferroflow_distributed::InMemoryNet>, GrpcSession, Vec<Output>) {
    let (c, net) = Cluster::in_memory(&[("ps", 1), ("worker", 1)], |_, _| ServerOptions::default());
    let s = Scope::new_root();
    let (ps, wk) = (s.with_device(PS), s.with_device(WORKER));
    let w = Variable::new(&ps, "w", ops::constant(&ps, 3.0f32));
    let outs = (1..=3).map(|k| ops::mul(&wk, w.value(), ops::constant(&wk, k as f32))).collect();
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    sess.run(&[], &[], &[&w.initializer()]).unwrap();
    (c, net, sess, outs)
}

fn fetch(sess: &GrpcSession, o: &Output, timeout: Duration) -> Result<f32, ferroflow_core::Status> {
    let opts = RunOptions { timeout: Some(timeout), ..Default::default() };
    Ok(sess.run_by_name(&[], &[format!("{}:0", o.node)], &[], &opts)?[0].scalar_value::<f32>().unwrap())
}

/// Waits (bounded) until the filters have fired at least `n` times.
fn fired(net: &ferroflow_distributed::InMemoryNet, n: u64) {
    let end = Instant::now() + Duration::from_secs(10);
    while net.filters().fired() < n {
        assert!(Instant::now() < end, "the delayed RegisterGraph never came");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_cached_step_runs_while_another_signature_is_being_planned() {
    let (_c, net, sess, outs) = setup();
    assert_eq!(fetch(&sess, &outs[0], Duration::from_secs(10)).unwrap(), 3.0);
    net.filters().add(Rule::new(Fault::Delay(Duration::from_secs(3))).rpc(WorkerRpc::RegisterGraph));
    std::thread::scope(|scope| {
        let slow = scope.spawn(|| fetch(&sess, &outs[1], Duration::from_secs(20)));
        fired(&net, 1);
        // The new signature is stuck in RegisterGraph; the cached one runs now.
        assert_eq!(fetch(&sess, &outs[0], Duration::from_secs(10)).unwrap(), 3.0);
        assert!(!slow.is_finished(), "the new signature was planned before the cached step ran");
        assert_eq!(slow.join().unwrap().unwrap(), 6.0);
    });
}

#[test]
fn concurrent_first_runs_of_one_signature_plan_it_once() {
    let (_c, net, sess, outs) = setup();
    net.filters().add(Rule::new(Fault::Delay(Duration::from_millis(300))).rpc(WorkerRpc::RegisterGraph));
    // How many delayed registrations one planning makes.
    assert_eq!(fetch(&sess, &outs[0], Duration::from_secs(10)).unwrap(), 3.0);
    let per_plan = net.filters().fired();
    assert!(per_plan >= 1);
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..4).map(|_| scope.spawn(|| fetch(&sess, &outs[1], Duration::from_secs(20)))).collect();
        for r in runs {
            assert_eq!(r.join().unwrap().unwrap(), 6.0);
        }
    });
    assert_eq!(
        net.filters().fired(),
        2 * per_plan,
        "four first runs of one signature registered its graphs more than once"
    );
}

#[test]
fn a_run_waiting_for_another_runs_planning_ends_at_its_own_deadline() {
    let (_c, net, sess, outs) = setup();
    net.filters().add(Rule::new(Fault::Delay(Duration::from_secs(3))).rpc(WorkerRpc::RegisterGraph));
    std::thread::scope(|scope| {
        let first = scope.spawn(|| fetch(&sess, &outs[2], Duration::from_secs(20)));
        fired(&net, 1);
        let start = Instant::now();
        let e = fetch(&sess, &outs[2], Duration::from_millis(400)).unwrap_err();
        assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
        assert!(start.elapsed() < Duration::from_secs(2), "the waiting run took {:?}", start.elapsed());
        assert!(!first.is_finished());
        // The planning run is not disturbed, and its plan serves the next run at once.
        assert_eq!(first.join().unwrap().unwrap(), 9.0);
    });
    net.filters().heal();
    assert_eq!(fetch(&sess, &outs[2], Duration::from_secs(10)).unwrap(), 9.0);
}
