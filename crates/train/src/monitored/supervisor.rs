//! `tf.train.Supervisor` with the seed's API: `is_chief`, `logdir`, `init_op`,
//! `summary_op`, `saver`, `global_step`, `save_model_secs`, `managed_session`,
//! `should_stop`, `request_stop`/`stop`. Built on [`MonitoredTrainingSession`]: the chief
//! restores from `logdir` or initializes, others wait (bounded, saying what for), task
//! failures are recovered, and checkpoints/summaries are taken between steps.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ferroflow_core::proto::ConfigProto;
use ferroflow_core::Status;
use ferroflow_graph::{Operation, Output, Scope, Variable};
use ferroflow_runtime::StepRunner;

use super::{CheckpointSaverHook, Every, MonitoredOptions, MonitoredTrainingSession, SessionRunHook, SummarySaverHook};
use crate::saver::Saver;

/// The Supervisor's arguments (TensorFlow's names and defaults).
pub struct SupervisorOptions {
    /// The chief initializes or restores the model and writes checkpoints and summaries.
    pub is_chief: bool,
    /// Checkpoints and event files go here (`None`: neither).
    pub logdir: Option<PathBuf>,
    /// Run by the chief when the model is not initialized and no checkpoint exists
    /// (default: every global variable's initializer, for those not initialized yet).
    pub init_op: Option<Operation>,
    /// The merged summary to write (default: `merge_all`, if the graph has summaries).
    pub summary_op: Option<Output>,
    /// The saver (default: a saver of every global variable).
    pub saver: Option<Arc<Saver>>,
    /// The global step (default: the graph's, created if missing).
    pub global_step: Option<Variable>,
    /// Checkpoint period, default 600 s.
    pub save_model_secs: u64,
    /// Summary period, default 120 s.
    pub save_summaries_secs: u64,
    /// How long non-chief workers wait for the chief.
    pub wait_timeout: Duration,
}

impl Default for SupervisorOptions {
    fn default() -> Self {
        SupervisorOptions {
            is_chief: true,
            logdir: None,
            init_op: None,
            summary_op: None,
            saver: None,
            global_step: None,
            save_model_secs: 600,
            save_summaries_secs: 120,
            wait_timeout: Duration::from_secs(300),
        }
    }
}

/// Runs `init_op` once, after the standard initialization, on the chief.
struct InitOpHook(String);

impl SessionRunHook for InitOpHook {
    fn after_create_session(&mut self, session: &dyn StepRunner) -> Result<(), Status> {
        session.run_by_name(&[], &[], std::slice::from_ref(&self.0), &Default::default()).map(|_| ())
    }
}

/// TensorFlow's `Supervisor`.
pub struct Supervisor {
    root: Scope,
    opts: SupervisorOptions,
    stop: Arc<AtomicBool>,
}

impl Supervisor {
    /// A supervisor for the graph of `root` (build the model first).
    pub fn new(root: &Scope, opts: SupervisorOptions) -> Supervisor {
        Supervisor { root: root.clone(), opts, stop: Arc::new(AtomicBool::new(false)) }
    }

    /// Whether this supervisor is the chief's.
    pub fn is_chief(&self) -> bool {
        self.opts.is_chief
    }

    /// Opens a session on `master` (`""` or `grpc://…`) with the model ready.
    pub fn managed_session(&self, master: &str) -> Result<ManagedSession, Status> {
        self.managed_session_with_config(master, ConfigProto::default())
    }

    /// As [`Supervisor::managed_session`], with a session configuration.
    pub fn managed_session_with_config(&self, master: &str, config: ConfigProto) -> Result<ManagedSession, Status> {
        let mut hooks: Vec<Box<dyn SessionRunHook>> = Vec::new();
        if let Some(op) = &self.opts.init_op {
            hooks.push(Box::new(InitOpHook(op.name.clone())));
        }
        let gs = match &self.opts.global_step {
            Some(v) => v.value(),
            None => ferroflow_graph::get_or_create_global_step(&self.root).value(),
        };
        let own_saver = self.opts.saver.is_some();
        if let (Some(dir), Some(saver), true) = (&self.opts.logdir, &self.opts.saver, self.opts.is_chief) {
            hooks.push(Box::new(CheckpointSaverHook::new(
                dir,
                saver.clone(),
                &gs,
                Every::Secs(Duration::from_secs(self.opts.save_model_secs)),
            )));
        }
        if let (Some(dir), true) = (&self.opts.logdir, self.opts.is_chief) {
            let summary = self.opts.summary_op.clone().or_else(|| crate::summary::merge_all(&self.root));
            if let Some(summary) = summary {
                let every = Every::Secs(Duration::from_secs(self.opts.save_summaries_secs));
                hooks.push(Box::new(SummarySaverHook::new(dir, &summary, &gs, every)?));
            }
        }
        let mopts = MonitoredOptions {
            master: master.to_string(),
            is_chief: self.opts.is_chief,
            checkpoint_dir: self.opts.logdir.clone(),
            hooks,
            save_checkpoint_secs: if own_saver { None } else { Some(Duration::from_secs(self.opts.save_model_secs)) },
            save_checkpoint_steps: None,
            // The summary hook above covers summaries on the Supervisor's timer.
            save_summaries_steps: None,
            wait_timeout: self.opts.wait_timeout,
            config,
            ..Default::default()
        };
        let mut inner = MonitoredTrainingSession::new(&self.root, mopts)?;
        self.stop.store(false, Ordering::SeqCst);
        inner.share_stop(self.stop.clone());
        Ok(ManagedSession { inner })
    }

    /// Whether training should stop (a stop was requested).
    pub fn should_stop(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Asks every managed session of this supervisor to stop.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Requests a stop (sessions save their last checkpoint when they close).
    pub fn stop(&self) {
        self.request_stop();
    }
}

/// A session from [`Supervisor::managed_session`]: a [`MonitoredTrainingSession`] (run it,
/// ask it whether to stop) whose stop flag is the supervisor's, so a stop requested by
/// the supervisor, the session or a hook is seen by all. Closing it (or dropping it)
/// saves the chief's last checkpoint.
pub struct ManagedSession {
    inner: MonitoredTrainingSession,
}

impl std::ops::Deref for ManagedSession {
    type Target = MonitoredTrainingSession;
    fn deref(&self) -> &MonitoredTrainingSession {
        &self.inner
    }
}

impl std::ops::DerefMut for ManagedSession {
    fn deref_mut(&mut self) -> &mut MonitoredTrainingSession {
        &mut self.inner
    }
}

impl ManagedSession {
    /// The underlying session.
    pub fn session(&self) -> Result<&dyn StepRunner, Status> {
        self.inner.raw_session()
    }

    /// Saves the last checkpoint (chief) and closes the session.
    pub fn close(mut self) -> Result<(), Status> {
        self.inner.close()
    }
}
