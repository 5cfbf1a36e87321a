//! MonitoredTrainingSession and Supervisor on in-process sessions: stopping at a step,
//! checkpoints and restore, summaries, logging, the bounded wait of a non-chief, and
//! recovery from a failed step.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ferroflow_core::{Code, Status, Tensor};
use ferroflow_graph::{get_or_create_global_step, ops, Operation, Output, Scope, Variable};
use ferroflow_runtime::{DirectSession, RunOptions, StepRunner};

use super::*;
use crate::optimizer::{GradientDescent, Optimizer};

/// w starts at 0 and is trained towards 2 by minimizing (3w - 6)²; one summary.
struct Model {
    root: Scope,
    w: Variable,
    loss: Output,
    train: Operation,
}

fn model() -> Model {
    let root = Scope::new_root();
    let w = Variable::new(&root, "w", ops::constant(&root, 0.0f32));
    let three = ops::constant(&root, 3.0f32);
    let six = ops::constant(&root, 6.0f32);
    let loss = ops::square(&root, ops::sub(&root, ops::mul(&root, w.value(), three), six));
    crate::summary::scalar(&root, "loss", loss.clone());
    let gs = get_or_create_global_step(&root);
    let train = GradientDescent::new(0.02).minimize(&root, &loss, None, Some(&gs)).unwrap();
    Model { root, w, loss, train }
}

fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ff-monitored-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn value(sess: &dyn StepRunner, o: &Output) -> f32 {
    sess.run_by_name(&[], &[o.name()], &[], &RunOptions::default()).unwrap()[0].scalar_value::<f32>().unwrap()
}

fn step_of(sess: &dyn StepRunner, v: &Variable) -> i64 {
    sess.run_by_name(&[], &[v.value().name()], &[], &RunOptions::default()).unwrap()[0].scalar_value::<i64>().unwrap()
}

#[test]
fn stops_at_step_and_trains() {
    let m = model();
    let gs = get_or_create_global_step(&m.root);
    let opts =
        MonitoredOptions { hooks: vec![Box::new(StopAtStepHook::last_step(&gs.value(), 25))], ..Default::default() };
    let mut sess = MonitoredTrainingSession::new(&m.root, opts).unwrap();
    let mut runs = 0;
    while !sess.should_stop() {
        sess.run(&[], &[], &[&m.train]).unwrap();
        runs += 1;
        assert!(runs <= 25, "did not stop");
    }
    assert_eq!(runs, 25);
    let raw = sess.raw_session().unwrap();
    assert_eq!(step_of(raw, &gs), 25);
    assert!(value(raw, &m.loss) < 1.0, "loss fell");
    sess.close().unwrap();
    let e = sess.run(&[], &[], &[&m.train]).unwrap_err();
    assert_eq!(e.code, Code::FailedPrecondition);
}

#[test]
fn chief_checkpoints_and_a_new_session_restores() {
    let dir = tmpdir("ckpt");
    let (w_after, saved) = {
        let m = model();
        let gs = get_or_create_global_step(&m.root);
        let opts = MonitoredOptions {
            checkpoint_dir: Some(dir.clone()),
            save_checkpoint_steps: Some(5),
            save_summaries_steps: Some(4),
            hooks: vec![Box::new(StopAtStepHook::num_steps(&gs.value(), 12))],
            ..Default::default()
        };
        let mut sess = MonitoredTrainingSession::new(&m.root, opts).unwrap();
        while !sess.should_stop() {
            sess.run(&[], &[], &[&m.train]).unwrap();
        }
        let w = value(sess.raw_session().unwrap(), &m.w.value());
        sess.close().unwrap();
        let saved = crate::saver::latest_checkpoint(&dir).unwrap().expect("a checkpoint");
        (w, saved)
    };
    assert!(saved.ends_with("model.ckpt-12"), "{saved}");
    // Global steps 5 and 10 by the step trigger, 12 at the end.
    let n_index = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".index"))
        .count();
    assert_eq!(n_index, 3);
    let events = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("events.out.tfevents"))
        .count();
    assert_eq!(events, 1);
    // A new process (new graph, new session) restores instead of initializing.
    let m = model();
    let gs = get_or_create_global_step(&m.root);
    let opts = MonitoredOptions { checkpoint_dir: Some(dir.clone()), save_checkpoint_secs: None, ..Default::default() };
    let sess = MonitoredTrainingSession::new(&m.root, opts).unwrap();
    let raw = sess.raw_session().unwrap();
    assert_eq!(step_of(raw, &gs), 12);
    assert_eq!(value(raw, &m.w.value()), w_after);
    drop(sess);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn logging_hook_reports_every_n_steps() {
    let m = model();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l2 = lines.clone();
    let hook = LoggingTensorHook::new(&[("loss", &m.loss)], 3).with_sink(move |s| l2.lock().unwrap().push(s));
    let opts = MonitoredOptions { hooks: vec![Box::new(hook)], ..Default::default() };
    let mut sess = MonitoredTrainingSession::new(&m.root, opts).unwrap();
    for _ in 0..7 {
        sess.run(&[], &[], &[&m.train]).unwrap();
    }
    let lines = lines.lock().unwrap();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("loss = 36"), "{lines:?}");
}

#[test]
fn non_chief_waits_bounded_and_names_the_variables() {
    let m = model();
    let opts =
        MonitoredOptions { is_chief: false, wait_timeout: std::time::Duration::from_millis(300), ..Default::default() };
    let e = MonitoredTrainingSession::new(&m.root, opts).err().expect("nobody initializes the model");
    assert_eq!(e.code, Code::DeadlineExceeded);
    assert!(e.message.contains("the chief to initialize") && e.message.contains('w'), "{e}");
}

/// A session that fails one step with Unavailable, like a ps task that restarted.
struct Flaky {
    inner: DirectSession,
    fail_at: usize,
    runs: Arc<AtomicUsize>,
}

impl StepRunner for Flaky {
    fn run_by_name_meta(
        &self,
        step: ferroflow_runtime::StepArgs<'_>,
    ) -> Result<(Vec<Tensor>, ferroflow_core::proto::RunMetadata), Status> {
        if !step.targets.is_empty() && self.runs.fetch_add(1, Ordering::SeqCst) + 1 == self.fail_at {
            return Err(Status::unavailable("/job:ps/replica:0/task:0 went away"));
        }
        self.inner.run_by_name_meta(step)
    }
}

#[test]
fn recovers_from_unavailable_by_restoring_the_checkpoint() {
    let dir = tmpdir("recover");
    let m = model();
    let gs = get_or_create_global_step(&m.root);
    let opened = Arc::new(AtomicUsize::new(0));
    let runs = Arc::new(AtomicUsize::new(0));
    let (o2, r2) = (opened.clone(), runs.clone());
    let factory: SessionFactory = Arc::new(move |g| {
        // The first session fails its 8th training step; the next one is a fresh task
        // with no variables, so the chief must restore them from the checkpoint.
        let n = o2.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(Flaky { inner: DirectSession::new(g), fail_at: if n == 0 { 8 } else { 0 }, runs: r2.clone() }))
    });
    let opts = MonitoredOptions {
        checkpoint_dir: Some(dir.clone()),
        save_checkpoint_steps: Some(5),
        session_factory: Some(factory),
        ..Default::default()
    };
    let mut sess = MonitoredTrainingSession::new(&m.root, opts).unwrap();
    for _ in 0..10 {
        sess.run(&[], &[], &[&m.train]).unwrap();
    }
    assert_eq!(opened.load(Ordering::SeqCst), 2, "one recovery");
    // Checkpoint at step 6 (saved after steps 1 and 6); the failed 8th run is retried on
    // the restored model: 6 + (10 - 7) = 9 steps in all.
    assert_eq!(step_of(sess.raw_session().unwrap(), &gs), 9);
    drop(sess);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn supervisor_managed_session() {
    let dir = tmpdir("sv");
    let m = model();
    let sv = Supervisor::new(
        &m.root,
        SupervisorOptions {
            logdir: Some(dir.clone()),
            saver: Some(Arc::new(crate::saver::Saver::new(&m.root).unwrap())),
            ..Default::default()
        },
    );
    assert!(sv.is_chief());
    let mut sess = sv.managed_session("").unwrap();
    let mut steps = 0;
    while !sv.should_stop() && !sess.should_stop() {
        sess.run(&[], &[], &[&m.train]).unwrap();
        steps += 1;
        if steps == 15 {
            sv.request_stop();
        }
    }
    assert_eq!(steps, 15);
    assert!(sess.should_stop());
    sess.close().unwrap();
    // The last checkpoint is saved at close.
    let p = crate::saver::latest_checkpoint(&dir).unwrap().expect("checkpoint");
    assert!(p.ends_with("model.ckpt-15"), "{p}");
    // A stop the session (or one of its hooks) asks for is the supervisor's too.
    let mut sess = sv.managed_session("").unwrap();
    assert!(!sv.should_stop());
    sess.request_stop();
    assert!(sv.should_stop());
    sess.close().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

fn saver_of_w(m: &Model) -> crate::saver::Saver {
    let opts = crate::saver::SaverOptions { var_list: Some(vec![m.w.clone()]), ..Default::default() };
    crate::saver::Saver::with_options(&m.root, opts).unwrap()
}

#[test]
fn the_listener_hears_ready_saves_and_restores_and_a_given_saver_is_used() {
    let dir = tmpdir("listener");
    let heard = Arc::new(Mutex::new(Vec::new()));
    let h2 = heard.clone();
    let listener: Listener = Arc::new(move |e| h2.lock().unwrap().push(e));
    let run = |steps: usize| {
        let m = model();
        // A saver of `w` only: the global step is not in its checkpoints.
        let saver = Arc::new(saver_of_w(&m));
        let opts = MonitoredOptions {
            checkpoint_dir: Some(dir.clone()),
            save_checkpoint_steps: Some(2),
            saver: Some(saver),
            listener: Some(listener.clone()),
            ..Default::default()
        };
        let mut sess = MonitoredTrainingSession::new(&m.root, opts).unwrap();
        for _ in 0..steps {
            sess.run(&[], &[], &[&m.train]).unwrap();
        }
        let (out, meta) = sess.run_traced(&[], &[&m.loss], &[]).unwrap();
        assert!(out[0].scalar_value::<f32>().unwrap() < 36.0);
        assert!(meta.step_stats.is_some_and(|s| !s.dev_stats.is_empty()), "a traced step has step stats");
        let w = value(sess.raw_session().unwrap(), &m.w.value());
        let gs = step_of(sess.raw_session().unwrap(), &get_or_create_global_step(&m.root));
        sess.close().unwrap();
        (w, gs)
    };
    let (w, gs) = run(3);
    assert_eq!(gs, 3);
    {
        let got = heard.lock().unwrap();
        assert_eq!(got[0], SessionEvent::Ready, "{got:?}");
        let saved: Vec<&String> =
            got.iter().filter_map(|e| if let SessionEvent::Saved(p) = e { Some(p) } else { None }).collect();
        // Every 2 runs: global step 2, then 3 at the traced run (which trains nothing).
        assert_eq!(saved.len(), 2, "{got:?}");
        assert!(saved[0].ends_with("model.ckpt-2") && saved[1].ends_with("model.ckpt-3"), "{got:?}");
    }
    heard.lock().unwrap().clear();
    // A second run restores `w` with the given saver; the global step (not saved) restarts.
    let m = model();
    let saver = Arc::new(saver_of_w(&m));
    let opts = MonitoredOptions {
        checkpoint_dir: Some(dir.clone()),
        save_checkpoint_secs: None,
        saver: Some(saver),
        listener: Some(listener.clone()),
        ..Default::default()
    };
    let sess = MonitoredTrainingSession::new(&m.root, opts).unwrap();
    let raw = sess.raw_session().unwrap();
    assert_eq!(value(raw, &m.w.value()), w);
    assert_eq!(step_of(raw, &get_or_create_global_step(&m.root)), 0);
    let got = heard.lock().unwrap().clone();
    assert!(
        matches!(&got[..], [SessionEvent::Restored(p), SessionEvent::Ready] if p.ends_with("model.ckpt-3")),
        "{got:?}"
    );
    drop(sess);
    std::fs::remove_dir_all(&dir).unwrap();
}
