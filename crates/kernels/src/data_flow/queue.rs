//! The FIFO queue (TensorFlow's `FIFOQueue` resource): tuples of tensors in arrival order,
//! a capacity (enqueues wait while full), dequeues that wait while empty, and close:
//! after `Close`, enqueues fail with Cancelled and dequeues that cannot be satisfied fail
//! with OutOfRange; `cancel_pending_enqueues` also fails the enqueues already waiting.
//! Waiting attempts hold no thread (see `waiters`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroflow_core::{DataType, Status, Tensor};

use super::waiters::{enter_parked, park, run_all, Abortable, Completion, Pending};
use crate::{DoneCallback, OpContext};

/// One queue element: a tensor per component.
pub type Tuple = Vec<Tensor>;

struct Deq {
    n: usize,
    many: bool,
    got: Vec<Tuple>,
}

struct State {
    items: VecDeque<Tuple>,
    closed: bool,
    enqueues: VecDeque<Pending<VecDeque<Tuple>>>,
    dequeues: VecDeque<Pending<Deq>>,
}

/// A FIFO queue kept in the resource manager under (container, name).
pub struct FifoQueue {
    name: String,
    types: Vec<DataType>,
    /// Per-component shapes, or empty when unspecified.
    shapes: Vec<Vec<i64>>,
    capacity: usize,
    state: Mutex<State>,
    next_id: AtomicU64,
    /// The queue's size as a metric, set whenever elements move.
    size_gauge: metrics::Gauge,
}

/// Stacks equal-shaped tensors along a new dimension 0.
fn stack(parts: &[Tensor], dtype: DataType, elem: &[usize]) -> Result<Tensor, Status> {
    let mut dims = vec![parts.len()];
    dims.extend_from_slice(elem);
    ferroflow_core::with_dtype!(dtype, T => {
        let mut v: Vec<T> = Vec::new();
        for p in parts {
            v.extend_from_slice(p.as_slice::<T>()?);
        }
        Tensor::new(dims, v)
    })
}

/// Splits a tensor along dimension 0.
fn unstack(t: &Tensor) -> Result<Vec<Tensor>, Status> {
    let n = t.dims()[0];
    let elem: Vec<usize> = t.dims()[1..].to_vec();
    let size: usize = elem.iter().product();
    ferroflow_core::with_dtype!(t.dtype(), T => {
        let src = t.as_slice::<T>()?;
        (0..n).map(|i| Tensor::new(elem.clone(), src[i * size..(i + 1) * size].to_vec())).collect()
    })
}

impl FifoQueue {
    /// A new queue; `capacity < 0` means unbounded; `shapes` empty means unspecified.
    pub fn new(
        name: impl Into<String>,
        types: Vec<DataType>,
        shapes: Vec<Vec<i64>>,
        capacity: i64,
    ) -> Result<FifoQueue, Status> {
        let name = name.into();
        if types.is_empty() {
            return Err(Status::invalid_argument(format!("FIFOQueue '{name}' needs at least one component type")));
        }
        if !shapes.is_empty() && shapes.len() != types.len() {
            return Err(Status::invalid_argument(format!(
                "FIFOQueue '{name}': {} shapes given for {} component types",
                shapes.len(),
                types.len()
            )));
        }
        if shapes.iter().any(|s| s.iter().any(|&d| d < 0)) {
            return Err(Status::unimplemented(format!(
                "FIFOQueue '{name}': partially known component shapes are not supported yet"
            )));
        }
        let capacity = if capacity < 0 { usize::MAX } else { capacity as usize };
        Ok(FifoQueue {
            types,
            shapes,
            capacity,
            state: Mutex::new(State {
                items: VecDeque::new(),
                closed: false,
                enqueues: VecDeque::new(),
                dequeues: VecDeque::new(),
            }),
            next_id: AtomicU64::new(0),
            size_gauge: super::metrics::queue_size(&name),
            name,
        })
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Component types.
    pub fn component_types(&self) -> &[DataType] {
        &self.types
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Number of elements in the queue.
    pub fn size(&self) -> usize {
        self.lock().items.len()
    }

    /// Whether the queue was closed.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    fn closed_error(&self) -> Status {
        Status::cancelled(format!("FIFOQueue '{}' is closed.", self.name))
    }

    /// Checks one tuple against the component types and shapes.
    pub fn validate(&self, t: &[Tensor]) -> Result<(), Status> {
        if t.len() != self.types.len() {
            return Err(Status::invalid_argument(format!(
                "FIFOQueue '{}' has {} components but {} tensors were given",
                self.name,
                self.types.len(),
                t.len()
            )));
        }
        for (i, x) in t.iter().enumerate() {
            if x.dtype() != self.types[i] {
                return Err(Status::invalid_argument(format!(
                    "FIFOQueue '{}': component {i} must be {} but a {} tensor was given",
                    self.name,
                    self.types[i],
                    x.dtype()
                )));
            }
            if let Some(s) = self.shapes.get(i) {
                if x.shape().to_i64() != *s {
                    return Err(Status::invalid_argument(format!(
                        "FIFOQueue '{}': shape mismatch in tuple component {i}: expected {:?}, got {}",
                        self.name,
                        s,
                        x.shape()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Splits `EnqueueMany` components along dimension 0 into tuples (checked).
    pub fn split_many(&self, comps: &[Tensor]) -> Result<Vec<Tuple>, Status> {
        let mut n = None;
        let mut cols = Vec::with_capacity(comps.len());
        for (i, c) in comps.iter().enumerate() {
            if c.rank() == 0 {
                return Err(Status::invalid_argument(format!(
                    "FIFOQueue '{}': EnqueueMany component {i} must have rank >= 1 (a batch), got a scalar",
                    self.name
                )));
            }
            match n {
                None => n = Some(c.dims()[0]),
                Some(m) if m != c.dims()[0] => {
                    return Err(Status::invalid_argument(format!(
                        "FIFOQueue '{}': EnqueueMany components must have the same size in dimension 0: \
                         component 0 has {m}, component {i} has {}",
                        self.name,
                        c.dims()[0]
                    )))
                }
                _ => {}
            }
            cols.push(unstack(c)?);
        }
        let n = n.unwrap_or(0);
        let mut tuples: Vec<Tuple> = (0..n).map(|_| Vec::with_capacity(comps.len())).collect();
        for col in cols {
            for (t, x) in tuples.iter_mut().zip(col) {
                t.push(x);
            }
        }
        for t in &tuples {
            self.validate(t)?;
        }
        Ok(tuples)
    }

    /// Enqueues `tuples` in order, waiting while the queue is full.
    pub(crate) fn enqueue(
        self: &Arc<Self>,
        tuples: Vec<Tuple>,
        ctx: OpContext,
        done: DoneCallback,
        timeout: Option<Duration>,
    ) {
        {
            let mut g = self.lock();
            if g.closed {
                drop(g);
                let e = self.closed_error();
                return done(ctx, Err(e));
            }
            if g.enqueues.is_empty() && g.items.len().saturating_add(tuples.len()) <= self.capacity {
                g.items.extend(tuples);
                let ready = self.flush(&mut g);
                drop(g);
                run_all(ready);
                return done(ctx, Ok(()));
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let what = format!("Enqueue to FIFOQueue '{}' (capacity {})", self.name, self.capacity);
        let p = park(self, id, tuples.into(), ctx, done, timeout, &what);
        enter_parked(self, p, &what, |p| {
            let mut g = self.lock();
            if g.closed {
                vec![p.finish(Err(self.closed_error()))]
            } else {
                g.enqueues.push_back(p);
                self.flush(&mut g)
            }
        });
    }

    /// Dequeues one tuple (`many` = false, outputs the components) or `n` tuples stacked
    /// along dimension 0, waiting while there are too few.
    pub(crate) fn dequeue(
        self: &Arc<Self>,
        n: usize,
        many: bool,
        ctx: OpContext,
        done: DoneCallback,
        timeout: Option<Duration>,
    ) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let what = format!("Dequeue of {n} element(s) from FIFOQueue '{}'", self.name);
        let p = park(self, id, Deq { n, many, got: Vec::new() }, ctx, done, timeout, &what);
        enter_parked(self, p, &what, |p| {
            let mut g = self.lock();
            g.dequeues.push_back(p);
            self.flush(&mut g)
        });
    }

    /// Closes the queue; with `cancel_pending_enqueues`, waiting enqueues fail.
    pub fn close(&self, cancel_pending_enqueues: bool) {
        let ready = {
            let mut g = self.lock();
            g.closed = true;
            let mut out = Vec::new();
            if cancel_pending_enqueues {
                while let Some(e) = g.enqueues.pop_front() {
                    out.push(e.finish(Err(self.closed_error())));
                }
            }
            out.extend(self.flush(&mut g));
            out
        };
        run_all(ready);
    }

    fn emit(&self, ctx: &mut OpContext, got: Vec<Tuple>, many: bool) -> Result<(), Status> {
        if !many {
            let t = got.into_iter().next().ok_or_else(|| Status::internal("dequeue emitted no tuple"))?;
            for (i, x) in t.into_iter().enumerate() {
                ctx.set_output(i, x)?;
            }
            return Ok(());
        }
        for (j, &dt) in self.types.iter().enumerate() {
            let parts: Vec<Tensor> = got.iter().map(|t| t[j].clone()).collect();
            let elem: Vec<usize> = match (self.shapes.get(j), parts.first()) {
                (Some(s), _) => s.iter().map(|&d| d as usize).collect(),
                (None, Some(p)) => p.dims().to_vec(),
                (None, None) => {
                    return Err(Status::invalid_argument(format!(
                        "FIFOQueue '{}': DequeueMany of 0 elements needs the component shapes",
                        self.name
                    )))
                }
            };
            if let Some(bad) = parts.iter().find(|p| p.dims() != elem.as_slice()) {
                return Err(Status::invalid_argument(format!(
                    "FIFOQueue '{}': DequeueMany needs equal shapes in component {j}, got {:?} and {}",
                    self.name,
                    elem,
                    bad.shape()
                )));
            }
            ctx.set_output(j, stack(&parts, dt, &elem)?)?;
        }
        Ok(())
    }

    /// Moves elements between waiting enqueues, the queue and waiting dequeues; returns the
    /// completions of the attempts that finished.
    fn flush(&self, g: &mut State) -> Vec<Completion> {
        let mut out = Vec::new();
        loop {
            let mut progress = false;
            while let Some(e) = g.enqueues.front_mut() {
                while g.items.len() < self.capacity {
                    match e.kind.pop_front() {
                        Some(t) => {
                            g.items.push_back(t);
                            progress = true;
                        }
                        None => break,
                    }
                }
                if !e.kind.is_empty() {
                    break;
                }
                if let Some(e) = g.enqueues.pop_front() {
                    out.push(e.finish(Ok(())));
                    progress = true;
                }
            }
            while let Some(d) = g.dequeues.front_mut() {
                while d.kind.got.len() < d.kind.n {
                    match g.items.pop_front() {
                        Some(t) => {
                            d.kind.got.push(t);
                            progress = true;
                        }
                        None => break,
                    }
                }
                let complete = d.kind.got.len() == d.kind.n;
                let starved = g.closed && g.enqueues.iter().all(|e| e.kind.is_empty());
                if !complete && !starved {
                    break;
                }
                let Some(mut d) = g.dequeues.pop_front() else { break };
                progress = true;
                let got = std::mem::take(&mut d.kind.got);
                if complete {
                    let r = self.emit(&mut d.ctx, got, d.kind.many);
                    out.push(d.finish(r));
                } else {
                    let have = got.len() + g.items.len();
                    // Put back what this attempt had gathered, in order.
                    for t in got.into_iter().rev() {
                        g.items.push_front(t);
                    }
                    let e = Status::out_of_range(format!(
                        "FIFOQueue '{}' is closed and has insufficient elements (requested {}, current size {have})",
                        self.name, d.kind.n
                    ));
                    out.push(d.finish(Err(e)));
                }
            }
            if !progress {
                self.size_gauge.set(g.items.len() as f64);
                return out;
            }
        }
    }
}

impl Abortable for FifoQueue {
    fn abort(&self, id: u64, s: Status) -> Option<Completion> {
        let mut g = self.lock();
        if let Some(pos) = g.enqueues.iter().position(|e| e.id == id) {
            let e = g.enqueues.remove(pos)?;
            return Some(e.finish(Err(s)));
        }
        let pos = g.dequeues.iter().position(|d| d.id == id)?;
        let mut d = g.dequeues.remove(pos)?;
        // A cancelled dequeue gives back what it had gathered, in order.
        for t in std::mem::take(&mut d.kind.got).into_iter().rev() {
            g.items.push_front(t);
        }
        let mut out = vec![d.finish(Err(s))];
        out.extend(self.flush(&mut g));
        Some(Box::new(move || run_all(out)))
    }
}
