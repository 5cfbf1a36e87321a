//! The main job (between-graph MNIST training: 1 ps + 2 workers, the chief initializes,
//! evaluates and stops the ps) on an in-memory cluster: every task a server of this
//! process, peers reached through the worker cache with no socket. The test checks that
//! the job trains as over gRPC and that this process opened no socket at all.

use std::path::PathBuf;
use std::time::Duration;

use ferroflow_distributed::{ClusterSpec, Fault, InMemoryNet, Rule, Transport, WorkerRpc};
use ferroflow_train::dist::{run_ps, run_worker, DistConfig, WorkerReport};
use ferroflow_train::local::TrainConfig;
use ferroflow_train::models::ModelKind;
use ferroflow_train::PsStrategy;

/// Network sockets this process holds (Linux): its `socket:[inode]` descriptors whose
/// inode is in the kernel's TCP or UDP tables. (The async runtime's own wake-up pair is a
/// Unix socket pair, not a network socket.)
fn open_sockets() -> usize {
    let mut inet = std::collections::HashSet::new();
    for table in ["tcp", "tcp6", "udp", "udp6"] {
        let text = std::fs::read_to_string(format!("/proc/self/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            if let Some(inode) = line.split_whitespace().nth(9) {
                inet.insert(inode.to_string());
            }
        }
    }
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .filter_map(|l| {
                    let l = l.to_string_lossy().into_owned();
                    l.strip_prefix("socket:[").and_then(|r| r.strip_suffix(']')).map(str::to_string)
                })
                .filter(|inode| inet.contains(inode))
                .count()
        })
        .unwrap_or(0)
}

/// An in-memory cluster of `ps` ps tasks and `workers` workers, at `ps<i>.<tag>.mem:1` and
/// `w<i>.<tag>.mem:1`: addresses are names (nothing resolves or binds them), one tag per test.
fn mem_cluster(tag: &str, ps: usize, workers: usize) -> ClusterSpec {
    let addrs = |prefix: &str, n: usize| (0..n).map(|i| format!("{prefix}{i}.{tag}.mem:1")).collect::<Vec<_>>();
    let (ps, workers) = (addrs("ps", ps), addrs("w", workers));
    let jobs: Vec<(&str, Vec<&str>)> = [("ps", &ps), ("worker", &workers)]
        .into_iter()
        .filter(|(_, addrs)| !addrs.is_empty())
        .map(|(job, addrs)| (job, addrs.iter().map(String::as_str).collect()))
        .collect();
    ClusterSpec::new(&jobs).unwrap()
}

fn config(cluster: &ClusterSpec, net: &std::sync::Arc<InMemoryNet>, job: &str, task: i32) -> DistConfig {
    DistConfig {
        cluster: cluster.clone(),
        job_name: job.into(),
        task_index: task,
        train: TrainConfig {
            model: ModelKind::Mlp,
            optimizer: "sgd".parse().unwrap(),
            learning_rate: 0.1,
            lr_decay: None,
            steps: 200,
            batch: 50,
            keep_prob: 1.0,
            seed: 3,
            data_dir: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/mnist")),
            fusion: true,
            trace: None,
        },
        ps_strategy: PsStrategy::RoundRobin,
        wait_timeout: Duration::from_secs(60),
        step_timeout: Duration::from_secs(30),
        logdir: None,
        save_every: Duration::from_secs(600),
        summary_steps: 100,
        sync: false,
        all_reduce: false,
        transport: Transport { in_memory: Some(net.clone()), ..Default::default() },
    }
}

/// [`config`] for a test that loses a task: `steps` steps, each bounded by 2 s, and waits
/// for peers bounded by `wait_secs`, so nobody hangs on the lost task.
fn bounded_config(
    cluster: &ClusterSpec,
    net: &std::sync::Arc<InMemoryNet>,
    job: &str,
    task: i32,
    steps: usize,
    wait_secs: u64,
) -> DistConfig {
    let mut c = config(cluster, net, job, task);
    c.train.steps = steps;
    c.step_timeout = Duration::from_secs(2);
    c.wait_timeout = Duration::from_secs(wait_secs);
    c
}

/// Runs the ps and every worker of `cluster` on threads, each with `cfg(job, task)`;
/// returns the workers' reports once all are done and the ps has stopped.
fn run_job(cluster: &ClusterSpec, cfg: impl Fn(&str, i32) -> DistConfig) -> Vec<WorkerReport> {
    let ps_cfg = cfg("ps", 0);
    let ps = std::thread::spawn(move || run_ps(&ps_cfg, |_| {}));
    let n = cluster.num_tasks("worker").unwrap();
    let workers: Vec<_> = (0..n as i32)
        .map(|t| {
            let c = cfg("worker", t);
            std::thread::spawn(move || run_worker(&c, |_| {}))
        })
        .collect();
    let reports = workers.into_iter().map(|w| w.join().unwrap().unwrap()).collect();
    ps.join().unwrap().unwrap();
    reports
}

/// Joins worker `who`, which must have failed at its step deadline or found a peer gone
/// (`kept`: what it would have done otherwise): its error.
fn gave_up(
    w: std::thread::JoinHandle<Result<WorkerReport, ferroflow_core::Status>>,
    who: &str,
    kept: &str,
) -> ferroflow_core::Status {
    let e = w.join().unwrap().expect_err(kept);
    eprintln!("{who}: {e}");
    assert!(matches!(e.code, ferroflow_core::Code::DeadlineExceeded | ferroflow_core::Code::Unavailable), "{who}: {e}");
    e
}

#[test]
fn the_main_job_trains_on_an_in_memory_cluster_without_sockets() {
    let sockets_before = open_sockets();
    let _probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    assert_eq!(open_sockets(), sockets_before + 1, "the socket count sees a TCP socket");
    drop(_probe);
    let net = InMemoryNet::new(1);
    let cluster = mem_cluster("main", 1, 2);
    let reports = run_job(&cluster, |job, t| config(&cluster, &net, job, t));
    for (i, r) in reports.iter().enumerate() {
        eprintln!("worker {i}: {} local steps, global {}, loss {}", r.local_steps, r.global_step, r.final_loss);
        assert!(r.local_steps > 0 && r.final_loss.is_finite(), "worker {i} trained: {r:?}");
        assert!(r.global_step >= 200, "worker {i} stopped at global step {}", r.global_step);
    }
    let acc = reports[0].test_accuracy.expect("the chief evaluates");
    assert!(acc > 0.85, "test accuracy {acc}");
    assert_eq!(net.filters().fired(), 0);
    assert_eq!(open_sockets(), sockets_before, "the in-memory cluster opened a network socket");
}

/// Synchronous training (SyncReplicasOptimizer over both workers, TensorFlow's semantics)
/// with one slow worker: every RunGraph its master sends to the ps arrives 15 ms late.
/// Every update still averages two gradients (with TensorFlow's shared token queue the
/// fast worker may send both), the job finishes and nobody waits at exit.
#[test]
fn sync_training_waits_for_a_slow_worker() {
    let net = InMemoryNet::new(2);
    let cluster = mem_cluster("sync", 1, 2);
    let slow = Rule::new(Fault::Delay(Duration::from_millis(15)))
        .from(&["/job:worker/task:1"])
        .unwrap()
        .to(&["/job:ps/task:0"])
        .unwrap()
        .rpc(WorkerRpc::RunGraph);
    net.filters().add(slow);
    let with_sync = |job: &str, t: i32| {
        let mut c = config(&cluster, &net, job, t);
        c.sync = true;
        c.train.steps = 60;
        c
    };
    let reports = run_job(&cluster, with_sync);
    for (i, r) in reports.iter().enumerate() {
        eprintln!("worker {i}: {} local steps, global {}, loss {}", r.local_steps, r.global_step, r.final_loss);
        // A worker that ran no step has no loss (the slow one, when the fast one made
        // every update: TensorFlow's shared token queue allows it, and a loaded host makes
        // it happen).
        assert!(r.local_steps == 0 || r.final_loss.is_finite(), "worker {i}: {r:?}");
        assert!(r.global_step >= 60, "worker {i} stopped at global step {}", r.global_step);
    }
    // Each of the 60 updates took two fresh gradients, and a worker step sends at most
    // one; the first step of each worker rode on an initial token.
    let (a, b) = (reports[0].local_steps, reports[1].local_steps);
    assert!(a + b >= 2 * 60, "local steps {a} + {b} cannot have made 60 updates of two gradients");
    // Not lockstep: the fast worker takes the tokens the slow one has not taken yet.
    assert!(a > b, "fast worker {a} local steps, slow worker {b}");
    let fired = net.filters().fired() as usize;
    assert!(fired >= b, "the slow worker's calls were delayed: {fired} for {b} steps");
}

/// A ps that stops answering in the middle of training (a hung host or a network
/// partition: every request to it is lost, nothing is refused) must not hang the workers:
/// their step deadline ends the step, the error names the ps, and both workers return.
#[test]
fn a_frozen_ps_fails_the_workers_steps_at_their_deadline_naming_it() {
    let net = InMemoryNet::new(3);
    let cluster = mem_cluster("frozen", 1, 2);
    let short = |job: &str, t: i32| bounded_config(&cluster, &net, job, t, 100_000, 3);
    let ps_cfg = short("ps", 0);
    let ps = std::thread::spawn(move || run_ps(&ps_cfg, |_| {}));
    let frozen = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let start = std::sync::Arc::new(std::sync::Mutex::new(None));
    let workers: Vec<_> = (0..2)
        .map(|t| {
            let cfg = short("worker", t);
            let (filters, frozen, start) = (net.filters().clone(), frozen.clone(), start.clone());
            std::thread::spawn(move || {
                run_worker(&cfg, move |p| {
                    // The chief freezes the ps once training is under way.
                    if let ferroflow_train::dist::Progress::Step { global, .. } = p {
                        if t == 0 && global >= 30 && !frozen.swap(true, std::sync::atomic::Ordering::SeqCst) {
                            filters.add(Rule::new(Fault::LoseRequest).to(&["/job:ps/task:0"]).unwrap());
                            *start.lock().unwrap() = Some(std::time::Instant::now());
                        }
                    }
                })
            })
        })
        .collect();
    for (i, w) in workers.into_iter().enumerate() {
        let e = gave_up(w, &format!("worker {i}"), "a worker kept training with a frozen ps");
        assert!(e.message.contains("/job:ps/replica:0/task:0"), "worker {i}: the error does not name the ps: {e}");
    }
    let froze_at = start.lock().unwrap().expect("the ps was frozen");
    assert!(froze_at.elapsed() < Duration::from_secs(60), "the workers took {:?} to give up", froze_at.elapsed());
    // The ps itself is fine: stop it as the chief would have.
    net.filters().heal();
    ferroflow_distributed::shutdown_server("grpc://ps0.frozen.mem:1", "test over").unwrap();
    ps.join().unwrap().unwrap();
}

/// Synchronous training by all-reduce on three workers and no ps: every worker holds a
/// replica, the gradients are averaged among the workers, so every worker runs exactly one
/// local step per global step, stops at the same step, and ends with the same bytes in
/// every variable (the trainer checks it and reports the checksum).
#[test]
fn all_reduce_training_keeps_every_replica_equal_without_a_ps() {
    let net = InMemoryNet::new(4);
    let cluster = mem_cluster("ar", 0, 3);
    let workers: Vec<_> = (0..3)
        .map(|t| {
            let mut c = config(&cluster, &net, "worker", t);
            c.all_reduce = true;
            c.train.steps = 120;
            std::thread::spawn(move || run_worker(&c, |_| {}))
        })
        .collect();
    let reports: Vec<WorkerReport> = workers.into_iter().map(|w| w.join().unwrap().unwrap()).collect();
    for (i, r) in reports.iter().enumerate() {
        eprintln!(
            "worker {i}: {} local steps, global {}, loss {}, {:?}",
            r.local_steps, r.global_step, r.final_loss, r.replica_checksum
        );
        assert_eq!((r.local_steps, r.global_step), (120, 120), "worker {i}: {r:?}");
        assert!(r.final_loss.is_finite());
        assert!(r.replica_checksum.is_some() && r.replica_checksum == reports[0].replica_checksum, "worker {i}: {r:?}");
    }
    let acc = reports[0].test_accuracy.expect("the chief evaluates");
    assert!(acc > 0.85, "test accuracy {acc}");
    assert_eq!(net.filters().fired(), 0);
}

/// A replica that stops answering mid-training fails the others' steps within the step
/// deadline (the collective cannot complete), naming what timed out; nobody hangs.
#[test]
fn a_lost_replica_fails_the_all_reduce_steps_at_their_deadline() {
    let net = InMemoryNet::new(5);
    let cluster = mem_cluster("arlost", 0, 2);
    let start = std::sync::Arc::new(std::sync::Mutex::new(None));
    let workers: Vec<_> = (0..2)
        .map(|t| {
            let mut c = bounded_config(&cluster, &net, "worker", t, 100_000, 3);
            c.all_reduce = true;
            let (filters, start) = (net.filters().clone(), start.clone());
            std::thread::spawn(move || {
                run_worker(&c, move |p| {
                    if let ferroflow_train::dist::Progress::Step { global, .. } = p {
                        let mut s = start.lock().unwrap();
                        if t == 0 && global >= 20 && s.is_none() {
                            filters.add(Rule::new(Fault::LoseRequest).to(&["/job:worker/task:1"]).unwrap());
                            *s = Some(std::time::Instant::now());
                        }
                    }
                })
            })
        })
        .collect();
    for (i, w) in workers.into_iter().enumerate() {
        gave_up(w, &format!("worker {i}"), "a replica kept training without its peer");
    }
    let lost_at = start.lock().unwrap().expect("the replica was cut off");
    assert!(lost_at.elapsed() < Duration::from_secs(60), "the chief took {:?} to give up", lost_at.elapsed());
    net.filters().heal();
}

/// Elastic asynchronous training: worker 2 starts only once training is under way and
/// worker 1 is cut off (every request it sends is lost) in the middle. The late worker
/// joins the running model without restarting anyone, the lost one gives up within its
/// bounds, and the chief reaches the last step, evaluates and stops the ps after waiting
/// (bounded) for the worker that left.
#[test]
fn async_training_absorbs_a_worker_that_joins_late_and_one_that_leaves() {
    use std::sync::atomic::{AtomicI64, Ordering};
    let net = InMemoryNet::new(6);
    let cluster = mem_cluster("elastic", 1, 3);
    let cfg = |job: &str, t: i32| bounded_config(&cluster, &net, job, t, 400, if t == 1 { 3 } else { 10 });
    let ps_cfg = cfg("ps", 0);
    let ps = std::thread::spawn(move || run_ps(&ps_cfg, |_| {}));
    let chief_global = std::sync::Arc::new(AtomicI64::new(0));
    let first_seen = std::sync::Arc::new(AtomicI64::new(-1));
    let spawn = |t: i32| {
        let c = cfg("worker", t);
        let (g, first) = (chief_global.clone(), first_seen.clone());
        std::thread::spawn(move || {
            run_worker(&c, move |p| {
                if let ferroflow_train::dist::Progress::Step { global, .. } = p {
                    match t {
                        0 => g.store(global, Ordering::SeqCst),
                        2 => {
                            let _ = first.compare_exchange(-1, global, Ordering::SeqCst, Ordering::SeqCst);
                        }
                        _ => {}
                    }
                }
            })
        })
    };
    let started = std::time::Instant::now();
    let chief = spawn(0);
    let w1 = spawn(1);
    let wait_for = |step: i64| {
        while chief_global.load(Ordering::SeqCst) < step {
            assert!(started.elapsed() < Duration::from_secs(120), "training stalled before global step {step}");
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_for(60);
    let w2 = spawn(2);
    wait_for(150);
    net.filters().add(Rule::new(Fault::LoseRequest).from(&["/job:worker/task:1"]).unwrap());
    gave_up(w1, "worker 1", "the cut-off worker kept training");
    let late = w2.join().unwrap().unwrap();
    let chief = chief.join().unwrap().unwrap();
    ps.join().unwrap().unwrap();
    let first = first_seen.load(Ordering::SeqCst);
    eprintln!("late worker: first global step {first}, {late:?}; chief {chief:?}");
    assert!(first > 60, "worker 2 started from global step {first}, not from the running model");
    assert!(late.local_steps > 0 && late.global_step >= 400, "{late:?}");
    assert!(chief.global_step >= 400, "{chief:?}");
    assert!(chief.test_accuracy.expect("the chief evaluates") > 0.85, "{chief:?}");
    assert!(started.elapsed() < Duration::from_secs(120), "the job took {:?}", started.elapsed());
}
