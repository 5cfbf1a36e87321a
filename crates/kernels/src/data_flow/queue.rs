//! TensorFlow's queue resources (`FIFOQueue`, `PaddingFIFOQueue`, `RandomShuffleQueue`,
//! `PriorityQueue`; the order is the [`Store`]'s): tuples of tensors, a capacity (enqueues
//! wait while full), dequeues that wait while too few elements are available, and close:
//! after `Close`, enqueues fail with Cancelled and dequeues that cannot be satisfied fail
//! with OutOfRange (`DequeueUpTo` takes what is left first); `cancel_pending_enqueues` also
//! fails the enqueues already waiting. Waiting attempts hold no thread (see `waiters`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroflow_core::{DataType, Status, Tensor};

use super::queue_store::{priority_of, QueueKind, Store};
use super::waiters::{enter_parked, park, run_all, Abortable, Completion, Pending};
use crate::{DoneCallback, OpContext};

/// One queue element: a tensor per component.
pub type Tuple = Vec<Tensor>;

/// What a dequeue gives its taker once it has its elements.
pub(crate) enum Out {
    /// `QueueDequeue`: the components of one element as outputs.
    One,
    /// `QueueDequeueMany`: `n` elements stacked (padded) along a new dimension 0.
    Many,
    /// `QueueDequeueUpTo`: as `Many`, or fewer once the queue is closed.
    UpTo,
    /// One element handed to the continuation (a reader's next work item).
    Sink(Option<WorkSink>),
}

/// Continues a kernel once its dequeue got an element.
pub(crate) type WorkSink = Box<dyn FnOnce(OpContext, DoneCallback, Tuple) + Send>;

struct Deq {
    n: usize,
    out: Out,
    got: Vec<Tuple>,
}

struct State {
    items: Store,
    closed: bool,
    enqueues: VecDeque<Pending<VecDeque<Tuple>>>,
    dequeues: VecDeque<Pending<Deq>>,
}

/// A FIFO queue kept in the resource manager under (container, name).
pub struct FifoQueue {
    name: String,
    kind: QueueKind,
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
    /// A new FIFO queue; `capacity < 0` means unbounded; `shapes` empty means unspecified.
    pub fn new(
        name: impl Into<String>,
        types: Vec<DataType>,
        shapes: Vec<Vec<i64>>,
        capacity: i64,
    ) -> Result<FifoQueue, Status> {
        FifoQueue::of_kind(name, QueueKind::Fifo, types, shapes, capacity)
    }

    /// A new queue of `kind` (for a priority queue, component 0 is the int64 priority).
    pub fn of_kind(
        name: impl Into<String>,
        kind: QueueKind,
        types: Vec<DataType>,
        shapes: Vec<Vec<i64>>,
        capacity: i64,
    ) -> Result<FifoQueue, Status> {
        let name = name.into();
        let what = kind.type_name();
        if types.is_empty() {
            return Err(Status::invalid_argument(format!("{what} '{name}' needs at least one component type")));
        }
        if !shapes.is_empty() && shapes.len() != types.len() {
            return Err(Status::invalid_argument(format!(
                "{what} '{name}': {} shapes given for {} component types",
                shapes.len(),
                types.len()
            )));
        }
        if kind == QueueKind::Padding && shapes.is_empty() {
            return Err(Status::invalid_argument(format!(
                "{what} '{name}' requires the shapes of its components (unknown dimensions may be -1)"
            )));
        }
        if kind != QueueKind::Padding && shapes.iter().any(|s| s.iter().any(|&d| d < 0)) {
            return Err(Status::invalid_argument(format!(
                "{what} '{name}' needs fully known component shapes; use a PaddingFIFOQueue for unknown dimensions"
            )));
        }
        if kind == QueueKind::Priority && (types[0] != DataType::Int64 || shapes.first().is_some_and(|s| !s.is_empty()))
        {
            return Err(Status::invalid_argument(format!(
                "{what} '{name}': component 0 must be the int64 scalar priority"
            )));
        }
        if let QueueKind::Shuffle { min_after_dequeue, .. } = kind {
            if capacity >= 0 && min_after_dequeue as i64 >= capacity {
                return Err(Status::invalid_argument(format!(
                    "min_after_dequeue {min_after_dequeue} must be < capacity {capacity}"
                )));
            }
        }
        let capacity = if capacity < 0 { usize::MAX } else { capacity as usize };
        Ok(FifoQueue {
            types,
            shapes,
            capacity,
            state: Mutex::new(State {
                items: Store::new(&kind),
                closed: false,
                enqueues: VecDeque::new(),
                dequeues: VecDeque::new(),
            }),
            next_id: AtomicU64::new(0),
            size_gauge: super::metrics::queue_size(&name),
            name,
            kind,
        })
    }

    /// The queue's kind.
    pub fn kind(&self) -> &QueueKind {
        &self.kind
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
        Status::cancelled(format!("{} '{}' is closed.", self.kind.type_name(), self.name))
    }

    /// Checks one tuple against the component types and shapes.
    pub fn validate(&self, t: &[Tensor]) -> Result<(), Status> {
        if t.len() != self.types.len() {
            return Err(Status::invalid_argument(format!(
                "{} '{}' has {} components but {} tensors were given",
                self.kind.type_name(),
                self.name,
                self.types.len(),
                t.len()
            )));
        }
        for (i, x) in t.iter().enumerate() {
            if x.dtype() != self.types[i] {
                return Err(Status::invalid_argument(format!(
                    "{} '{}': component {i} must be {} but a {} tensor was given",
                    self.kind.type_name(),
                    self.name,
                    self.types[i],
                    x.dtype()
                )));
            }
            if let Some(s) = self.shapes.get(i) {
                let fits = x.rank() == s.len() && x.dims().iter().zip(s).all(|(&d, &w)| w < 0 || d as i64 == w);
                if !fits {
                    return Err(Status::invalid_argument(format!(
                        "{} '{}': shape mismatch in tuple component {i}: expected {:?}, got {}",
                        self.kind.type_name(),
                        self.name,
                        s,
                        x.shape()
                    )));
                }
            }
        }
        if self.kind == QueueKind::Priority {
            priority_of(t)
                .map_err(|e| Status::invalid_argument(format!("PriorityQueue '{}': {}", self.name, e.message)))?;
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
                    "{} '{}': EnqueueMany component {i} must have rank >= 1 (a batch), got a scalar",
                    self.kind.type_name(),
                    self.name
                )));
            }
            match n {
                None => n = Some(c.dims()[0]),
                Some(m) if m != c.dims()[0] => {
                    return Err(Status::invalid_argument(format!(
                        "{} '{}': EnqueueMany components must have the same size in dimension 0: \
                         component 0 has {m}, component {i} has {}",
                        self.kind.type_name(),
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
                for t in tuples {
                    g.items.push(t);
                }
                let ready = self.flush(&mut g);
                drop(g);
                run_all(ready);
                return done(ctx, Ok(()));
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let what = format!("Enqueue to {} '{}' (capacity {})", self.kind.type_name(), self.name, self.capacity);
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

    /// Dequeues one tuple (outputs the components, or hands it to a sink) or `n` tuples
    /// stacked along dimension 0, waiting while there are too few.
    pub(crate) fn dequeue(
        self: &Arc<Self>,
        n: usize,
        out: Out,
        ctx: OpContext,
        done: DoneCallback,
        timeout: Option<Duration>,
    ) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let what = format!("Dequeue of {n} element(s) from {} '{}'", self.kind.type_name(), self.name);
        let p = park(self, id, Deq { n, out, got: Vec::new() }, ctx, done, timeout, &what);
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

    /// Sets the outputs of a completed dequeue: the components of one element, or each
    /// component of `got` stacked (a padding queue pads to the batch's largest element).
    fn emit(&self, ctx: &mut OpContext, got: Vec<Tuple>, many: bool) -> Result<(), Status> {
        if !many {
            let t = got.into_iter().next().ok_or_else(|| Status::internal("dequeue emitted no tuple"))?;
            for (i, x) in t.into_iter().enumerate() {
                ctx.set_output(i, x)?;
            }
            return Ok(());
        }
        let what = self.kind.type_name();
        for (j, &dt) in self.types.iter().enumerate() {
            let parts: Vec<Tensor> = got.iter().map(|t| t[j].clone()).collect();
            if self.kind == QueueKind::Padding {
                let shape = self.shapes.get(j).cloned().unwrap_or_default();
                ctx.set_output(j, super::queue_pad::stack_padded(&parts, dt, &shape)?)?;
                continue;
            }
            let elem: Vec<usize> = match (self.shapes.get(j), parts.first()) {
                (Some(s), _) => s.iter().map(|&d| d as usize).collect(),
                (None, Some(p)) => p.dims().to_vec(),
                (None, None) => {
                    return Err(Status::invalid_argument(format!(
                        "{what} '{}': DequeueMany of 0 elements needs the component shapes",
                        self.name
                    )))
                }
            };
            if let Some(bad) = parts.iter().find(|p| p.dims() != elem.as_slice()) {
                return Err(Status::invalid_argument(format!(
                    "{what} '{}': DequeueMany needs equal shapes in component {j}, got {:?} and {}",
                    self.name,
                    elem,
                    bad.shape()
                )));
            }
            ctx.set_output(j, stack(&parts, dt, &elem)?)?;
        }
        Ok(())
    }

    /// Completes a dequeue that has all it asked for.
    fn complete(&self, mut d: Pending<Deq>) -> Completion {
        let got = std::mem::take(&mut d.kind.got);
        match &mut d.kind.out {
            Out::Sink(sink) => {
                let sink = sink.take();
                let (ctx, done) = d.into_parts();
                match (sink, got.into_iter().next()) {
                    (Some(sink), Some(t)) => Box::new(move || sink(ctx, done, t)),
                    _ => Box::new(move || done(ctx, Err(Status::internal("queue work dequeue completed twice")))),
                }
            }
            out => {
                let many = !matches!(out, Out::One);
                let r = self.emit(&mut d.ctx, got, many);
                d.finish(r)
            }
        }
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
                            g.items.push(t);
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
                let pending_enqueues = g.enqueues.iter().any(|e| !e.kind.is_empty());
                let up_to = matches!(d.kind.out, Out::UpTo);
                if g.closed && d.kind.got.len() + g.items.len() < d.kind.n {
                    // Closed with too few: the attempt gives back what it gathered; a
                    // DequeueUpTo then asks for all that is left, as TensorFlow's does.
                    let got = std::mem::take(&mut d.kind.got);
                    g.items.put_back(got);
                    if up_to && g.items.len() > 0 {
                        d.kind.n = g.items.len();
                    } else if pending_enqueues {
                        break;
                    } else {
                        let Some(d) = g.dequeues.pop_front() else { break };
                        progress = true;
                        let e = Status::out_of_range(format!(
                            "{} '{}' is closed and has insufficient elements (requested {}, current size {})",
                            self.kind.type_name(),
                            self.name,
                            d.kind.n,
                            g.items.len()
                        ));
                        out.push(d.finish(Err(e)));
                        continue;
                    }
                }
                // A priority queue takes a batch only once it holds all of it (the batch is
                // then in order), or what is left once it is closed.
                let need = d.kind.n - d.kind.got.len();
                let whole = !matches!(g.items, Store::Priority { .. }) || g.items.len() >= need || g.closed;
                let mut took = false;
                while whole && d.kind.got.len() < d.kind.n && g.items.available(g.closed) > 0 {
                    match g.items.take() {
                        Some(t) => {
                            d.kind.got.push(t);
                            took = true;
                        }
                        None => break,
                    }
                }
                progress |= took;
                if d.kind.got.len() < d.kind.n {
                    break;
                }
                let Some(d) = g.dequeues.pop_front() else { break };
                progress = true;
                out.push(self.complete(d));
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
        // A cancelled dequeue gives back what it had gathered.
        let got = std::mem::take(&mut d.kind.got);
        g.items.put_back(got);
        let mut out = vec![d.finish(Err(s))];
        out.extend(self.flush(&mut g));
        Some(Box::new(move || run_all(out)))
    }
}
