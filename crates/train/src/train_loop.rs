//! The one training loop of `ferroflow train`, local or distributed, on a
//! [`MonitoredTrainingSession`]: feed a batch, run the train op, fetch the loss and the
//! global step, until the global step reaches the last step. Local training opens a
//! `DirectSession` through the monitored session's factory; a worker opens a session on
//! its server. What differs (the data shard, the progress view, the sync replicas' token)
//! is given by the caller.

use std::time::Instant;

use ferroflow_core::{Status, Tensor};
use ferroflow_graph::{Operation, Output};

use crate::data::Batches;
use crate::models::Model;
use crate::monitored::MonitoredTrainingSession;
use crate::runner::{write_trace, TraceRequest};
use crate::steady::SteadyRate;

/// What one process trains.
pub(crate) struct LoopSpec<'a> {
    pub model: &'a Model,
    pub train_op: &'a Operation,
    /// Fetched with every step: the global step the step reached (local training: the
    /// global step read after the update; sync replicas: the token; async workers: the
    /// global step, read concurrently with the update).
    pub global_step: &'a Output,
    /// Fed to the model's dropout keep probability, if it has one.
    pub keep_prob: f32,
    /// The step to trace, if any.
    pub trace: Option<&'a TraceRequest>,
    /// Train until the global step reaches this.
    pub last_step: i64,
    /// The device or task training, for errors.
    pub device: &'a str,
}

/// How the loop ended.
pub(crate) struct LoopEnd {
    pub local_steps: usize,
    pub global_step: i64,
    pub final_loss: f32,
    pub train_seconds: f64,
    pub steady_steps_per_sec: Option<f64>,
}

/// Trains from global step `start` until `spec.last_step`. A failed step's error passes
/// through `explain` (the sync replicas' causes); `on_step(local, global, loss)` follows
/// every step.
pub(crate) fn train(
    mts: &mut MonitoredTrainingSession,
    spec: &LoopSpec<'_>,
    batches: &mut Batches<'_>,
    start: i64,
    explain: impl Fn(Status) -> Status,
    mut on_step: impl FnMut(usize, i64, f32),
) -> Result<LoopEnd, Status> {
    let m = spec.model;
    let begin = Instant::now();
    let mut rate = SteadyRate::new();
    let (mut local, mut global, mut loss) = (0usize, start, f32::NAN);
    while global < spec.last_step && !mts.should_stop() {
        let (x, y) = batches.next_batch()?;
        let mut feeds = vec![(&m.x, x), (&m.y, y)];
        if let Some(kp) = &m.keep_prob {
            feeds.push((kp, Tensor::scalar(spec.keep_prob)));
        }
        let fetches = [&m.loss, spec.global_step];
        let targets = [spec.train_op];
        let out = match spec.trace.filter(|r| r.step == local + 1) {
            Some(req) => mts.run_traced(&feeds, &fetches, &targets).and_then(|(out, meta)| {
                write_trace(req, local + 1, meta)?;
                Ok(out)
            }),
            None => mts.run(&feeds, &fetches, &targets),
        };
        let out = out.map_err(&explain)?;
        loss = out[0].scalar_value::<f32>()?;
        global = out[1].scalar_value::<i64>()?;
        local += 1;
        rate.step_done();
        if !loss.is_finite() {
            return Err(Status::internal(format!(
                "loss became {loss} at global step {global} on {}; lower the learning rate",
                spec.device
            )));
        }
        on_step(local, global, loss);
    }
    Ok(LoopEnd {
        local_steps: local,
        global_step: global,
        final_loss: loss,
        train_seconds: begin.elapsed().as_secs_f64(),
        steady_steps_per_sec: rate.per_sec(),
    })
}
