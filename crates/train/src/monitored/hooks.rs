//! Session-run hooks (TensorFlow's `SessionRunHook`) and the standard ones:
//! [`StopAtStepHook`], [`CheckpointSaverHook`], [`SummarySaverHook`], [`LoggingTensorHook`].
//!
//! A hook may add nodes to the graph in [`SessionRunHook::begin`], asks for extra tensors
//! with every step in [`SessionRunHook::before_run`], sees their values in
//! [`SessionRunHook::after_run`] (where it may request a stop), and finishes in
//! [`SessionRunHook::end`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{Output, Scope};
use ferroflow_runtime::StepRunner;

use crate::saver::Saver;
use crate::summary::FileWriter;

/// What a hook sees after a step.
pub struct RunContext<'a> {
    /// The session the step ran on.
    pub session: &'a dyn StepRunner,
    pub(crate) stop: bool,
}

impl RunContext<'_> {
    /// Asks the monitored session to stop after this step (`should_stop()` turns true).
    pub fn request_stop(&mut self) {
        self.stop = true;
    }
}

/// A hook into a [`MonitoredTrainingSession`](super::MonitoredTrainingSession)'s steps.
pub trait SessionRunHook: Send {
    /// Called once before the session is created; may add nodes to the graph.
    fn begin(&mut self, _scope: &Scope) -> Result<(), Status> {
        Ok(())
    }
    /// Called after the session is created (and after every recovery) and the model is
    /// initialized or restored.
    fn after_create_session(&mut self, _session: &dyn StepRunner) -> Result<(), Status> {
        Ok(())
    }
    /// Tensors (`node:idx`) to fetch along with the next step.
    fn before_run(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// The values of the tensors asked for in `before_run`, in order.
    fn after_run(&mut self, _values: &[Tensor], _ctx: &mut RunContext) -> Result<(), Status> {
        Ok(())
    }
    /// Called once when the monitored session closes.
    fn end(&mut self, _session: &dyn StepRunner) -> Result<(), Status> {
        Ok(())
    }
}

fn global_step_of(values: &[Tensor], i: usize) -> Result<i64, Status> {
    let t = values.get(i).ok_or_else(|| Status::internal("global step value missing"))?;
    match t.dtype() {
        ferroflow_core::DataType::Int32 => Ok(t.scalar_value::<i32>()? as i64),
        _ => t.scalar_value::<i64>(),
    }
}

/// The global step's current value, read in a step of its own.
fn read_step(session: &dyn StepRunner, global_step: &str) -> Result<i64, Status> {
    let v = session.run_by_name(&[], &[global_step.to_string()], &[], &Default::default())?;
    global_step_of(&v, 0)
}

/// Requests a stop once the global step reaches `last_step` (or `num_steps` past its value
/// when the session starts).
pub struct StopAtStepHook {
    global_step: String,
    last_step: Option<i64>,
    num_steps: Option<i64>,
}

impl StopAtStepHook {
    /// Stops when `global_step` (the variable's value tensor) reaches `last_step`.
    pub fn last_step(global_step: &Output, last_step: i64) -> StopAtStepHook {
        StopAtStepHook { global_step: global_step.name(), last_step: Some(last_step), num_steps: None }
    }

    /// Stops `num_steps` global steps after the session starts.
    pub fn num_steps(global_step: &Output, num_steps: i64) -> StopAtStepHook {
        StopAtStepHook { global_step: global_step.name(), last_step: None, num_steps: Some(num_steps) }
    }
}

impl SessionRunHook for StopAtStepHook {
    fn after_create_session(&mut self, session: &dyn StepRunner) -> Result<(), Status> {
        if let Some(n) = self.num_steps.take() {
            self.last_step = Some(read_step(session, &self.global_step)? + n);
        }
        Ok(())
    }

    fn before_run(&mut self) -> Vec<String> {
        vec![self.global_step.clone()]
    }

    fn after_run(&mut self, values: &[Tensor], ctx: &mut RunContext) -> Result<(), Status> {
        // The value fetched with the step may be read before or after the step's own
        // increment, so `+ 1` is only a hint; like TensorFlow, confirm with a fresh read.
        let Some(last) = self.last_step else { return Ok(()) };
        if global_step_of(values, 0)? + 1 >= last && read_step(ctx.session, &self.global_step)? >= last {
            ctx.request_stop();
        }
        Ok(())
    }
}

/// When a timer or step trigger fires.
#[derive(Clone, Copy, Debug)]
pub enum Every {
    /// Every this many seconds (checked after each step).
    Secs(Duration),
    /// Every this many steps of this session.
    Steps(u64),
}

struct Trigger {
    every: Every,
    last: Option<Instant>,
    steps: u64,
    /// What `before` said of the step running now.
    due_now: bool,
}

impl Trigger {
    fn new(every: Every) -> Trigger {
        Trigger { every, last: None, steps: 0, due_now: false }
    }

    /// Whether the coming step should trigger (the first one always does).
    fn due(&self) -> bool {
        match (self.every, self.last) {
            (_, None) => true,
            (Every::Secs(d), Some(t)) => t.elapsed() >= d,
            (Every::Steps(n), Some(_)) => self.steps >= n.max(1),
        }
    }

    /// Marks the trigger as fired by the step that just ran (call `step` after it).
    fn fired(&mut self) {
        self.last = Some(Instant::now());
        self.steps = 0;
    }

    fn step(&mut self) {
        self.steps += 1;
    }

    /// Before a step: whether it should trigger (remembered for [`Trigger::after`]).
    fn before(&mut self) -> bool {
        self.due_now = self.due();
        self.due_now
    }

    /// After the step: whether it triggered; counts it, and restarts the interval if so.
    fn after(&mut self) -> bool {
        let fired = std::mem::take(&mut self.due_now);
        if fired {
            self.fired();
        }
        self.step();
        fired
    }
}

/// Saves a checkpoint (`<dir>/model.ckpt-<global step>`) every so often and at the end.
pub struct CheckpointSaverHook {
    dir: PathBuf,
    saver: Arc<Saver>,
    global_step: String,
    trigger: Trigger,
    last_saved_step: Option<i64>,
    /// Whether a step ran (the session's end then saves a last checkpoint).
    ran: bool,
    saved: Vec<String>,
    listener: Option<super::Listener>,
}

impl CheckpointSaverHook {
    /// Saves with `saver` into `dir` every `every`; `global_step` names the checkpoints.
    pub fn new(dir: impl Into<PathBuf>, saver: Arc<Saver>, global_step: &Output, every: Every) -> CheckpointSaverHook {
        CheckpointSaverHook {
            dir: dir.into(),
            saver,
            global_step: global_step.name(),
            trigger: Trigger { last: Some(Instant::now()), ..Trigger::new(every) },
            last_saved_step: None,
            ran: false,
            saved: Vec::new(),
            listener: None,
        }
    }

    /// Tells `listener` of every checkpoint saved.
    pub fn with_listener(mut self, listener: Option<super::Listener>) -> CheckpointSaverHook {
        self.listener = listener;
        self
    }

    /// The checkpoints this hook wrote, oldest first.
    pub fn saved(&self) -> &[String] {
        &self.saved
    }

    fn save(&mut self, session: &dyn StepRunner, step: i64) -> Result<(), Status> {
        let prefix = self.dir.join("model.ckpt").display().to_string();
        let p = self.saver.save(session, &prefix, Some(step))?;
        tracing::info!(checkpoint = %p, step, "saved checkpoint");
        if let Some(l) = &self.listener {
            l(super::SessionEvent::Saved(p.clone()));
        }
        self.saved.push(p);
        self.last_saved_step = Some(step);
        Ok(())
    }
}

impl SessionRunHook for CheckpointSaverHook {
    fn begin(&mut self, _scope: &Scope) -> Result<(), Status> {
        std::fs::create_dir_all(&self.dir).map_err(|e| {
            Status::new(
                ferroflow_core::Code::PermissionDenied,
                format!("cannot create checkpoint directory {}: {e}", self.dir.display()),
            )
        })
    }

    fn after_run(&mut self, _values: &[Tensor], ctx: &mut RunContext) -> Result<(), Status> {
        // Nothing is fetched with the step: a checkpoint reads the global step when it is
        // taken, which is rare, rather than every step carrying it.
        self.ran = true;
        self.trigger.step();
        if self.trigger.due() {
            self.trigger.fired();
            // Named by the value read now (the fetched one may race with the increment).
            let step = read_step(ctx.session, &self.global_step)?;
            self.save(ctx.session, step)?;
        }
        Ok(())
    }

    fn end(&mut self, session: &dyn StepRunner) -> Result<(), Status> {
        if !self.ran {
            return Ok(());
        }
        let step = read_step(session, &self.global_step)?;
        if self.last_saved_step != Some(step) {
            self.save(session, step)?;
        }
        Ok(())
    }
}

/// Writes the merged summary (and the graph, once) to an event file every so often.
pub struct SummarySaverHook {
    writer: FileWriter,
    summary: String,
    global_step: String,
    trigger: Trigger,
}

impl SummarySaverHook {
    /// Writes `summary` (a serialized `Summary` tensor, e.g. `merge_all`) to a new event file
    /// in `dir` every `every`.
    pub fn new(
        dir: impl AsRef<std::path::Path>,
        summary: &Output,
        global_step: &Output,
        every: Every,
    ) -> Result<Self, Status> {
        Ok(SummarySaverHook {
            writer: FileWriter::new(dir)?,
            summary: summary.name(),
            global_step: global_step.name(),
            trigger: Trigger::new(every),
        })
    }
}

impl SessionRunHook for SummarySaverHook {
    fn begin(&mut self, scope: &Scope) -> Result<(), Status> {
        self.writer.add_graph(&scope.graph().to_graph_def())?;
        self.writer.flush()
    }

    fn before_run(&mut self) -> Vec<String> {
        if self.trigger.before() {
            vec![self.global_step.clone(), self.summary.clone()]
        } else {
            Vec::new()
        }
    }

    fn after_run(&mut self, values: &[Tensor], _ctx: &mut RunContext) -> Result<(), Status> {
        if !self.trigger.after() {
            return Ok(());
        }
        let step = global_step_of(values, 0)? + 1;
        let bytes =
            values.get(1).ok_or_else(|| Status::internal("summary value missing"))?.scalar_value::<Vec<u8>>()?;
        self.writer.add_summary(&bytes, step)?;
        self.writer.flush()
    }

    fn end(&mut self, _session: &dyn StepRunner) -> Result<(), Status> {
        self.writer.close()
    }
}

/// Reports the values of some tensors every `every_n_iter` steps (through `tracing` at info
/// level, or to a sink of your own).
pub struct LoggingTensorHook {
    tensors: Vec<(String, String)>,
    trigger: Trigger,
    sink: Box<dyn FnMut(String) + Send>,
}

impl LoggingTensorHook {
    /// Logs `tensors` (label, tensor) every `every_n_iter` steps.
    pub fn new(tensors: &[(&str, &Output)], every_n_iter: u64) -> LoggingTensorHook {
        LoggingTensorHook {
            tensors: tensors.iter().map(|(l, o)| (l.to_string(), o.name())).collect(),
            trigger: Trigger::new(Every::Steps(every_n_iter)),
            sink: Box::new(|line| tracing::info!("{line}")),
        }
    }

    /// Sends each line to `sink` instead of `tracing`.
    pub fn with_sink(mut self, sink: impl FnMut(String) + Send + 'static) -> LoggingTensorHook {
        self.sink = Box::new(sink);
        self
    }
}

impl SessionRunHook for LoggingTensorHook {
    fn before_run(&mut self) -> Vec<String> {
        if self.trigger.before() {
            self.tensors.iter().map(|(_, n)| n.clone()).collect()
        } else {
            Vec::new()
        }
    }

    fn after_run(&mut self, values: &[Tensor], _ctx: &mut RunContext) -> Result<(), Status> {
        if !self.trigger.after() {
            return Ok(());
        }
        let parts: Vec<String> =
            self.tensors.iter().zip(values).map(|((label, _), v)| format!("{label} = {}", show(v))).collect();
        (self.sink)(parts.join(", "));
        Ok(())
    }
}

/// A short rendering of a tensor: scalars as their value, others as dtype and shape.
fn show(t: &Tensor) -> String {
    if t.num_elements() == 1 {
        match t.dtype() {
            ferroflow_core::DataType::Float => {
                return format!("{}", t.as_slice::<f32>().map(|v| v[0]).unwrap_or(f32::NAN))
            }
            ferroflow_core::DataType::Double => {
                return format!("{}", t.as_slice::<f64>().map(|v| v[0]).unwrap_or(f64::NAN))
            }
            ferroflow_core::DataType::Int32 => return format!("{}", t.as_slice::<i32>().map(|v| v[0]).unwrap_or(0)),
            ferroflow_core::DataType::Int64 => return format!("{}", t.as_slice::<i64>().map(|v| v[0]).unwrap_or(0)),
            _ => {}
        }
    }
    format!("<{} {}>", t.dtype(), t.shape())
}
