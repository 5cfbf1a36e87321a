//! How many workers finished: a counter on the first ps task (the first worker without
//! ps tasks), outside the global variables so checkpoints do not hold it. Each worker adds
//! one when its loop ends; the chief initializes it with every new session and, before it
//! stops the ps tasks, waits (bounded) until every worker has added its one.

use std::time::Duration;

use ferroflow_core::Status;
use ferroflow_graph::{ops, Operation, Output, Scope, Variable, VariableOptions};
use ferroflow_runtime::{RunOptions, StepRunner};

use super::wait_until;
use crate::monitored::SessionRunHook;
use ferroflow_distributed::ClusterSpec;

/// The counter's nodes.
pub(crate) struct DoneCounter {
    var: Variable,
    ready: Output,
    init: Operation,
    inc: Operation,
}

impl DoneCounter {
    /// Adds the counter to `root`'s graph.
    pub(crate) fn build(root: &Scope, cluster: &ClusterSpec) -> DoneCounter {
        let home = if cluster.num_tasks("ps").unwrap_or(0) > 0 { "/job:ps/task:0" } else { "/job:worker/task:0" };
        let cs = root.with_device(home).sub("ferroflow_coordination");
        let opts = VariableOptions { trainable: false, collections: vec![], ..Default::default() };
        let var = Variable::with_options(&cs, "workers_done", ops::constant(&cs, 0i32), &opts);
        let inc = var.assign_add(&cs, ops::constant(&cs, 1i32));
        DoneCounter { ready: var.is_initialized(&cs), init: var.initializer(), var, inc }
    }

    /// The chief's hook: initializes the counter when a new session finds it missing.
    pub(crate) fn chief_hook(&self) -> Box<dyn SessionRunHook> {
        Box::new(InitDone { ready: self.ready.name(), init: self.init.name.clone() })
    }

    /// Counts this worker as finished.
    pub(crate) fn finished(&self, sess: &dyn StepRunner) -> Result<(), Status> {
        sess.run(&[], &[], &[&self.inc]).map(|_| ())
    }

    /// Waits up to `timeout` until `workers` workers have finished, saying what it waits for.
    pub(crate) fn wait_all(
        &self,
        sess: &dyn StepRunner,
        workers: usize,
        timeout: Duration,
        on_wait: impl FnMut(&str),
    ) -> Result<(), Status> {
        self.wait(sess, workers, timeout, false, on_wait)
    }

    /// [`DoneCounter::wait_all`] for a worker whose chief holds the counter and leaves
    /// once everyone is done: the counter's task going away (Unavailable) ends the wait.
    pub(crate) fn wait_all_or_gone(
        &self,
        sess: &dyn StepRunner,
        workers: usize,
        timeout: Duration,
    ) -> Result<(), Status> {
        self.wait(sess, workers, timeout, true, |_| {})
    }

    fn wait(
        &self,
        sess: &dyn StepRunner,
        workers: usize,
        timeout: Duration,
        gone_is_done: bool,
        on_wait: impl FnMut(&str),
    ) -> Result<(), Status> {
        let done = self.var.value();
        wait_until(
            timeout,
            || {
                let n = match sess.run(&[], &[&done], &[]) {
                    Ok(t) => t[0].scalar_value::<i32>()? as usize,
                    Err(e) if gone_is_done && e.code == ferroflow_core::Code::Unavailable => return Ok(None),
                    Err(e) => return Err(e),
                };
                Ok((n < workers).then(|| format!("{} of {workers} workers to finish", workers - n)))
            },
            on_wait,
        )
    }
}

struct InitDone {
    ready: String,
    init: String,
}

impl SessionRunHook for InitDone {
    fn after_create_session(&mut self, session: &dyn StepRunner) -> Result<(), Status> {
        let ready = session.run_by_name(&[], std::slice::from_ref(&self.ready), &[], &RunOptions::default())?;
        if !ready[0].scalar_value::<bool>()? {
            session.run_by_name(&[], &[], std::slice::from_ref(&self.init), &RunOptions::default())?;
        }
        Ok(())
    }
}
