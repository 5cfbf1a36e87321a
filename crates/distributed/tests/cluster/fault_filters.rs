//! Network faults between tasks, injected by the fault filters of an in-memory cluster
//! (no sockets, no killed processes): a RecvTensor lost mid-step, a ps whose reply to an
//! apply is lost and a ps partitioned from the worker, a master that loses a task during
//! CreateSession, duplicated and delayed calls. Every scenario is deterministic and
//! bounded, and checks that the cluster works again once the network heals.

use crate::common;

use std::time::{Duration, Instant};

use common::Cluster;
use ferroflow_core::{Code, Tensor};
use ferroflow_distributed::{Fault, GrpcSession, Rule, ServerOptions, WorkerRpc};
use ferroflow_graph::{ops, Scope, Variable};
use ferroflow_runtime::{RunOptions, StepRunner};

const PS: &str = "/job:ps/task:0";
const WORKER: &str = "/job:worker/task:0";

fn short_timeouts(_: &str, _: i32) -> ServerOptions {
    let mut o = ServerOptions::default();
    o.master.default_step_timeout = Duration::from_secs(5);
    o.master.create_session_timeout = Duration::from_secs(2);
    o.worker.step_grace = Duration::from_secs(2);
    o
}

fn within(timeout: Duration) -> RunOptions {
    RunOptions { timeout: Some(timeout), ..Default::default() }
}

/// A variable `w` on the ps, `y = 2·w` on the worker (a tensor crosses ps → worker) and
/// an apply `w += 1` on the ps driven from the worker.
struct Model {
    sess: GrpcSession,
    w: Variable,
    y: ferroflow_graph::Output,
    apply: ferroflow_graph::Operation,
}

fn model(c: &Cluster) -> Model {
    let s = Scope::new_root();
    let (ps, wk) = (s.with_device(PS), s.with_device(WORKER));
    let w = Variable::new(&ps, "w", ops::constant(&ps, 1.0f32));
    let y = ops::mul(&wk, w.value(), ops::constant(&wk, 2.0f32));
    let one = ops::identity(&wk, ops::constant(&wk, 1.0f32));
    let apply = w.assign_add(&ps, one);
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    assert!(sess.is_in_process());
    sess.run(&[], &[], &[&w.initializer()]).unwrap();
    Model { sess, w, y, apply }
}

fn read(m: &Model) -> f32 {
    m.sess.run(&[], &[&m.w.value()], &[]).unwrap()[0].scalar_value::<f32>().unwrap()
}

/// Waits (bounded) until no step state is left on any task.
fn steps_drain(c: &Cluster) {
    let end = Instant::now() + Duration::from_secs(10);
    while c.servers.values().any(|s| s.worker().num_steps() > 0) {
        assert!(Instant::now() < end, "step tables left behind after a failed step");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_recv_tensor_lost_mid_step_fails_the_step_at_its_deadline_everywhere() {
    let (c, net) = Cluster::in_memory(&[("ps", 1), ("worker", 1)], short_timeouts);
    let m = model(&c);
    assert_eq!(m.sess.run(&[], &[&m.y], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 2.0);
    // The worker's next pull of w from the ps is lost on the way.
    net.filters().add(Rule::new(Fault::LoseRequest).from(&[WORKER]).unwrap().rpc(WorkerRpc::RecvTensor).times(1));
    let start = Instant::now();
    let e = m.sess.run_by_name(&[], &[format!("{}:0", m.y.node)], &[], &within(Duration::from_millis(800)));
    let e = e.unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
    assert!(start.elapsed() < Duration::from_secs(5), "the step took {:?} to fail", start.elapsed());
    assert_eq!(net.filters().fired(), 1);
    // Cancellation reached both partitions; the next step runs.
    steps_drain(&c);
    assert_eq!(m.sess.run(&[], &[&m.y], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 2.0);
}

#[test]
fn a_ps_partitioned_during_an_apply() {
    let (c, net) = Cluster::in_memory(&[("ps", 1), ("worker", 1)], short_timeouts);
    let m = model(&c);
    // The apply reaches the ps but its reply is lost: the step fails at its deadline and
    // the update stays applied (as on TensorFlow: a step is not a transaction).
    net.filters().add(Rule::new(Fault::LoseReply).to(&[PS]).unwrap().rpc(WorkerRpc::RunGraph).times(1));
    let e = m.sess.run_by_name(&[], &[], std::slice::from_ref(&m.apply.name), &within(Duration::from_millis(800)));
    assert_eq!(e.unwrap_err().code, Code::DeadlineExceeded);
    steps_drain(&c);
    assert_eq!(read(&m), 2.0);
    // Partitioned: the step fails at once, UNAVAILABLE, naming the ps; nothing is applied.
    let cut = net.filters().partition(&[PS], &[WORKER]).unwrap();
    let start = Instant::now();
    let e = m.sess.run_by_name(&[], &[], std::slice::from_ref(&m.apply.name), &within(Duration::from_secs(5)));
    let e = e.unwrap_err();
    assert_eq!(e.code, Code::Unavailable, "{e}");
    assert!(e.message.contains("/job:ps"), "{e}");
    assert_eq!(e.task(), Some("/job:ps/replica:0/task:0"), "the task is a structured field: {e}");
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
    net.filters().remove(cut);
    assert_eq!(read(&m), 2.0);
    m.sess.run(&[], &[], &[&m.apply]).unwrap();
    assert_eq!(read(&m), 3.0);
}

#[test]
fn a_master_that_loses_a_task_during_create_session_waits_for_it_then_fails_bounded() {
    let (c, net) = Cluster::in_memory(&[("ps", 1), ("worker", 1)], short_timeouts);
    // The ps is cut off while the session is created: CreateSession keeps asking (as
    // TensorFlow's master waits for every task) and succeeds once the network heals.
    let cut = net.filters().isolate(PS).unwrap();
    let filters = net.filters().clone();
    let healer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        filters.remove(cut);
    });
    let m = model(&c);
    healer.join().unwrap();
    assert!(net.filters().fired() > 0, "the isolation was in force during CreateSession");
    assert_eq!(read(&m), 1.0);
    // Cut off for good: a new session fails within the master's CreateSession timeout,
    // naming the task it could not reach.
    net.filters().isolate(PS).unwrap();
    let s = Scope::new_root();
    let ps = s.with_device(PS);
    let x = ops::add(&ps, ops::constant(&ps, 1.0f32), ops::constant(&ps, 2.0f32));
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let start = Instant::now();
    let e = sess.run(&[], &[&x], &[]).unwrap_err();
    assert!(matches!(e.code, Code::Unavailable | Code::DeadlineExceeded), "{e}");
    assert!(e.message.contains("/job:ps"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    net.filters().heal();
    assert_eq!(sess.run(&[], &[&x], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 3.0);
}

#[test]
fn duplicated_and_delayed_calls_leave_the_results_unchanged() {
    let (c, net) = Cluster::in_memory(&[("ps", 1), ("worker", 1)], short_timeouts);
    let m = model(&c);
    // Every pull from the ps arrives twice; every cleanup arrives twice.
    net.filters().add(Rule::new(Fault::Duplicate).rpc(WorkerRpc::RecvTensor).rpc(WorkerRpc::CleanupGraph));
    for _ in 0..5 {
        assert_eq!(m.sess.run(&[], &[&m.y], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 2.0);
    }
    net.filters().heal();
    // Every call to the ps is 50 ms late: the steps are slower and still right.
    net.filters().add(Rule::new(Fault::Delay(Duration::from_millis(50))).to(&[PS]).unwrap());
    let start = Instant::now();
    m.sess.run(&[], &[], &[&m.apply]).unwrap();
    assert!(start.elapsed() >= Duration::from_millis(50), "{:?}", start.elapsed());
    assert_eq!(read(&m), 2.0);
    // A delay past the step's deadline is DEADLINE_EXCEEDED, not a hang.
    net.filters().heal();
    net.filters().add(Rule::new(Fault::Delay(Duration::from_secs(60))).to(&[PS]).unwrap().rpc(WorkerRpc::RunGraph));
    let e = m.sess.run_by_name(&[], &[], std::slice::from_ref(&m.apply.name), &within(Duration::from_millis(500)));
    assert_eq!(e.unwrap_err().code, Code::DeadlineExceeded);
    net.filters().heal();
    steps_drain(&c);
    let t = m.sess.run(&[], &[&m.w.value()], &[]).unwrap().remove(0);
    assert_eq!(t, Tensor::scalar(2.0f32), "the late apply never ran");
}

#[test]
fn a_probabilistic_loss_of_receives_is_the_same_at_every_run() {
    // 30 % of the pulls fail (UNAVAILABLE) with the net's seed: which steps fail is the
    // same each time the test runs.
    let run = || {
        let (c, net) = Cluster::in_memory(&[("ps", 1), ("worker", 1)], short_timeouts);
        let m = model(&c);
        net.filters().add(Rule::new(Fault::Fail).rpc(WorkerRpc::RecvTensor).probability(0.3));
        (0..20).map(|_| m.sess.run(&[], &[&m.y], &[]).is_ok()).collect::<Vec<bool>>()
    };
    let a = run();
    assert_eq!(a, run());
    let failed = a.iter().filter(|ok| !**ok).count();
    assert!((2..=12).contains(&failed), "{failed} of 20 steps failed");
}

#[test]
fn filters_act_on_the_grpc_transport_too() {
    // Real ports; the worker's calls to its peers pass its filters.
    let filters = ferroflow_distributed::FaultFilters::new(9);
    let f2 = filters.clone();
    let c = Cluster::start_with(&[("ps", 1), ("worker", 1)], move |job, t| {
        let mut o = short_timeouts(job, t);
        if job == "worker" {
            o.fault_filters = Some(f2.clone());
        }
        o
    });
    let m = model(&c);
    let over_grpc = GrpcSession::new(&c.target("worker:0"), m.sess.graph()).unwrap().over_grpc_only();
    assert_eq!(over_grpc.run(&[], &[&m.y], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 2.0);
    filters.partition(&[PS], &[WORKER]).unwrap();
    let e = over_grpc.run(&[], &[&m.y], &[]).unwrap_err();
    assert_eq!(e.code, Code::Unavailable, "{e}");
    // The failing task survives the wire from the master to the client as a payload.
    assert_eq!(e.task(), Some("/job:ps/replica:0/task:0"), "{e}");
    filters.heal();
    assert_eq!(over_grpc.run(&[], &[&m.y], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 2.0);
}

#[test]
fn two_running_servers_cannot_share_an_in_memory_address() {
    let (c, net) = Cluster::in_memory(&[("ps", 1)], short_timeouts);
    let e = net.server(&c.spec, "ps", 0, ServerOptions::default()).err().expect("refused");
    assert_eq!(e.code, Code::Unknown, "{e}");
    assert!(e.message.contains("is taken"), "{e}");
}

#[test]
fn fail_points_in_the_step_paths() {
    use ferroflow_distributed::fail_points::{CREATE_SESSION, RUN_GRAPH_DONE, RUN_STEP};
    use ferroflow_distributed::FailAction;
    let (c, net) = Cluster::in_memory(&[("ps", 1), ("worker", 1)], short_timeouts);
    let fp = net.fail_points().clone();
    // The ps applies, then fails before replying: the step fails with the ps's error and
    // the update stays.
    let boom = FailAction::Error(Code::Internal, "the ps fails after the apply".into());
    let m = model(&c);
    fp.set(RUN_GRAPH_DONE, Some(PS), boom, Some(1)).unwrap();
    let e = m.sess.run(&[], &[], &[&m.apply]).unwrap_err();
    assert_eq!(e.code, Code::Internal, "{e}");
    assert!(e.message.contains("fail point worker/run_graph/done"), "{e}");
    assert_eq!(e.task(), Some("/job:ps/replica:0/task:0"), "{e}");
    steps_drain(&c);
    assert_eq!(read(&m), 2.0);
    // The master stalls before sending a step: the step's deadline still holds.
    fp.set(RUN_STEP, Some(WORKER), FailAction::Delay(Duration::from_secs(30)), Some(1)).unwrap();
    let start = Instant::now();
    let e = m.sess.run_by_name(&[], &[], std::slice::from_ref(&m.apply.name), &within(Duration::from_millis(300)));
    assert_eq!(e.unwrap_err().code, Code::DeadlineExceeded);
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
    // CreateSession refused once by the master: a new session fails, the next succeeds.
    fp.set(CREATE_SESSION, None, FailAction::Error(Code::Unavailable, "not now".into()), Some(1)).unwrap();
    let s = Scope::new_root();
    let x = ops::constant(&s.with_device(PS), 5.0f32);
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    assert_eq!(sess.run(&[], &[&x], &[]).unwrap_err().code, Code::Unavailable);
    assert_eq!(sess.run(&[], &[&x], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 5.0);
    fp.clear();
    assert_eq!(read(&m), 2.0);
}
