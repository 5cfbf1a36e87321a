//! SyncReplicasOptimizer in one process: one DirectSession, two threads acting as two
//! replicas (each with its own inputs and local step, sharing the variables, the
//! accumulators and the token queue by name, as between-graph replicas do), and the
//! chief's queue runner. Checks the numbers against a hand-computed synchronous run.

use ferroflow_runtime::StepRunner;
use std::sync::Arc;
use std::time::Duration;

use ferroflow_core::{attr, Code, DataType, Tensor};
use ferroflow_graph::{get_or_create_global_step, global_variables_initializer, ops, Output, Scope, Variable};
use ferroflow_kernels::data_flow::ConditionalAccumulator;
use ferroflow_runtime::{DirectSession, RunOptions};
use ferroflow_train::optimizer::GradientDescent;
use ferroflow_train::sync_replicas::{ChiefQueueRunner, SyncReplicas, SyncReplicasOptimizer};

const LR: f64 = 0.1;
const STEPS: usize = 6;

/// Replica `r`'s example at step `t`: (x, y).
fn data(r: usize, t: usize) -> ([f32; 2], f32) {
    let (r, t) = (r as f32, t as f32);
    ([1.0 + r + 0.5 * t, 2.0 - r + 0.25 * t], 3.0 * r - 1.0 + 0.5 * t)
}

struct Replica {
    x: Output,
    y: Output,
    sync: SyncReplicas,
}

struct Model {
    root: Scope,
    w: Variable,
    b: Variable,
    step: Variable,
}

fn model() -> Model {
    let root = Scope::new_root();
    let ps = root.with_device("/job:ps/task:0");
    let w = Variable::new(&ps, "w", ops::constant(&ps, Tensor::vec(vec![0.0f32, 0.0])));
    let b = Variable::new(&ps, "b", ops::constant(&ps, Tensor::scalar(0.0f32)));
    let step = get_or_create_global_step(&root);
    Model { root, w, b, step }
}

/// One replica: loss = ½ (w·x + b − y)², gradients written out by hand so the test does
/// not depend on autodiff: dw = err·x, db = err.
fn replica(m: &Model, name: &str, opt: &SyncReplicasOptimizer<GradientDescent>) -> Replica {
    let s = m.root.sub(name);
    let x = ops::placeholder_named(&s, "x", DataType::Float, Some(&[2]));
    let y = ops::placeholder_named(&s, "y", DataType::Float, Some(&[]));
    let dot = ops::sum(&s, ops::mul(&s, m.w.value(), x.clone()), ops::constant(&s, Tensor::vec(vec![0i32])), false);
    let err = ops::sub(&s, ops::add(&s, dot, m.b.value()), y.clone());
    let dw = ops::mul(&s, err.clone(), x.clone());
    let sync = opt.apply_gradients(&s, &[(dw, m.w.clone()), (err, m.b.clone())], &m.step).unwrap();
    Replica { x, y, sync }
}

fn feeds(r: &Replica, i: usize, t: usize) -> Vec<(String, Tensor)> {
    let (x, y) = data(i, t);
    vec![(r.x.name(), Tensor::vec(x.to_vec())), (r.y.name(), Tensor::scalar(y))]
}

fn opts() -> RunOptions {
    RunOptions { timeout: Some(Duration::from_secs(60)), cancel: None, ..Default::default() }
}

fn fetch(sess: &DirectSession, o: &Output) -> Tensor {
    sess.run(&[], &[o], &[]).unwrap().remove(0)
}

/// The synchronous run by hand: every step averages both replicas' gradients at the same
/// parameters.
fn expected() -> ([f64; 2], f64) {
    let (mut w, mut b) = ([0.0f64; 2], 0.0f64);
    for t in 0..STEPS {
        let (mut gw, mut gb) = ([0.0f64; 2], 0.0f64);
        for r in 0..2 {
            let (x, y) = data(r, t);
            let err = w[0] * x[0] as f64 + w[1] * x[1] as f64 + b - y as f64;
            gw[0] += err * x[0] as f64 / 2.0;
            gw[1] += err * x[1] as f64 / 2.0;
            gb += err / 2.0;
        }
        w = [w[0] - LR * gw[0], w[1] - LR * gw[1]];
        b -= LR * gb;
    }
    (w, b)
}

#[test]
fn two_replicas_apply_the_average_of_their_gradients_each_step() {
    let m = model();
    let opt = SyncReplicasOptimizer::new(GradientDescent::new(LR), 2, 2).with_token_timeout(Duration::from_secs(60));
    let reps = [replica(&m, "replica_0", &opt), replica(&m, "replica_1", &opt)];
    // A third replica that never syncs its local step: its gradients are stale.
    let straggler = replica(&m, "straggler", &opt);
    let init = global_variables_initializer(&m.root);
    // Lockstep: no initial tokens, so nobody computes a second gradient before the update.
    let init_tokens = reps[0].sync.get_init_tokens_op(&m.root, 0).unwrap();
    m.root.status().unwrap();

    let sess = Arc::new(DirectSession::new(m.root.graph()));
    sess.run(&[], &[], &[&init]).unwrap();
    for r in &reps {
        sess.run(&[], &[], &[&r.sync.local_step.initializer()]).unwrap();
    }
    sess.run(&[], &[], &[&reps[0].sync.chief_init_op, &init_tokens]).unwrap();
    sess.run(&[], &[], &[&reps[1].sync.local_step_init_op]).unwrap();
    sess.run(&[], &[], &[&straggler.sync.local_step.initializer()]).unwrap();

    let chief = ChiefQueueRunner::start_local(sess.clone(), &reps[0].sync, Duration::from_secs(60)).unwrap();
    // TensorFlow's shared token queue does not make replicas take turns: a replica whose
    // token wait starts late (a descheduled thread) can find its token taken by the other
    // replica's next step, which then sends two gradients to one update, and the last
    // update never gets its second gradient. (That is why ferroflow's trainer uses
    // per-replica token queues, tested below.) The barrier makes the lockstep explicit.
    let turn = std::sync::Barrier::new(reps.len());
    std::thread::scope(|sc| {
        for (i, r) in reps.iter().enumerate() {
            let (sess, turn) = (sess.clone(), &turn);
            sc.spawn(move || {
                for t in 0..STEPS {
                    sess.run_by_name(&feeds(r, i, t), &[], std::slice::from_ref(&r.sync.train_op.name), &opts())
                        .map_err(|e| r.sync.explain(e))
                        .unwrap();
                    turn.wait();
                }
            });
        }
    });
    // Both replicas received their last token, so the last update is done; the chief's
    // run call may still be returning, so its counter is polled (bounded).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while chief.updates() < STEPS as u64 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(chief.updates(), STEPS as u64);
    chief.stop().unwrap();

    assert_eq!(fetch(&sess, &m.step.value()).scalar_value::<i64>().unwrap(), STEPS as i64);
    for r in &reps {
        assert_eq!(fetch(&sess, &r.sync.local_step.value()).scalar_value::<i64>().unwrap(), STEPS as i64);
    }
    let (ew, eb) = expected();
    let w = fetch(&sess, &m.w.value());
    let w = w.as_slice::<f32>().unwrap();
    let b = fetch(&sess, &m.b.value()).scalar_value::<f32>().unwrap();
    for k in 0..2 {
        assert!((w[k] as f64 - ew[k]).abs() < 1e-4, "w[{k}] = {} but the synchronous average gives {}", w[k], ew[k]);
    }
    assert!((b as f64 - eb).abs() < 1e-4, "b = {b} but the synchronous average gives {eb}");
    assert_eq!(reps[0].sync.stale_gradients_dropped(sess.resources()), 0);

    // The straggler's gradients were computed for step 0: dropped and counted.
    sess.run_by_name(&feeds(&straggler, 0, 0), &[], std::slice::from_ref(&straggler.sync.apply_op.name), &opts())
        .unwrap();
    assert_eq!(straggler.sync.stale_gradients_dropped(sess.resources()), 2);
    for (_, name) in &straggler.sync.accumulators {
        let acc = sess.resources().lookup::<ConditionalAccumulator>("", name).unwrap();
        assert_eq!((acc.num_accumulated(), acc.global_step()), (0, STEPS as i64), "{name}");
    }
    assert_eq!(fetch(&sess, &m.w.value()).as_slice::<f32>().unwrap(), w);

    // The chief stopped and closed the token queue: a replica still training ends at
    // once with OutOfRange instead of waiting.
    let e = sess
        .run_by_name(&feeds(&reps[1], 1, 0), &[], &[reps[1].sync.train_op.name.clone()], &opts())
        .map_err(|e| reps[1].sync.explain(e))
        .unwrap_err();
    assert_eq!(e.code, Code::OutOfRange, "{e}");
    assert!(e.message.contains("closed the token queue"), "{e}");
}

#[test]
fn waits_are_bounded_when_replicas_are_missing() {
    let m = model();
    let opt = SyncReplicasOptimizer::new(GradientDescent::new(LR), 2, 2).with_token_timeout(Duration::from_millis(100));
    let r = replica(&m, "replica_0", &opt);
    let init = global_variables_initializer(&m.root);
    let sess = Arc::new(DirectSession::new(m.root.graph()));
    sess.run(&[], &[], &[&init, &r.sync.local_step.initializer()]).unwrap();
    sess.run(&[], &[], &[&r.sync.chief_init_op]).unwrap();

    // No chief: the token never comes; the replica's wait ends with a clear error.
    let e = sess
        .run_by_name(&feeds(&r, 0, 0), &[], std::slice::from_ref(&r.sync.train_op.name), &opts())
        .map_err(|e| r.sync.explain(e))
        .unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
    assert!(e.message.contains("no token within 100 ms"), "{e}");

    // The other replica never sends its gradient: the chief gives up after its timeout and
    // closes the token queue, so this replica fails fast instead of hanging.
    let chief = ChiefQueueRunner::start_local(sess.clone(), &r.sync, Duration::from_millis(200)).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !chief.is_finished() {
        assert!(std::time::Instant::now() < deadline, "the chief did not give up");
        std::thread::sleep(Duration::from_millis(10));
    }
    let e = chief.stop().unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
    assert!(e.message.contains("too few replicas sent gradients"), "{e}");
    assert_eq!(fetch(&sess, &m.step.value()).scalar_value::<i64>().unwrap(), 0);
    let e = sess.run_by_name(&feeds(&r, 0, 1), &[], std::slice::from_ref(&r.sync.train_op.name), &opts()).unwrap_err();
    assert_eq!(e.code, Code::OutOfRange, "{e}");
}

/// One update's tokens, then a replica that asks twice: with TensorFlow's shared token
/// queue it takes the other replica's token; with per-replica queues it waits (and times
/// out) while the other replica's token stays for it.
fn second_token_for_a_fast_replica(per_replica: bool) -> Result<(), ferroflow_core::Status> {
    let m = model();
    let opt = |i: usize| {
        let o =
            SyncReplicasOptimizer::new(GradientDescent::new(LR), 2, 2).with_token_timeout(Duration::from_millis(150));
        if per_replica {
            o.with_replica_tokens(i)
        } else {
            o
        }
    };
    let reps = [replica(&m, "replica_0", &opt(0)), replica(&m, "replica_1", &opt(1))];
    assert_eq!(reps[0].sync.token_queues.len(), if per_replica { 2 } else { 1 });
    let init = global_variables_initializer(&m.root);
    let sess = DirectSession::new(m.root.graph());
    sess.run(&[], &[], &[&init, &reps[0].sync.local_step.initializer(), &reps[1].sync.local_step.initializer()])
        .unwrap();
    sess.run(&[], &[], &[&reps[0].sync.chief_init_op, &reps[1].sync.local_step_init_op]).unwrap();
    for (i, r) in reps.iter().enumerate() {
        sess.run_by_name(&feeds(r, i, 0), &[], std::slice::from_ref(&r.sync.apply_op.name), &opts()).unwrap();
    }
    // The chief's update: two tokens, one per replica.
    sess.run(&[], &[], &[&reps[0].sync.sync_op]).unwrap();
    assert_eq!(fetch(&sess, &m.step.value()).scalar_value::<i64>().unwrap(), 1);
    let train = |i: usize, t: usize| {
        let r = &reps[i];
        sess.run_by_name(&feeds(r, i, t), &[], std::slice::from_ref(&r.sync.train_op.name), &opts())
            .map_err(|e| r.sync.explain(e))
    };
    train(0, 1).unwrap();
    let second = train(0, 2);
    if per_replica {
        // Replica 1's token is still there for it.
        train(1, 1).unwrap();
    }
    second.map(|_| ())
}

#[test]
fn per_replica_token_queues_keep_a_fast_replica_from_taking_a_slow_ones_token() {
    // TensorFlow's shared queue: replica 0 takes both tokens of the update.
    second_token_for_a_fast_replica(false).unwrap();
    // Per-replica queues: replica 0's second wait times out; replica 1 still gets its token.
    let e = second_token_for_a_fast_replica(true).unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
    assert!(e.message.contains("no token within 150 ms"), "{e}");
}

#[test]
fn per_replica_tokens_need_every_replica_aggregated() {
    let m = model();
    let bad = SyncReplicasOptimizer::new(GradientDescent::new(LR), 1, 2).with_replica_tokens(0);
    let s = m.root.sub("r");
    let x = ops::placeholder_named(&s, "x", DataType::Float, Some(&[]));
    let e = bad.apply_gradients(&s, &[(x, m.b.clone())], &m.step).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("per-replica tokens"), "{e}");
}

/// The token dequeue (on the ps, with the global step) waits on the accumulator updates
/// themselves, which are colocated with their variables on the ps: a control edge through the replica's device would
/// cost two extra cross-task transfers on every step.
#[test]
fn token_dequeue_depends_on_the_accumulator_updates_on_the_ps() {
    let m = model();
    let opt = SyncReplicasOptimizer::new(GradientDescent::new(LR), 2, 2);
    let w = m.root.with_device("/job:worker/task:0");
    let x = ops::placeholder_named(&w, "x", DataType::Float, Some(&[2]));
    let g = ops::mul(&w, m.w.value(), x);
    let gb = ops::identity(&w, m.b.value());
    opt.apply_gradients(&w, &[(g, m.w.clone()), (gb, m.b.clone())], &m.step).unwrap();
    let gd = m.root.graph().to_graph_def();
    let node = |name: &str| gd.node.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("no node {name}"));
    let dequeue = gd.node.iter().find(|n| n.op == "QueueDequeueV2").expect("a token dequeue");
    let controls: Vec<&str> = dequeue.input.iter().filter_map(|i| i.strip_prefix('^')).collect();
    assert_eq!(controls.len(), 2, "{:?}", dequeue.input);
    for c in controls {
        let n = node(c);
        assert_eq!(n.op, "ResourceAccumulatorApplyGradient", "{c}");
        // Colocated with its variable (on the ps), whatever the replica's scope device.
        let class = n.attr.get("_class");
        assert!(
            class == Some(&attr::list_string(&["loc:@w"])) || class == Some(&attr::list_string(&["loc:@b"])),
            "{c}: {class:?}"
        );
    }
}
