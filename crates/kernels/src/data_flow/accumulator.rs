//! The conditional accumulator (TensorFlow's `ConditionalAccumulatorBase` resource): sums
//! gradients whose `local_step` is not older than the accumulator's global step, drops
//! (and counts) the stale ones, and hands out their mean (or sum) to `TakeGradient`
//! attempts once `num_required` have arrived. A successful take resets the sum and advances
//! the accumulator's global step by one; `SetGlobalStep` sets it. One resource type holds
//! either kind: dense tensors (`ConditionalAccumulator`) or indexed slices
//! (`SparseConditionalAccumulator`, the arithmetic in `sparse_accumulator.rs`), so
//! `AccumulatorNumAccumulated` and `AccumulatorSetGlobalStep` serve both, as in TensorFlow.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroflow_core::{DataType, Status, Tensor};

use super::sparse_accumulator::{SparseGradient, SparseSum};
use super::waiters::{enter_parked, park, run_all, Abortable, Completion, Pending};
use crate::{DoneCallback, OpContext};

/// Stale gradients dropped by every accumulator of this process (a metric).
static STALE_TOTAL: AtomicU64 = AtomicU64::new(0);

/// Stale gradients dropped by all accumulators in this process since it started.
pub fn stale_gradients_dropped_total() -> u64 {
    STALE_TOTAL.load(Ordering::Relaxed)
}

/// What an accumulator sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccumulatorKind {
    /// Whole tensors (`ConditionalAccumulator`, `ResourceConditionalAccumulator`).
    Dense,
    /// Indexed slices (`SparseConditionalAccumulator`).
    Sparse,
}

impl AccumulatorKind {
    /// TensorFlow's name of the op that creates this kind.
    pub fn op_name(self) -> &'static str {
        match self {
            AccumulatorKind::Dense => "ConditionalAccumulator",
            AccumulatorKind::Sparse => "SparseConditionalAccumulator",
        }
    }
}

/// The gradients accumulated since the last take.
enum Sum {
    Dense(Tensor),
    Sparse(SparseSum),
}

struct State {
    global_step: i64,
    counter: i32,
    /// `None` exactly when `counter` is 0.
    sum: Option<Sum>,
    takers: VecDeque<Pending<i32>>,
}

/// A conditional accumulator, kept in the resource manager under (container, name).
pub struct ConditionalAccumulator {
    name: String,
    dtype: DataType,
    /// Declared shape: `None` = unknown rank, `-1` = unknown dimension.
    shape: Option<Vec<i64>>,
    mean: bool,
    kind: AccumulatorKind,
    state: Mutex<State>,
    /// Gradients accumulated, as a metric (set whenever the count changes).
    size_gauge: metrics::Gauge,
    /// Stale gradients dropped, as a metric.
    stale_counter: metrics::Counter,
    next_id: AtomicU64,
    stale: AtomicU64,
}

fn add_into(sum: &mut Tensor, g: &Tensor) -> Result<(), Status> {
    fn go<T: Copy + std::ops::Add<Output = T> + ferroflow_core::TensorType>(
        sum: &mut Tensor,
        g: &Tensor,
    ) -> Result<(), Status> {
        let src = g.as_slice::<T>()?;
        for (a, &b) in sum.data_mut::<T>()?.iter_mut().zip(src) {
            *a = *a + b;
        }
        Ok(())
    }
    match sum.dtype() {
        DataType::Float => go::<f32>(sum, g),
        DataType::Double => go::<f64>(sum, g),
        DataType::Int32 => go::<i32>(sum, g),
        DataType::Int64 => go::<i64>(sum, g),
        d => Err(Status::unimplemented(format!("accumulating {d} gradients is not supported yet"))),
    }
}

fn divide(sum: &mut Tensor, n: i32) -> Result<(), Status> {
    match sum.dtype() {
        DataType::Float => sum.data_mut::<f32>()?.iter_mut().for_each(|x| *x /= n as f32),
        DataType::Double => sum.data_mut::<f64>()?.iter_mut().for_each(|x| *x /= n as f64),
        DataType::Int32 => sum.data_mut::<i32>()?.iter_mut().for_each(|x| *x /= n),
        DataType::Int64 => sum.data_mut::<i64>()?.iter_mut().for_each(|x| *x /= n as i64),
        d => return Err(Status::unimplemented(format!("averaging {d} gradients is not supported yet"))),
    }
    Ok(())
}

impl ConditionalAccumulator {
    /// A new accumulator of `kind`; `reduction` is `MEAN` or `SUM`. A sparse one sums
    /// indexed slices of a tensor of `shape`, and its `MEAN` divides each index's sum by the
    /// number of gradients that had that index, as TensorFlow does. Dense accumulators take
    /// float, double, int32 and int64; TensorFlow registers the sparse one for float16,
    /// float32 and float64.
    pub fn new(
        name: impl Into<String>,
        kind: AccumulatorKind,
        dtype: DataType,
        shape: Option<Vec<i64>>,
        reduction: &str,
    ) -> Result<ConditionalAccumulator, Status> {
        let name = name.into();
        match kind {
            AccumulatorKind::Dense
                if !matches!(dtype, DataType::Float | DataType::Double | DataType::Int32 | DataType::Int64) =>
            {
                return Err(Status::unimplemented(format!(
                    "accumulator '{name}': dtype {dtype} is not supported yet (float, double, int32, int64 are)"
                )));
            }
            AccumulatorKind::Sparse if !SparseSum::supports(dtype) => {
                return Err(Status::invalid_argument(format!(
                    "sparse accumulator '{name}': no kernel for dtype {dtype} (TensorFlow registers \
                     SparseConditionalAccumulator for float16, float32 and float64)"
                )));
            }
            _ => {}
        }
        let mean = match reduction {
            "MEAN" => true,
            "SUM" => false,
            r => {
                return Err(Status::invalid_argument(format!(
                    "accumulator '{name}': reduction_type must be MEAN or SUM, got '{r}'"
                )))
            }
        };
        let (size_gauge, stale_counter) = super::metrics::accumulator(&name);
        Ok(ConditionalAccumulator {
            size_gauge,
            stale_counter,
            name,
            dtype,
            shape,
            mean,
            kind,
            state: Mutex::new(State { global_step: 0, counter: 0, sum: None, takers: VecDeque::new() }),
            next_id: AtomicU64::new(0),
            stale: AtomicU64::new(0),
        })
    }

    /// The accumulator's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Element type of the gradients.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// Dense or sparse.
    pub fn kind(&self) -> AccumulatorKind {
        self.kind
    }

    /// Fails unless this accumulator is of `kind` (`op` names the asking op).
    pub fn expect_kind(&self, kind: AccumulatorKind, op: &str) -> Result<(), Status> {
        if self.kind == kind {
            return Ok(());
        }
        Err(Status::invalid_argument(format!(
            "accumulator '{}' was created by {}, but {op} needs one created by {}",
            self.name,
            self.kind.op_name(),
            kind.op_name()
        )))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Number of gradients accumulated since the last take.
    pub fn num_accumulated(&self) -> i32 {
        self.lock().counter
    }

    /// The accumulator's global step (gradients from older local steps are dropped).
    pub fn global_step(&self) -> i64 {
        self.lock().global_step
    }

    /// Number of stale gradients this accumulator dropped.
    pub fn stale_dropped(&self) -> u64 {
        self.stale.load(Ordering::Relaxed)
    }

    /// Sets the global step (TensorFlow warns, but obeys, when it goes backwards).
    pub fn set_global_step(&self, step: i64) {
        let mut g = self.lock();
        if step < g.global_step {
            tracing::warn!(accumulator = %self.name, from = g.global_step, to = step, "global step set to a smaller value");
        }
        g.global_step = step;
    }

    fn check_shape(&self, g: &Tensor, sum: Option<&Tensor>) -> Result<(), Status> {
        let dims = g.shape().to_i64();
        if let Some(s) = &self.shape {
            let ok = s.len() == dims.len() && s.iter().zip(&dims).all(|(&a, &b)| a < 0 || a == b);
            if !ok {
                return Err(Status::invalid_argument(format!(
                    "accumulator '{}': gradient of shape {:?} is incompatible with the accumulator's shape {:?}",
                    self.name, dims, s
                )));
            }
        }
        if let Some(sum) = sum {
            if sum.shape() != g.shape() {
                return Err(Status::invalid_argument(format!(
                    "accumulator '{}': gradient of shape {} does not match the shape {} of the gradients \
                     accumulated so far",
                    self.name,
                    g.shape(),
                    sum.shape()
                )));
            }
        }
        Ok(())
    }

    /// Adds `grad` computed at `local_step`, or drops it if `local_step` is older than the
    /// accumulator's global step. Returns whether it was accumulated.
    pub fn apply_gradient(&self, local_step: i64, grad: Tensor) -> Result<bool, Status> {
        self.expect_kind(AccumulatorKind::Dense, "AccumulatorApplyGradient")?;
        self.check_dtype(grad.dtype())?;
        self.apply(local_step, |sum| match sum {
            None => {
                self.check_shape(&grad, None)?;
                *sum = Some(Sum::Dense(grad));
                Ok(())
            }
            Some(Sum::Dense(s)) => {
                self.check_shape(&grad, Some(s))?;
                add_into(s, &grad)
            }
            Some(Sum::Sparse(_)) => {
                Err(Status::internal(format!("dense accumulator '{}' holds a sparse sum", self.name)))
            }
        })
    }

    /// Adds the indexed slices `grad` computed at `local_step`, or drops them (unchecked,
    /// as TensorFlow does) if `local_step` is older than the accumulator's global step.
    /// Returns whether they were accumulated.
    pub fn apply_sparse_gradient(&self, local_step: i64, grad: SparseGradient) -> Result<bool, Status> {
        self.expect_kind(AccumulatorKind::Sparse, "SparseAccumulatorApplyGradient")?;
        self.check_dtype(grad.values.dtype())?;
        let ctx = |e: Status| e.context(format!("sparse accumulator '{}'", self.name));
        self.apply(local_step, |sum| match sum {
            None => {
                let first = SparseSum::first(self.shape.as_deref(), grad).map_err(ctx)?;
                *sum = Some(Sum::Sparse(first));
                Ok(())
            }
            Some(Sum::Sparse(s)) => s.add(self.shape.as_deref(), &grad).map_err(ctx),
            Some(Sum::Dense(_)) => {
                Err(Status::internal(format!("sparse accumulator '{}' holds a dense sum", self.name)))
            }
        })
    }

    fn check_dtype(&self, dtype: DataType) -> Result<(), Status> {
        if dtype != self.dtype {
            return Err(Status::invalid_argument(format!(
                "accumulator '{}' holds {} gradients but was given a {} tensor",
                self.name, self.dtype, dtype
            )));
        }
        Ok(())
    }

    /// The part both kinds share: drops a stale gradient, else lets `add` fold it into the
    /// sum (`None` when nothing was accumulated since the last take), counts it and serves
    /// the take attempts it satisfies.
    fn apply(&self, local_step: i64, add: impl FnOnce(&mut Option<Sum>) -> Result<(), Status>) -> Result<bool, Status> {
        let (done, accepted) = {
            let mut g = self.lock();
            if local_step < g.global_step {
                let n = self.stale.fetch_add(1, Ordering::Relaxed) + 1;
                STALE_TOTAL.fetch_add(1, Ordering::Relaxed);
                self.stale_counter.increment(1);
                tracing::warn!(
                    accumulator = %self.name,
                    local_step,
                    global_step = g.global_step,
                    dropped = n,
                    "dropped a stale gradient"
                );
                (vec![], false)
            } else {
                add(&mut g.sum)?;
                g.counter += 1;
                (self.flush(&mut g), true)
            }
        };
        run_all(done);
        Ok(accepted)
    }

    /// Completes the oldest take attempts whose `num_required` is met.
    fn flush(&self, g: &mut State) -> Vec<Completion> {
        let mut out = Vec::new();
        while g.takers.front().is_some_and(|t| g.counter >= t.kind) {
            let Some(mut t) = g.takers.pop_front() else { break };
            let outputs = match g.sum.take() {
                Some(Sum::Dense(mut s)) => {
                    let r = if self.mean { divide(&mut s, g.counter) } else { Ok(()) };
                    r.map(|_| vec![s])
                }
                Some(Sum::Sparse(s)) => s.finish(self.mean, self.shape.as_deref()).map(Vec::from),
                None => Err(Status::internal(format!("accumulator '{}' has a count but no sum", self.name))),
            };
            let r = outputs.and_then(|v| v.into_iter().enumerate().try_for_each(|(i, x)| t.ctx.set_output(i, x)));
            g.global_step += 1;
            g.counter = 0;
            out.push(t.finish(r));
        }
        self.size_gauge.set(f64::from(g.counter));
        out
    }

    /// Parks a take attempt of `num_required` gradients: completes `done` with the average
    /// as output 0 (dense) or outputs 0-2 (sparse: indices, values, shape) once enough have arrived, or with Cancelled / DeadlineExceeded.
    pub(crate) fn take_gradient(
        self: &Arc<Self>,
        num_required: i32,
        ctx: OpContext,
        done: DoneCallback,
        timeout: Option<Duration>,
    ) {
        if num_required < 1 {
            let e = ctx.error(format!("Argument num_required must be positive, but was {num_required}"));
            return done(ctx, Err(e));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let what = match self.kind {
            AccumulatorKind::Dense => "TakeGradient from accumulator",
            AccumulatorKind::Sparse => "SparseAccumulatorTakeGradient from sparse accumulator",
        };
        let what = format!("{what} '{}' (waiting for {num_required} gradients)", self.name);
        let p = park(self, id, num_required, ctx, done, timeout, &what);
        enter_parked(self, p, &what, |p| {
            let mut g = self.lock();
            g.takers.push_back(p);
            self.flush(&mut g)
        });
    }
}

impl Abortable for ConditionalAccumulator {
    fn abort(&self, id: u64, s: Status) -> Option<Completion> {
        let mut g = self.lock();
        let pos = g.takers.iter().position(|t| t.id == id)?;
        let t = g.takers.remove(pos)?;
        Some(t.finish(Err(s)))
    }
}
