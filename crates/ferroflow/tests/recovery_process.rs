//! Failure behaviour of distributed training with real processes: `kill -9` of a worker or
//! of the chief in the middle of training, then a restart with the same command line.

mod common;

use std::time::Duration;

use common::{accuracy, Proc, TrainCluster, LIMIT};

struct Cluster(TrainCluster);

impl Cluster {
    fn new() -> Cluster {
        Cluster(TrainCluster::new())
    }

    fn start(&self, job: &str, task: usize) -> Proc {
        self.start_with(job, task, &[])
    }

    fn start_with(&self, job: &str, task: usize, extra: &[&str]) -> Proc {
        let mut args = vec!["--model", "mlp", "--steps", "2500"];
        args.extend_from_slice(extra);
        self.0.start(job, task, &args)
    }

    /// A new cluster with its ps, chief and worker 1 started in that order.
    fn start_all() -> (Cluster, Proc, Proc, Proc) {
        let c = Cluster::new();
        let (ps, chief, w1) = (c.start("ps", 0), c.start("worker", 0), c.start("worker", 1));
        (c, ps, chief, w1)
    }
}

/// The global step in a progress line "…: local step L, global step G: loss …".
fn global_step(line: &str) -> i64 {
    let g = line.split("global step ").nth(1).unwrap_or_else(|| panic!("no global step in '{line}'"));
    g.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
}

fn finish_all(chief: &mut Proc, other: &mut Proc, ps: &mut Proc) {
    let out = chief.succeeds();
    assert!(accuracy(&out) > 85.0, "{out:?}");
    other.succeeds();
    ps.stops();
}

#[test]
fn a_killed_worker_rejoins_and_the_other_keeps_training() {
    let (c, mut ps, mut chief, mut w1) = Cluster::start_all();
    let before = global_step(&w1.wait_line("global step", LIMIT));
    w1.kill9();
    // The chief goes on alone: it reports further steps after the kill.
    let mut last = 0;
    for _ in 0..3 {
        let seen = chief.wait_new_line("global step", LIMIT);
        last = global_step(&seen);
    }
    assert!(last > before, "chief stalled at {last} (worker 1 was killed at {before})");
    // The restarted worker does not wait for initialization: the model is on the ps.
    let mut w1 = c.start("worker", 1);
    let line = w1.wait_line("global step", LIMIT);
    assert!(global_step(&line) > last, "restarted worker began at {line}, the chief was at {last}");
    finish_all(&mut chief, &mut w1, &mut ps);
}

#[test]
fn a_killed_chief_restarts_and_continues_from_the_ps_state() {
    let (c, mut ps, mut chief, mut w1) = Cluster::start_all();
    let at = global_step(&chief.wait_line("global step", LIMIT));
    chief.kill9();
    let mut chief = c.start("worker", 0);
    let line = chief.wait_line("global step", LIMIT);
    // It did not re-initialize: the global step continued instead of restarting at 0.
    assert!(global_step(&line) >= at + 100, "restarted chief at '{line}', it was killed at {at}");
    finish_all(&mut chief, &mut w1, &mut ps);
}

#[test]
fn a_killed_ps_is_restored_by_the_chief_from_the_latest_checkpoint() {
    let dir = std::env::temp_dir().join(format!("ferroflow-ps-restore-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let logdir = dir.display().to_string();
    let chief_args = ["--logdir", logdir.as_str(), "--save_secs", "0.5"];
    let c = Cluster::new();
    let mut ps = c.start("ps", 0);
    let mut chief = c.start_with("worker", 0, &chief_args);
    let mut w1 = c.start("worker", 1);
    let saved = chief.wait_line("saved", LIMIT);
    let saved_step: i64 = saved.rsplit('-').next().unwrap().trim().parse().unwrap();
    ps.kill9();
    let mut ps = c.start("ps", 0);
    // The restarted ps is empty: the chief notices, restores the newest checkpoint and goes on
    // from its step (not from 0).
    let restored = chief.wait_line("restored", LIMIT);
    let step: i64 = restored.rsplit('-').next().unwrap().trim().parse().unwrap();
    assert!(step >= saved_step, "restored {restored} but {saved} existed before");
    let next = global_step(&chief.wait_new_line("global step", LIMIT));
    assert!(next > step, "after restoring step {step} the chief reported global step {next}");
    finish_all(&mut chief, &mut w1, &mut ps);
    // TensorBoard's files and TensorFlow's checkpoint state are in the logdir.
    let names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().any(|n| n.starts_with("events.out.tfevents.")), "{names:?}");
    assert!(names.iter().any(|n| n == "checkpoint"), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".index")), "{names:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_frozen_ps_fails_the_workers_steps_at_their_deadline_naming_it() {
    // A ps that stops answering without closing its connections (SIGSTOP: a hung host or
    // a network partition) must not hang the workers: their step deadline ends the step
    // with DeadlineExceeded, they retry on new sessions for --wait_secs (the time a task
    // has to come back), then exit with an error naming the ps.
    let c = Cluster::new();
    let ps = c.start("ps", 0);
    let extra = ["--step_timeout_secs", "3", "--wait_secs", "5"];
    let mut chief = c.start_with("worker", 0, &extra);
    let mut w1 = c.start_with("worker", 1, &extra);
    chief.wait_line("global step", LIMIT);
    ps.signal("STOP");
    let start = std::time::Instant::now();
    for w in [&mut chief, &mut w1] {
        let (ok, out) = w.finish(Duration::from_secs(120));
        assert!(!ok, "{} kept training with a frozen ps: {out:?}", w.name);
        let err = out.iter().filter(|l| l.starts_with("stderr: error")).cloned().collect::<Vec<_>>().join("\n");
        assert!(err.contains("/job:ps/replica:0/task:0"), "{}: the error does not name the ps: {out:?}", w.name);
        assert!(err.to_lowercase().contains("deadline") || err.contains("within"), "{}: {err}", w.name);
    }
    assert!(start.elapsed() < Duration::from_secs(90), "the workers took {:?} to give up", start.elapsed());
    ps.signal("CONT");
}
