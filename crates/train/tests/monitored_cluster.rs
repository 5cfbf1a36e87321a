//! MonitoredTrainingSession over gRPC on a 1 ps + 2 worker cluster (servers on
//! 127.0.0.1:0 ports in this process): variables placed on the ps by
//! `replica_device_setter`, the chief initializes, the other worker waits for it (short
//! bounded poll), both train the shared variables until the global step reaches the
//! stop step, and the chief's checkpoint holds the final step.

use std::net::TcpListener;
use std::time::Duration;

use ferroflow_distributed::{ClusterSpec, Server, ServerOptions};
use ferroflow_graph::{get_or_create_global_step, ops, Scope, Variable};
use ferroflow_runtime::RunOptions;
use ferroflow_train::monitored::{MonitoredOptions, MonitoredTrainingSession, StopAtStepHook};
use ferroflow_train::optimizer::{GradientDescent, Optimizer};
use ferroflow_train::ReplicaDeviceSetter;

const LAST: i64 = 60;

fn train(cluster: ClusterSpec, task: i32, target: String, dir: std::path::PathBuf) -> (usize, i64, f32) {
    let root = Scope::new_root();
    let setter = ReplicaDeviceSetter::for_cluster(&cluster, &format!("/job:worker/task:{task}")).build().unwrap();
    let s = root.with_device_fn(setter);
    let w = Variable::new(&s, "w", ops::constant(&s, 0.0f32));
    let loss =
        ops::square(&s, ops::sub(&s, ops::mul(&s, w.value(), ops::constant(&s, 3.0f32)), ops::constant(&s, 6.0f32)));
    let gs = get_or_create_global_step(&s);
    let train = GradientDescent::new(0.01).minimize(&s, &loss, None, Some(&gs)).unwrap();
    let opts = MonitoredOptions {
        master: target,
        is_chief: task == 0,
        checkpoint_dir: Some(dir),
        save_checkpoint_steps: Some(20),
        hooks: vec![Box::new(StopAtStepHook::last_step(&gs.value(), LAST))],
        wait_timeout: Duration::from_secs(60),
        step_timeout: Duration::from_secs(30),
        ..Default::default()
    };
    let mut sess = MonitoredTrainingSession::new(&root, opts).unwrap();
    let mut local = 0;
    while !sess.should_stop() {
        sess.run(&[], &[], &[&train]).unwrap();
        local += 1;
        assert!(local < 1000, "worker {task} never stopped");
    }
    let raw = sess.raw_session().unwrap();
    let out = raw.run_by_name(&[], &[gs.value().name(), loss.name()], &[], &RunOptions::default()).unwrap();
    let step = out[0].scalar_value::<i64>().unwrap();
    let l = out[1].scalar_value::<f32>().unwrap();
    sess.close().unwrap();
    (local, step, l)
}

#[test]
fn chief_and_worker_train_shared_variables_over_grpc() {
    let ls: Vec<TcpListener> = (0..3).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let addr: Vec<String> = ls.iter().map(|l| format!("127.0.0.1:{}", l.local_addr().unwrap().port())).collect();
    let cluster =
        ClusterSpec::new(&[("ps", vec![addr[0].as_str()]), ("worker", vec![addr[1].as_str(), addr[2].as_str()])])
            .unwrap();
    let mut servers = Vec::new();
    for (i, l) in ls.into_iter().enumerate() {
        let (job, task) = if i == 0 { ("ps", 0) } else { ("worker", i as i32 - 1) };
        servers
            .push(Server::new(&cluster, job, task, ServerOptions { listener: Some(l), ..Default::default() }).unwrap());
    }
    let dir = std::env::temp_dir().join(format!("ff-monitored-cluster-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The non-chief starts first and must wait for the chief.
    let (c2, t2, d2) = (cluster.clone(), servers[2].target().to_string(), dir.clone());
    let other = std::thread::spawn(move || train(c2, 1, t2, d2));
    std::thread::sleep(Duration::from_millis(300));
    let (c1, t1, d1) = (cluster.clone(), servers[1].target().to_string(), dir.clone());
    let chief = std::thread::spawn(move || train(c1, 0, t1, d1));
    let (l0, s0, loss0) = chief.join().unwrap();
    let (l1, s1, _) = other.join().unwrap();
    eprintln!("chief {l0} steps, other {l1} steps, global {s0}/{s1}, loss {loss0}");
    assert!(l0 > 0 && l1 > 0, "both workers trained: {l0}, {l1}");
    // Each worker stops once it sees the global step at LAST; racing steps may pass it.
    assert!(s0 >= LAST && s1 >= LAST && s0 <= LAST + 2 && s1 <= LAST + 2, "{s0} {s1}");
    assert!(l0 + l1 >= LAST as usize, "every global step came from a worker's step");
    assert!(loss0 < 36.0 * 0.05, "the shared variable was trained: loss {loss0}");
    let ckpt = ferroflow_train::latest_checkpoint(&dir).unwrap().expect("the chief saved");
    assert!(ckpt.contains("model.ckpt-"), "{ckpt}");
    std::fs::remove_dir_all(&dir).unwrap();
    for s in &servers {
        s.shutdown();
    }
}
