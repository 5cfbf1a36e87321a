//! All-reduce replicas between graphs: three workers of an in-memory cluster, each with its
//! own graph, session and variables (initialized differently on purpose), made equal by
//! worker 0's broadcast, then trained by averaging their gradients with collective ops.
//! The losses and the variables must be those of one synchronous run that averages the
//! three replicas' gradients at the same parameters (what the ps-based
//! SyncReplicasOptimizer computes), worked out here by hand in f64.

use std::sync::Arc;
use std::time::Duration;

use ferroflow_core::{DataType, Tensor};
use ferroflow_distributed::{ClusterSpec, GrpcSession, InMemoryNet, Server, ServerOptions};
use ferroflow_graph::{get_or_create_global_step, global_variables, ops, Scope, Variable};
use ferroflow_runtime::StepRunner;
use ferroflow_train::optimizer::{GradientDescent, Optimizer};
use ferroflow_train::sync_replicas::AllReduceReplicas;

const LR: f64 = 0.1;
const STEPS: usize = 6;
const REPLICAS: usize = 3;

/// Replica `r`'s example at step `t`: (x, y).
fn data(r: usize, t: usize) -> ([f32; 2], f32) {
    let (r, t) = (r as f32, t as f32);
    ([1.0 + r + 0.5 * t, 2.0 - r + 0.25 * t], 3.0 * r - 1.0 + 0.5 * t)
}

/// The synchronous run by hand: each step's update is the mean of the replicas' gradients
/// of ½ (w·x + b − y)²; returns every replica's loss per step and the final parameters.
fn expected() -> (Vec<[f64; REPLICAS]>, [f64; 2], f64) {
    let (mut w, mut b) = ([0.5f64, -0.25], 0.125f64);
    let mut losses = Vec::new();
    for t in 0..STEPS {
        let (mut gw, mut gb, mut l) = ([0.0f64; 2], 0.0f64, [0.0f64; REPLICAS]);
        for (r, lr_) in l.iter_mut().enumerate() {
            let (x, y) = data(r, t);
            let err = w[0] * x[0] as f64 + w[1] * x[1] as f64 + b - y as f64;
            *lr_ = 0.5 * err * err;
            gw[0] += err * x[0] as f64 / REPLICAS as f64;
            gw[1] += err * x[1] as f64 / REPLICAS as f64;
            gb += err / REPLICAS as f64;
        }
        losses.push(l);
        w = [w[0] - LR * gw[0], w[1] - LR * gw[1]];
        b -= LR * gb;
    }
    (losses, w, b)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-5 * b.abs().max(1.0)
}

/// Worker `r`: builds its graph, broadcasts, trains; returns its losses and parameters.
fn replica(target: String, r: usize) -> (Vec<f64>, Vec<f32>, f32, u32) {
    let root = Scope::new_root();
    let s = root.with_device(&format!("/job:worker/task:{r}"));
    // Different starting points on every worker but 0: the broadcast must replace them.
    let shift = r as f32;
    let w = Variable::new(&s, "w", ops::constant(&s, Tensor::vec(vec![0.5f32 + shift, -0.25])));
    let b = Variable::new(&s, "b", ops::constant(&s, Tensor::scalar(0.125f32 - shift)));
    let step = get_or_create_global_step(&s);
    let x = ops::placeholder(&s, DataType::Float, Some(&[2]));
    let y = ops::placeholder(&s, DataType::Float, Some(&[]));
    let dot = ops::sum(&s, ops::mul(&s, w.value(), x.clone()), ops::constant(&s, Tensor::vec(vec![0i32])), false);
    let err = ops::sub(&s, ops::add(&s, dot, b.value()), y.clone());
    let loss = ops::mul(&s, ops::constant(&s, Tensor::scalar(0.5f32)), ops::square(&s, err));
    let opt = GradientDescent::new(LR);
    let replicas = AllReduceReplicas::new(REPLICAS, r).unwrap();
    let gv: Vec<_> =
        opt.compute_gradients(&s, &loss, None).unwrap().into_iter().filter_map(|(g, v)| g.map(|g| (g, v))).collect();
    let mean = replicas.average_gradients(&s, &gv).unwrap();
    let train = opt.apply_gradients(&s, &mean, Some(&step), "train").unwrap();
    let vars = global_variables(root.graph()).unwrap();
    let broadcast = replicas.broadcast_variables(&s, &vars).unwrap();
    let check = replicas.check_nodes(&s).unwrap();
    let init = ferroflow_graph::global_variables_initializer(&s);
    root.status().unwrap();

    let sess = GrpcSession::new(&target, root.graph()).unwrap();
    sess.run(&[], &[], &[&init]).unwrap();
    sess.run(&[], &[], &[&broadcast]).unwrap();
    let mut losses = Vec::new();
    for t in 0..STEPS {
        let (xv, yv) = data(r, t);
        let out = sess.run(&[(&x, Tensor::vec(xv.to_vec())), (&y, Tensor::scalar(yv))], &[&loss], &[&train]).unwrap();
        losses.push(out[0].scalar_value::<f32>().unwrap() as f64);
    }
    let out = sess.run(&[], &[&w.value(), &b.value(), &step.value()], &[]).unwrap();
    assert_eq!(out[2].scalar_value::<i64>().unwrap(), STEPS as i64, "worker {r}'s global step");
    let crc = check.verify(&sess, &vars, Duration::from_secs(30)).unwrap();
    (losses, out[0].as_slice::<f32>().unwrap().to_vec(), out[1].scalar_value::<f32>().unwrap(), crc)
}

#[test]
fn all_reduce_replicas_train_as_one_synchronous_run() {
    let net = InMemoryNet::new(11);
    let addrs: Vec<String> = (0..REPLICAS).map(|t| format!("w{t}.allreduce.mem:1")).collect();
    let cluster = ClusterSpec::new(&[("worker", addrs.iter().map(String::as_str).collect())]).unwrap();
    let opts = || ServerOptions { in_memory: Some(Arc::clone(&net)), ..Default::default() };
    let servers: Vec<Server> =
        (0..REPLICAS).map(|t| Server::new(&cluster, "worker", t as i32, opts()).unwrap()).collect();
    let threads: Vec<_> = servers
        .iter()
        .enumerate()
        .map(|(r, srv)| {
            let target = srv.target().to_string();
            std::thread::spawn(move || replica(target, r))
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let (losses, w, b) = expected();
    for (r, (got, wr, br, crc)) in results.iter().enumerate() {
        for (t, l) in got.iter().enumerate() {
            assert!(close(*l, losses[t][r]), "worker {r} step {t}: loss {l}, expected {}", losses[t][r]);
        }
        assert!(close(wr[0] as f64, w[0]) && close(wr[1] as f64, w[1]), "worker {r}: w {wr:?}, expected {w:?}");
        assert!(close(*br as f64, b), "worker {r}: b {br}, expected {b}");
        // Bit for bit the same on every replica (the reduced gradient is the same bytes).
        assert_eq!((wr, br, crc), (&results[0].1, &results[0].2, &results[0].3), "worker {r} differs from worker 0");
    }
    for s in servers {
        s.shutdown();
    }
}
