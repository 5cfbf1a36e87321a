//! TensorFlow 1.x's readers (`TFRecordReaderV2`, `TextLineReaderV2`, `WholeFileReaderV2`,
//! `FixedLengthRecordReaderV2`, `IdentityReaderV2`): a resource that takes work items (file
//! names) from a queue and produces (key, value) records from them, one work item at a time
//! and in the order they were dequeued. `ReaderReadV2` gives one record; `ReaderReadUpToV2`
//! up to `num_records`, but not past the end of a work item once it has some. Waiting for
//! work holds no thread: the read parks in the queue like a dequeue (bounded by the step's
//! deadline and cancellation) and continues when a file name arrives; a closed, empty
//! queue ends the read with OutOfRange, which ends the input pipeline.

mod ops;
mod source;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use ferroflow_core::{DataType, Status, Tensor};

use crate::data_flow::queue::{Out, Tuple};
use crate::data_flow::FifoQueue;
use crate::{DoneCallback, KernelRegistry, OpContext};
use source::{ReaderKind, Record, Source};

pub(crate) fn register(r: &mut KernelRegistry) {
    ops::register(r);
}

#[derive(Default)]
struct State {
    /// The work item being read and its source.
    current: Option<(String, Source)>,
    /// Work items dequeued by reads that raced for work, in dequeue order.
    backlog: VecDeque<String>,
    work_started: i64,
    work_finished: i64,
    produced: i64,
}

/// A reader resource.
pub(crate) struct Reader {
    name: String,
    kind: ReaderKind,
    state: Mutex<State>,
}

/// What a read returns: one record (`ReaderReadV2`) or up to `n` (`ReaderReadUpToV2`).
#[derive(Clone, Copy)]
pub(crate) enum Want {
    One,
    UpTo(usize),
}

/// The first component of a work tuple as a file name (TensorFlow's checks).
fn work_name(t: &Tuple) -> Result<String, Status> {
    let [w] = t.as_slice() else { return Err(Status::invalid_argument("Expected single component queue")) };
    if w.dtype() != DataType::String {
        return Err(Status::invalid_argument("Expected queue with single string component"));
    }
    let v = w.as_slice::<Vec<u8>>()?;
    let [s] = v else { return Err(Status::invalid_argument("Expected to dequeue a one-element string tensor")) };
    Ok(String::from_utf8_lossy(s).into_owned())
}

impl Reader {
    pub fn new(name: String, kind: ReaderKind) -> Reader {
        Reader { name, kind, state: Mutex::new(State::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// (records produced, work items completed).
    pub fn counts(&self) -> (i64, i64) {
        let g = self.lock();
        (g.produced, g.work_finished)
    }

    /// Forgets the current work and the counts (`ReaderResetV2`).
    pub fn reset(&self) {
        *self.lock() = State::default();
    }

    /// `ReaderSerializeStateV2`: only `IdentityReader` has a state to save, as in TensorFlow.
    pub fn serialize(&self) -> Result<Vec<u8>, Status> {
        if !matches!(self.kind, ReaderKind::Identity) {
            return Err(Status::unimplemented("Reader SerializeState"));
        }
        let g = self.lock();
        let work = g.current.as_ref().map(|(w, _)| w.as_str()).unwrap_or("");
        Ok(ops::encode_state(g.work_started, g.work_finished, g.produced, work.as_bytes()))
    }

    /// `ReaderRestoreStateV2` (IdentityReader only); a bad state resets the reader.
    pub fn restore(&self, bytes: &[u8]) -> Result<(), Status> {
        if !matches!(self.kind, ReaderKind::Identity) {
            return Err(Status::unimplemented("Reader RestoreState"));
        }
        let mut g = self.lock();
        match ops::decode_state(bytes, &self.name) {
            Ok((started, finished, produced, work)) => {
                *g = State { work_started: started, work_finished: finished, produced, ..State::default() };
                if !work.is_empty() {
                    let work = String::from_utf8_lossy(&work).into_owned();
                    let src = Source::start(&self.kind, &work)?;
                    g.current = Some((work, src));
                }
                Ok(())
            }
            Err(e) => {
                *g = State::default();
                Err(e)
            }
        }
    }

    /// Reads records into `acc` until the want is met (Some(true)), the reader needs a new
    /// work item and has none (Some(false)... None = needs work), or an error.
    fn pump(&self, want: Want, acc: &mut Vec<Record>) -> Result<bool, Status> {
        let mut g = self.lock();
        loop {
            let n = match want {
                Want::One => 1,
                Want::UpTo(n) => n,
            };
            if acc.len() >= n {
                return Ok(true);
            }
            if g.current.is_none() {
                let Some(work) = g.backlog.pop_front() else { return Ok(false) };
                let src = Source::start(&self.kind, &work).map_err(|e| self.err(e))?;
                g.work_started += 1;
                g.current = Some((work, src));
            }
            let (rec, at_end) = {
                let Some((work, src)) = g.current.as_mut() else { continue };
                src.next(&self.kind, work).map_err(|e| self.err(e))?
            };
            if let Some(r) = rec {
                acc.push(r);
                g.produced += 1;
            }
            if at_end {
                g.current = None;
                g.work_finished = g.work_started;
                if matches!(want, Want::UpTo(_)) && !acc.is_empty() {
                    return Ok(true);
                }
            }
        }
    }

    fn err(&self, e: Status) -> Status {
        Status::new(e.code, format!("{} '{}': {}", self.kind.type_name(), self.name, e.message))
    }
}

/// Sets the outputs of a read: scalars for `ReaderReadV2`, vectors for `ReaderReadUpToV2`.
fn emit(ctx: &mut OpContext, want: Want, acc: Vec<Record>) -> Result<(), Status> {
    let (keys, values): (Vec<Vec<u8>>, Vec<Vec<u8>>) = acc.into_iter().unzip();
    match want {
        Want::One => {
            let (Some(k), Some(v)) = (keys.into_iter().next(), values.into_iter().next()) else {
                return Err(Status::internal("read completed without a record"));
            };
            ctx.set_output(0, Tensor::scalar(k))?;
            ctx.set_output(1, Tensor::scalar(v))
        }
        Want::UpTo(_) => {
            ctx.set_output(0, Tensor::vec(keys))?;
            ctx.set_output(1, Tensor::vec(values))
        }
    }
}

/// Runs a read to completion: records from the current work, new work from `queue` (parked
/// there without a thread while it is empty), then the outputs.
pub(crate) fn read(
    reader: Arc<Reader>,
    queue: Arc<FifoQueue>,
    want: Want,
    mut acc: Vec<Record>,
    mut ctx: OpContext,
    done: DoneCallback,
) {
    match reader.pump(want, &mut acc) {
        Err(e) => done(ctx, Err(e)),
        Ok(true) => {
            let r = emit(&mut ctx, want, acc);
            done(ctx, r)
        }
        Ok(false) => {
            let q = queue.clone();
            let sink = Box::new(move |ctx: OpContext, done: DoneCallback, t: Tuple| match work_name(&t) {
                Ok(w) => {
                    reader.lock().backlog.push_back(w);
                    read(reader, q, want, acc, ctx, done)
                }
                Err(e) => done(ctx, Err(e)),
            });
            queue.dequeue(1, Out::Sink(Some(sink)), ctx, done, None)
        }
    }
}
