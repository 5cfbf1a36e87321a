//! Synchronous distributed training (`--sync`, TensorFlow's SyncReplicasOptimizer
//! semantics: every worker aggregated, one shared token queue, initial tokens) with real
//! processes: every global step averages two fresh gradients, training ends without anyone
//! waiting for a token that never comes, and a killed worker or ps is survived.

mod common;

use std::time::Duration;

use common::{accuracy, Proc, TrainCluster, LIMIT};

struct Cluster(TrainCluster);

impl Cluster {
    fn new() -> Cluster {
        Cluster(TrainCluster::new())
    }

    fn start(&self, job: &str, task: usize, steps: &str, extra: &[&str]) -> Proc {
        let mut args = vec!["--sync", "--model", "mlp", "--optimizer", "adagrad", "--learning_rate", "0.05"];
        args.extend_from_slice(&["--steps", steps]);
        args.extend_from_slice(extra);
        self.0.start(job, task, &args)
    }

    /// The ps, the chief and worker 1 for `steps` steps, started in that order.
    fn start_all(&self, steps: &str) -> (Proc, Proc, Proc) {
        (self.start("ps", 0, steps, &[]), self.start("worker", 0, steps, &[]), self.start("worker", 1, steps, &[]))
    }
}

/// (local, global) of a line "…: local step L, global step G, loss …".
fn steps(line: &str) -> (i64, i64) {
    let num = |after: &str| -> i64 {
        let g = line.split(after).nth(1).unwrap_or_else(|| panic!("no '{after}' in '{line}'"));
        g.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    (num("local step "), num("global step "))
}

/// The summary line "…: N local steps in …, global step G, …".
fn summary(lines: &[String]) -> (i64, i64) {
    let l = lines.iter().find(|l| l.contains("local steps in")).unwrap_or_else(|| panic!("no summary in {lines:?}"));
    let local = l.split(" local steps in").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
    let g = l.split("global step ").nth(1).unwrap();
    (local, g.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap())
}

#[test]
fn sync_workers_reach_the_last_step_and_all_exit() {
    let c = Cluster::new();
    let mut ps = c.start("ps", 0, "400", &[]);
    let mut w1 = c.start("worker", 1, "400", &[]);
    let mut chief = c.start("worker", 0, "400", &[]);
    let chief_out = chief.succeeds();
    let w1_out = w1.succeeds();
    // Both end exactly at the last global step (nobody was left waiting).
    let (c_local, c_global) = summary(&chief_out);
    let (w_local, w_global) = summary(&w1_out);
    assert_eq!((c_global, w_global), (400, 400), "{chief_out:?} {w1_out:?}");
    // Past the 20 warm-up steps each also reports its steady rate (what the benchmark reads).
    for out in [&chief_out, &w1_out] {
        let l = out.iter().find(|l| l.contains("local steps in")).unwrap();
        let rate: f64 =
            l.split("; ").nth(1).and_then(|r| r.split(" after the first 20)").next()).unwrap().parse().unwrap();
        assert!(rate > 0.0, "{l}");
    }
    // Each of the 400 updates averaged two fresh gradients and a worker step sends one: with
    // TensorFlow's shared token queue a fast worker may send both, so only the sum is fixed.
    assert!(c_local + w_local >= 800, "{c_local} + {w_local} local steps for 400 updates of two gradients");
    assert!(c_local > 0 && w_local > 0, "{chief_out:?} {w1_out:?}");
    assert!(accuracy(&chief_out) > 85.0, "{chief_out:?}");
    ps.stops();
}

#[test]
fn sync_a_killed_worker_rejoins_and_the_job_finishes() {
    let c = Cluster::new();
    let (mut ps, mut chief, mut w1) = c.start_all("3000");
    w1.wait_line("global step", LIMIT);
    w1.kill9();
    // An update may now wait for worker 1 (as in TensorFlow, when the dead worker held one
    // of the update's tokens); the chief's token wait is bounded by --step_timeout_secs,
    // well beyond the restart.
    std::thread::sleep(Duration::from_secs(2));
    let mut w1 = c.start("worker", 1, "3000", &[]);
    let chief_out = chief.succeeds();
    assert_eq!(summary(&chief_out).1, 3000, "{chief_out:?}");
    assert!(accuracy(&chief_out) > 85.0, "{chief_out:?}");
    // The restarted worker rejoins (or finds training over) and exits cleanly.
    let w1_out = w1.succeeds();
    assert_eq!(summary(&w1_out).1, 3000, "{w1_out:?}");
    ps.stops();
}

#[test]
fn sync_a_killed_ps_is_restored_and_training_resumes() {
    let dir = std::env::temp_dir().join(format!("ferroflow-sync-ps-restore-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let logdir = dir.display().to_string();
    let c = Cluster::new();
    let mut ps = c.start("ps", 0, "1500", &[]);
    let mut chief = c.start("worker", 0, "1500", &["--logdir", logdir.as_str(), "--save_secs", "0.5"]);
    let mut w1 = c.start("worker", 1, "1500", &[]);
    let saved = chief.wait_line("saved", LIMIT);
    let saved_step: i64 = saved.rsplit('-').next().unwrap().trim().parse().unwrap();
    ps.kill9();
    let mut ps = c.start("ps", 0, "1500", &[]);
    let restored = chief.wait_line("restored", LIMIT);
    let step: i64 = restored.rsplit('-').next().unwrap().trim().parse().unwrap();
    assert!(step >= saved_step, "restored {restored} but {saved} existed before");
    // Worker 1's progress lines from before the kill may still be unread (on a fast host
    // it reports global step 100 before the first checkpoint); it cannot step without the
    // ps, so every line it prints after the restore is new.
    w1.skip_printed();
    let (_, next) = steps(&w1.wait_new_line("global step", LIMIT));
    assert!(next > step, "after the restore of step {step} worker 1 reported global step {next}");
    let chief_out = chief.succeeds();
    assert_eq!(summary(&chief_out).1, 1500, "{chief_out:?}");
    w1.succeeds();
    ps.stops();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--all_reduce` with real processes and no ps: two replicas average their gradients by a
/// ring all-reduce between the processes, both run exactly one local step per global
/// step, stop together and print the same checksum of their variables.
/// Two all-reduce workers on fresh ports: `start(task, steps, extra flags)`.
fn all_reduce_job() -> impl Fn(&str, &str, &[&str]) -> Proc {
    let [w0, w1] = common::free_ports::<2>();
    let workers = format!("127.0.0.1:{w0},127.0.0.1:{w1}");
    move |task: &str, steps: &str, extra: &[&str]| {
        let args = ["train", "--all_reduce", "--model", "mlp", "--optimizer", "adagrad", "--learning_rate", "0.05"];
        let rest = ["--steps", steps, "--no_progress", "--data_dir", common::DATA, "--worker_hosts", &workers];
        let me = ["--job_name", "worker", "--task_index", task];
        Proc::start(&format!("worker {task}"), &[&args[..], &rest[..], extra, &me[..]].concat(), &[])
    }
}

/// The CRC-32C a replica printed for its variables.
fn replica_crc(out: &[String]) -> String {
    let l = out.iter().find(|l| l.contains("same variables")).unwrap_or_else(|| panic!("no checksum in {out:?}"));
    l.rsplit("CRC-32C ").next().unwrap().to_string()
}

#[test]
fn all_reduce_replicas_without_a_ps_train_in_lockstep() {
    let start = all_reduce_job();
    let mut w1 = start("1", "300", &[]);
    let mut chief = start("0", "300", &[]);
    let (chief_out, w1_out) = (chief.succeeds(), w1.succeeds());
    assert_eq!(summary(&chief_out), (300, 300), "{chief_out:?}");
    assert_eq!(summary(&w1_out), (300, 300), "{w1_out:?}");
    assert_eq!(replica_crc(&chief_out), replica_crc(&w1_out));
    assert!(accuracy(&chief_out) > 85.0, "{chief_out:?}");
}

/// Every all-reduce worker killed mid-training and started again: worker 0 restores its
/// latest checkpoint and broadcasts it, so worker 1 (which has no checkpoint of its own)
/// resumes from the same global step, and both finish with the same variables.
#[test]
fn all_reduce_workers_restarted_resume_from_worker_0s_checkpoint() {
    let dir = std::env::temp_dir().join(format!("ff-allreduce-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let logdir = dir.to_str().unwrap();
    let start = all_reduce_job();
    let flags = ["--logdir", logdir, "--save_secs", "0.2"];
    let mut w1 = start("1", "1500", &flags);
    let mut chief = start("0", "1500", &flags);
    chief.wait_line("saved", LIMIT);
    chief.wait_new_line("global step", LIMIT);
    chief.kill9();
    w1.kill9();
    let mut w1 = start("1", "1500", &flags);
    let mut chief = start("0", "1500", &flags);
    let (chief_out, w1_out) = (chief.succeeds(), w1.succeeds());
    assert!(chief_out.iter().any(|l| l.contains("restored")), "{chief_out:?}");
    let (local, global) = summary(&w1_out);
    assert_eq!(global, 1500, "{w1_out:?}");
    assert!(local < 1500, "worker 1 started again from step 0: {w1_out:?}");
    assert_eq!(summary(&chief_out), (local, 1500), "{chief_out:?}");
    assert_eq!(replica_crc(&chief_out), replica_crc(&w1_out));
    let _ = std::fs::remove_dir_all(&dir);
}
