//! What makes a model ready (TensorFlow's `Scaffold`): per-variable initializers and
//! `is_initialized` checks, and the saver the chief restores with. The chief waits
//! (bounded) until the tasks holding the variables answer, restores the latest
//! checkpoint or initializes what is missing; the other workers wait for the chief.
//! Every wait says what it waits for through the session's [`Listener`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ferroflow_core::Status;
use ferroflow_graph::{global_variables, Scope};
use ferroflow_runtime::{RunOptions, StepRunner};

use super::{Listener, SessionEvent};
use crate::dist::wait_until;
use crate::saver::{latest_checkpoint, Saver};

pub(super) struct Scaffold {
    /// (variable name, is_initialized, initializer) of every global variable.
    vars: Vec<(String, String, String)>,
    pub(super) saver: Option<Arc<Saver>>,
    listener: Option<Listener>,
}

impl Scaffold {
    /// The scaffold of `root`'s global variables; with `saver` (the given one, else a new
    /// one over every saveable variable) when the chief restores and saves.
    pub(super) fn new(
        root: &Scope,
        saver: Option<Arc<Saver>>,
        with_saver: bool,
        listener: Option<Listener>,
    ) -> Result<Scaffold, Status> {
        let s = root.sub("scaffold");
        let vars = global_variables(root.graph())?
            .iter()
            .map(|v| (v.name().to_string(), v.is_initialized(&s).name(), v.initializer().name))
            .collect();
        let saver = match (with_saver, saver) {
            (false, _) => None,
            (true, Some(s)) => Some(s),
            (true, None) => Some(Arc::new(Saver::new(root)?)),
        };
        root.status()?;
        Ok(Scaffold { vars, saver, listener })
    }

    pub(super) fn say(&self, e: SessionEvent) {
        if let Some(l) = &self.listener {
            l(e);
        }
    }

    /// Indices of the variables not initialized yet.
    fn uninitialized(&self, sess: &dyn StepRunner) -> Result<Vec<usize>, Status> {
        let fetches: Vec<String> = self.vars.iter().map(|v| v.1.clone()).collect();
        let out = sess.run_by_name(&[], &fetches, &[], &RunOptions::default())?;
        let mut missing = Vec::new();
        for (i, t) in out.iter().enumerate() {
            if !t.scalar_value::<bool>()? {
                missing.push(i);
            }
        }
        Ok(missing)
    }

    fn describe(&self, idx: &[usize]) -> String {
        let mut v: Vec<&str> = idx.iter().take(5).map(|&i| self.vars[i].0.as_str()).collect();
        if idx.len() > 5 {
            v.push("…");
        }
        v.join(", ")
    }

    /// The chief: waits up to `timeout` for the variables' tasks to answer, then restores
    /// the latest checkpoint of `dir` when a variable is missing (a fresh start, or a ps
    /// task that restarted), then initializes whatever is still missing.
    pub(super) fn prepare_chief(
        &self,
        sess: &dyn StepRunner,
        dir: Option<&PathBuf>,
        timeout: Duration,
    ) -> Result<(), Status> {
        let mut missing = Vec::new();
        wait_until(
            timeout,
            || {
                missing = self.uninitialized(sess)?;
                Ok(None)
            },
            |what| self.say(SessionEvent::Waiting(format!("the parameter servers: {what}"))),
        )?;
        if missing.is_empty() {
            return Ok(());
        }
        if let (Some(saver), Some(dir)) = (&self.saver, dir) {
            if let Some(p) = latest_checkpoint(dir)? {
                saver.restore(sess, &p)?;
                tracing::info!(checkpoint = %p, "restored the model");
                self.say(SessionEvent::Restored(p));
                missing = self.uninitialized(sess)?;
            }
        }
        if !missing.is_empty() {
            let targets: Vec<String> = missing.iter().map(|&i| self.vars[i].2.clone()).collect();
            sess.run_by_name(&[], &[], &targets, &RunOptions::default())?;
        }
        Ok(())
    }

    /// A non-chief worker: waits up to `timeout` until the chief initialized every variable.
    pub(super) fn wait_ready(&self, sess: &dyn StepRunner, timeout: Duration) -> Result<(), Status> {
        wait_until(
            timeout,
            || {
                let missing = self.uninitialized(sess)?;
                Ok((!missing.is_empty()).then(|| {
                    format!("the chief to initialize {} variable(s): {}", missing.len(), self.describe(&missing))
                }))
            },
            |what| {
                tracing::info!("waiting for {what}");
                self.say(SessionEvent::Waiting(what.to_string()));
            },
        )
    }
}
