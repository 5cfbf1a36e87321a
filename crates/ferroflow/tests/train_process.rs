//! Multi-process tests of distributed training: `ferroflow demo`, and the guide's recipe of
//! separate `ferroflow train` processes (2 ps + 2 workers, classic flags and TF_CONFIG).
//! Every wait is bounded and every child is killed at the end, even when a test fails.

mod common;

use std::time::Duration;

use common::{accuracy, free_ports, Proc, DATA, LIMIT};

#[test]
fn demo_trains_the_mlp_and_every_process_exits() {
    // A fresh logdir: a checkpoint left by an earlier run would be restored instead.
    let logdir = std::env::temp_dir().join(format!("ff-demo-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&logdir);
    let logdir_s = logdir.display().to_string();
    let mut demo = Proc::start(
        "ferroflow demo",
        &[
            "demo",
            "--model",
            "mlp",
            "--steps",
            "400",
            "--seed",
            "3",
            "--lr_decay_steps",
            "200",
            "--no_progress",
            "--data_dir",
            DATA,
            "--logdir",
            &logdir_s,
        ],
        &[],
    );
    let (ok, lines) = demo.finish(LIMIT);
    assert!(ok, "demo failed: {lines:?}");
    assert!(accuracy(&lines) > 90.0, "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("all 3 processes exited cleanly")), "{lines:?}");
    assert!(logdir.join("checkpoint").exists(), "the chief checkpointed into {logdir_s}");
    std::fs::remove_dir_all(&logdir).unwrap();
}

/// A learning-rate schedule that cannot work is refused before training, naming the flag's
/// parameter.
#[test]
fn a_bad_decay_schedule_is_an_error() {
    let mut p = Proc::start(
        "ferroflow train",
        &["train", "--model", "mlp", "--steps", "5", "--lr_decay_steps", "0", "--no_progress", "--data_dir", DATA],
        &[],
    );
    let (ok, lines) = p.finish(LIMIT);
    assert!(!ok, "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("decay_steps must be positive, got 0")), "{lines:?}");
}

#[test]
fn two_ps_two_workers_with_flags_and_tf_config() {
    let ports: [u16; 4] = free_ports();
    let (ps, wk) = ([ports[0], ports[1]], [ports[2], ports[3]]);
    let ps_hosts = format!("127.0.0.1:{},127.0.0.1:{}", ps[0], ps[1]);
    let worker_hosts = format!("127.0.0.1:{},127.0.0.1:{}", wk[0], wk[1]);
    let common = |job: &str, task: &str| -> Vec<String> {
        let mut v: Vec<String> = ["train", "--model", "mlp", "--steps", "300", "--no_progress", "--data_dir", DATA]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(["--ps_strategy".into(), "greedy".into()]);
        if !job.is_empty() {
            v.extend(["--ps_hosts".into(), ps_hosts.clone(), "--worker_hosts".into(), worker_hosts.clone()]);
            v.extend(["--job_name".into(), job.into(), "--task_index".into(), task.into()]);
        }
        v
    };
    let args = |v: &Vec<String>| v.clone();
    // The non-chief worker starts first and must wait for the chief, saying so.
    let w1_args = args(&common("worker", "1"));
    let mut w1 = Proc::start("worker 1", &w1_args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    w1.wait_line("waiting for", Duration::from_secs(60));
    let p0_args = args(&common("ps", "0"));
    let p1_args = args(&common("ps", "1"));
    let mut p0 = Proc::start("ps 0", &p0_args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    let mut p1 = Proc::start("ps 1", &p1_args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    // The chief gets its cluster from TF_CONFIG (Kubeflow's TFJob form).
    let tf_config = format!(
        r#"{{"cluster": {{"ps": ["127.0.0.1:{}", "127.0.0.1:{}"], "worker": ["127.0.0.1:{}", "127.0.0.1:{}"]}},
            "task": {{"type": "worker", "index": 0}}}}"#,
        ps[0], ps[1], wk[0], wk[1]
    );
    let chief_args = args(&common("", ""));
    let mut chief =
        Proc::start("chief", &chief_args.iter().map(String::as_str).collect::<Vec<_>>(), &[("TF_CONFIG", tf_config)]);
    let (ok, chief_out) = chief.finish(LIMIT);
    assert!(ok, "chief failed: {chief_out:?}");
    assert!(accuracy(&chief_out) > 85.0, "{chief_out:?}");
    let (ok, w1_out) = w1.finish(LIMIT);
    assert!(ok, "worker 1 failed: {w1_out:?}");
    assert!(w1_out.iter().any(|l| l.contains("global step")), "{w1_out:?}");
    // The chief stopped both ps tasks once both workers were done.
    for p in [&mut p0, &mut p1] {
        let (ok, out) = p.finish(Duration::from_secs(30));
        assert!(ok, "{} failed: {out:?}", p.name);
        assert!(out.iter().any(|l| l.contains("stopped")), "{out:?}");
    }
}
