//! `MonitoredTrainingSession` and `Supervisor` (TensorFlow 1.x's training session
//! managers) over any ferroflow session: in-process (`""`) or a cluster (`grpc://…`).
//!
//! [`MonitoredTrainingSession`] creates the session and gets the model ready — the chief
//! restores the latest checkpoint of `checkpoint_dir` or initializes what is not
//! initialized yet, the other workers wait for the chief with a short, bounded poll that
//! says what is missing (not TensorFlow's fixed 30 s) — runs the hooks around every step,
//! and, when a step fails with Aborted or Unavailable (a ps or worker task restarted),
//! opens a new session, restores or waits again, and retries the step.
//!
//! [`Supervisor`] is the older API with the same machinery: `managed_session`,
//! `should_stop`, `request_stop`, checkpoints every `save_model_secs` and summaries every
//! `save_summaries_secs` (taken between steps, not on background threads).

mod hooks;
mod scaffold;
mod supervisor;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::{ConfigProto, RunMetadata};
use ferroflow_core::{Code, Status, Tensor};
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::{get_or_create_global_step, Graph, Operation, Output, Scope, Variable};
use ferroflow_runtime::{DirectSession, RunOptions, StepArgs, StepRunner};

pub use hooks::{
    CheckpointSaverHook, Every, LoggingTensorHook, RunContext, SessionRunHook, StopAtStepHook, SummarySaverHook,
};
pub use supervisor::{ManagedSession, Supervisor, SupervisorOptions};

use crate::saver::Saver;
use scaffold::Scaffold;

/// A session owned by a monitored session.
pub type BoxSession = Box<dyn StepRunner + Send + Sync>;

/// Opens a session on `target` for `graph`: `""` in process, `grpc://host:port` on a
/// cluster (the session sees nodes added to the graph later).
pub fn open_session(target: &str, graph: &Graph, config: &ConfigProto) -> Result<BoxSession, Status> {
    if target.is_empty() {
        Ok(Box::new(DirectSession::new(graph)))
    } else {
        Ok(Box::new(GrpcSession::with_config(target, graph, config.clone())?))
    }
}

/// Options of a [`MonitoredTrainingSession`] (TensorFlow's argument names).
pub struct MonitoredOptions {
    /// `""` (in process) or `grpc://host:port` of this worker's task.
    pub master: String,
    /// The chief initializes, restores and saves; the others wait for it.
    pub is_chief: bool,
    /// Where the chief restores from and saves checkpoints and summaries (`None`: neither).
    pub checkpoint_dir: Option<PathBuf>,
    /// Run on every worker.
    pub hooks: Vec<Box<dyn SessionRunHook>>,
    /// Run on the chief only.
    pub chief_only_hooks: Vec<Box<dyn SessionRunHook>>,
    /// Checkpoint period (default 600 s, TensorFlow's); `None` with `save_checkpoint_steps`
    /// also `None`: no periodic checkpoints.
    pub save_checkpoint_secs: Option<Duration>,
    /// Checkpoint every this many steps instead.
    pub save_checkpoint_steps: Option<u64>,
    /// Summaries every this many steps (default 100), when the graph has summaries.
    pub save_summaries_steps: Option<u64>,
    /// How long a non-chief worker waits for the chief to initialize the model.
    pub wait_timeout: Duration,
    /// Deadline of each step.
    pub step_timeout: Duration,
    /// How many times a step is retried after Aborted/Unavailable.
    pub max_recoveries: usize,
    /// Also recover from a step that ran out of its deadline (DeadlineExceeded), as from a
    /// task that became unavailable: in asynchronous training a step that hits its
    /// deadline is waiting for a peer it cannot reach (a cut link, a hung host), and a new
    /// session waits (bounded) until the peer answers again. Off by default (TensorFlow
    /// recovers from Aborted and Unavailable only); `ferroflow train` sets it for
    /// asynchronous training, where retrying a step is always allowed.
    pub recover_deadlines: bool,
    /// Session configuration (device filters, operation timeout, …).
    pub config: ConfigProto,
    /// Opens sessions instead of [`open_session`] (wrappers, tests).
    pub session_factory: Option<SessionFactory>,
    /// The saver the chief restores and checkpoints with (TensorFlow's `Scaffold.saver`);
    /// `None`: one over every saveable variable.
    pub saver: Option<Arc<Saver>>,
    /// Told what the session waits for, restores, saves and recovers from (a progress
    /// view); everything is also logged with `tracing`.
    pub listener: Option<Listener>,
}

/// What a monitored session tells its [`Listener`].
#[derive(Clone, Debug, PartialEq)]
pub enum SessionEvent {
    /// Waiting for something (the parameter servers, the chief) to become ready.
    Waiting(String),
    /// The chief restored this checkpoint.
    Restored(String),
    /// The model is ready and the hooks have seen the new session.
    Ready,
    /// A step failed with this error; a new session is being opened.
    Recovering(String),
    /// The chief saved this checkpoint.
    Saved(String),
}

/// Receives a monitored session's [`SessionEvent`]s.
pub type Listener = Arc<dyn Fn(SessionEvent) + Send + Sync>;

/// Opens a session for a graph (see [`MonitoredOptions::session_factory`]).
pub type SessionFactory = Arc<dyn Fn(&Graph) -> Result<BoxSession, Status> + Send + Sync>;

impl Default for MonitoredOptions {
    fn default() -> Self {
        MonitoredOptions {
            master: String::new(),
            is_chief: true,
            checkpoint_dir: None,
            hooks: Vec::new(),
            chief_only_hooks: Vec::new(),
            save_checkpoint_secs: Some(Duration::from_secs(600)),
            save_checkpoint_steps: None,
            save_summaries_steps: Some(100),
            wait_timeout: Duration::from_secs(300),
            step_timeout: Duration::from_secs(120),
            max_recoveries: 20,
            recover_deadlines: false,
            config: ConfigProto::default(),
            session_factory: None,
            saver: None,
            listener: None,
        }
    }
}

/// A training session that initializes or restores the model, runs hooks around every
/// step and recovers from task failures (TensorFlow's `MonitoredTrainingSession`).
pub struct MonitoredTrainingSession {
    graph: Graph,
    opts: MonitoredOptions,
    scaffold: Scaffold,
    hooks: Vec<Box<dyn SessionRunHook>>,
    session: Option<BoxSession>,
    /// Set by hooks and `request_stop`; shared with the [`Supervisor`] that opened it.
    stop: Arc<AtomicBool>,
    closed: bool,
    global_step: Variable,
}

/// Whether a failed step (or session) is worth a new session: Aborted and Unavailable
/// always, DeadlineExceeded with `recover_deadlines` until `wait_timeout` after the step
/// began (the time a task has to come back), each within `max_recoveries`.
fn recoverable(e: &Status, opts: &MonitoredOptions, recoveries: usize, since: Instant) -> bool {
    let deadline_ok = opts.recover_deadlines && e.code == Code::DeadlineExceeded && since.elapsed() < opts.wait_timeout;
    recoveries < opts.max_recoveries && (matches!(e.code, Code::Aborted | Code::Unavailable) || deadline_ok)
}

impl MonitoredTrainingSession {
    /// Adds the scaffold (readiness checks, saver, default hooks) to `root`'s graph, opens
    /// the session and gets the model ready.
    pub fn new(root: &Scope, mut opts: MonitoredOptions) -> Result<MonitoredTrainingSession, Status> {
        let global_step = get_or_create_global_step(root);
        let chief_dir = if opts.is_chief { opts.checkpoint_dir.clone() } else { None };
        let scaffold = Scaffold::new(root, opts.saver.clone(), chief_dir.is_some(), opts.listener.clone())?;
        let mut hooks = std::mem::take(&mut opts.hooks);
        if opts.is_chief {
            hooks.append(&mut opts.chief_only_hooks);
        }
        if let (Some(dir), Some(saver)) = (&chief_dir, &scaffold.saver) {
            let every = match (opts.save_checkpoint_steps, opts.save_checkpoint_secs) {
                (Some(n), _) => Some(Every::Steps(n)),
                (None, Some(d)) => Some(Every::Secs(d)),
                (None, None) => None,
            };
            if let Some(every) = every {
                let hook = CheckpointSaverHook::new(dir, saver.clone(), &global_step.value(), every);
                hooks.push(Box::new(hook.with_listener(opts.listener.clone())));
            }
            if let (Some(n), Some(summary)) = (opts.save_summaries_steps, crate::summary::merge_all(root)) {
                hooks.push(Box::new(SummarySaverHook::new(dir, &summary, &global_step.value(), Every::Steps(n))?));
            }
        }
        for h in hooks.iter_mut() {
            h.begin(root)?;
        }
        root.status()?;
        let mut m = MonitoredTrainingSession {
            graph: root.graph().clone(),
            opts,
            scaffold,
            hooks,
            session: None,
            stop: Arc::new(AtomicBool::new(false)),
            closed: false,
            global_step,
        };
        m.create_session()?;
        Ok(m)
    }

    fn create_session(&mut self) -> Result<(), Status> {
        self.session = None;
        let sess = match &self.opts.session_factory {
            Some(f) => f(&self.graph)?,
            None => open_session(&self.opts.master, &self.graph, &self.opts.config)?,
        };
        if self.opts.is_chief {
            self.scaffold.prepare_chief(sess.as_ref(), self.opts.checkpoint_dir.as_ref(), self.opts.wait_timeout)?;
        } else {
            self.scaffold.wait_ready(sess.as_ref(), self.opts.wait_timeout)?;
        }
        for h in self.hooks.iter_mut() {
            h.after_create_session(sess.as_ref())?;
        }
        self.session = Some(sess);
        self.scaffold.say(SessionEvent::Ready);
        Ok(())
    }

    /// The underlying session (for steps the hooks should not see).
    pub fn raw_session(&self) -> Result<&dyn StepRunner, Status> {
        match &self.session {
            Some(s) => Ok(s.as_ref()),
            None => Err(Status::failed_precondition("the monitored session has no open session")),
        }
    }

    /// The global step variable.
    pub fn global_step(&self) -> &Variable {
        &self.global_step
    }

    /// Makes `stop` the session's stop flag: a stop requested on either side is seen by both.
    pub(crate) fn share_stop(&mut self, stop: Arc<AtomicBool>) {
        self.stop = stop;
    }

    /// Whether a hook (or [`MonitoredTrainingSession::request_stop`]) asked to stop.
    pub fn should_stop(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || self.closed
    }

    /// Asks the session to stop: `should_stop()` turns true.
    pub fn request_stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Runs one step with typed handles (see [`MonitoredTrainingSession::run_step`]).
    pub fn run(
        &mut self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<Vec<Tensor>, Status> {
        let (f, x, t) = ferroflow_runtime::step_names(feeds, fetches, targets);
        self.run_by_name(&f, &x, &t)
    }

    /// Runs one step by name with every hook's extra fetches; after Aborted or Unavailable
    /// it opens a new session (restoring or waiting for the model again) and retries.
    pub fn run_by_name(
        &mut self,
        feeds: &[(String, Tensor)],
        fetches: &[String],
        targets: &[String],
    ) -> Result<Vec<Tensor>, Status> {
        let opts = self.run_options(false);
        self.run_with_recovery(StepArgs { feeds, fetches, targets, opts: &opts }).map(|(t, _)| t)
    }

    /// [`MonitoredTrainingSession::run`] traced (FULL_TRACE): also returns the step's
    /// `RunMetadata` with every device's step stats.
    pub fn run_traced(
        &mut self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
        targets: &[&Operation],
    ) -> Result<(Vec<Tensor>, RunMetadata), Status> {
        let (f, x, t) = ferroflow_runtime::step_names(feeds, fetches, targets);
        let opts = self.run_options(true);
        self.run_with_recovery(StepArgs { feeds: &f, fetches: &x, targets: &t, opts: &opts })
    }

    /// The step's deadline, and whether it is traced.
    fn run_options(&self, trace: bool) -> RunOptions {
        RunOptions { timeout: Some(self.opts.step_timeout), trace, ..Default::default() }
    }

    fn run_with_recovery(&mut self, step: StepArgs<'_>) -> Result<(Vec<Tensor>, RunMetadata), Status> {
        if self.closed {
            return Err(Status::failed_precondition("Run called on a closed MonitoredTrainingSession"));
        }
        let mut recoveries = 0;
        let since = Instant::now();
        loop {
            match self.run_once(step) {
                Err(e) if recoverable(&e, &self.opts, recoveries, since) => {
                    recoveries += 1;
                    tracing::warn!(error = %e, attempt = recoveries, "step failed; opening a new session");
                    self.scaffold.say(SessionEvent::Recovering(format!("{} ({:?})", e.message, e.code)));
                    loop {
                        match self.create_session() {
                            Ok(()) => break,
                            Err(e) if recoverable(&e, &self.opts, recoveries, since) => {
                                recoveries += 1;
                                std::thread::sleep(Duration::from_millis(200 * recoveries.min(10) as u64));
                            }
                            Err(e) => return Err(e.context("recreating the session after a failed step")),
                        }
                    }
                }
                r => return r,
            }
        }
    }

    fn run_once(&mut self, step: StepArgs<'_>) -> Result<(Vec<Tensor>, RunMetadata), Status> {
        let sess = match &self.session {
            Some(s) => s,
            None => return Err(Status::unavailable("no open session (the last recovery failed)")),
        };
        let extra: Vec<Vec<String>> = self.hooks.iter_mut().map(|h| h.before_run()).collect();
        let mut all: Vec<String> = step.fetches.to_vec();
        for e in &extra {
            all.extend(e.iter().cloned());
        }
        let (mut out, meta) = sess.run_by_name_meta(StepArgs { fetches: &all, ..step })?;
        let mut hook_values = out.split_off(step.fetches.len());
        let mut ctx = RunContext { session: sess.as_ref(), stop: false };
        for (h, e) in self.hooks.iter_mut().zip(&extra) {
            let rest = hook_values.split_off(e.len());
            h.after_run(&hook_values, &mut ctx)?;
            hook_values = rest;
        }
        if ctx.stop {
            self.stop.store(true, Ordering::SeqCst);
        }
        Ok((out, meta))
    }

    /// Ends the hooks (the chief's checkpoint hook saves a last checkpoint) and closes the
    /// session. Called by `Drop` too, ignoring errors there.
    pub fn close(&mut self) -> Result<(), Status> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let mut first: Result<(), Status> = Ok(());
        if let Some(sess) = &self.session {
            for h in self.hooks.iter_mut() {
                if let Err(e) = h.end(sess.as_ref()) {
                    if first.is_ok() {
                        first = Err(e);
                    }
                }
            }
        }
        self.session = None;
        first
    }
}

impl Drop for MonitoredTrainingSession {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::warn!(error = %e, "closing the monitored session failed");
        }
    }
}

#[cfg(test)]
mod tests;
