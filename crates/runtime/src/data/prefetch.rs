//! `PrefetchDataset`: a background thread runs the input ahead of the consumer, keeping up
//! to `buffer_size` elements (`-1`, autotune: 2) ready. Errors are delivered in order; the
//! thread ends at the input's end, when the iterator is dropped, or when it is cancelled.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;

use super::dataset::{dataset_input, scalar_i64, Dataset, DatasetIter, DatasetRef, Element, IterCtx};
use super::BuildFn;

/// Buffer size used for `AUTOTUNE` (-1).
const AUTOTUNE_BUFFER: usize = 2;

struct Prefetch {
    input: Arc<DatasetRef>,
    size: usize,
}

#[derive(Default)]
struct Shared {
    queue: VecDeque<Result<Element, Status>>,
    /// The producer has finished (input ended or iterator dropped).
    ended: bool,
    /// The consumer is gone.
    stopped: bool,
}

struct Channel {
    state: Mutex<Shared>,
    cv: Condvar,
}

struct PrefetchIter {
    ds: Arc<Prefetch>,
    chan: Arc<Channel>,
    /// The input until the producer thread starts.
    input: Option<Box<dyn DatasetIter>>,
}

impl Dataset for Prefetch {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        let chan = Arc::new(Channel { state: Mutex::new(Shared::default()), cv: Condvar::new() });
        Ok(Box::new(PrefetchIter { input: Some(self.input.iter(ctx)?), ds: self, chan }))
    }

    fn cardinality(&self) -> i64 {
        self.input.cardinality()
    }
}

fn produce(mut input: Box<dyn DatasetIter>, chan: Arc<Channel>, size: usize, ctx: IterCtx) {
    loop {
        // Wait for room (or for the consumer to leave).
        {
            let mut g = chan.state.lock().unwrap_or_else(|e| e.into_inner());
            while g.queue.len() >= size && !g.stopped {
                g = chan.cv.wait_timeout(g, ctx.wait_slice()).unwrap_or_else(|e| e.into_inner()).0;
                if ctx.check().is_err() {
                    break;
                }
            }
            if g.stopped {
                g.ended = true;
                chan.cv.notify_all();
                return;
            }
        }
        let r = match ctx.check() {
            Err(e) => Err(e),
            Ok(()) => input.next(&ctx),
        };
        let mut g = chan.state.lock().unwrap_or_else(|e| e.into_inner());
        let last = matches!(r, Ok(None)) || ctx.check().is_err();
        match r {
            Ok(Some(e)) => g.queue.push_back(Ok(e)),
            Ok(None) => {}
            Err(e) => g.queue.push_back(Err(e)),
        }
        if last {
            g.ended = true;
        }
        chan.cv.notify_all();
        if last {
            return;
        }
    }
}

impl DatasetIter for PrefetchIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        if let Some(input) = self.input.take() {
            let (chan, size, bg) = (self.chan.clone(), self.ds.size, ctx.background());
            std::thread::Builder::new()
                .name("ferroflow-prefetch".into())
                .spawn(move || produce(input, chan, size, bg))
                .map_err(|e| Status::resource_exhausted(format!("cannot start a prefetch thread: {e}")))?;
        }
        let mut g = self.chan.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(r) = g.queue.pop_front() {
                self.chan.cv.notify_all();
                return r.map(Some);
            }
            if g.ended {
                return Ok(None);
            }
            g = self.chan.cv.wait_timeout(g, ctx.wait_slice()).unwrap_or_else(|e| e.into_inner()).0;
            ctx.check()?;
        }
    }
}

impl Drop for PrefetchIter {
    fn drop(&mut self) {
        let mut g = self.chan.state.lock().unwrap_or_else(|e| e.into_inner());
        g.stopped = true;
        self.chan.cv.notify_all();
    }
}

/// `PrefetchDataset`.
pub(super) fn prefetch(_: &NodeDef) -> Result<BuildFn, Status> {
    Ok(Box::new(move |ctx| {
        let input = dataset_input(ctx, 0)?;
        let size = match scalar_i64(ctx, 1, "buffer_size")? {
            -1 => AUTOTUNE_BUFFER,
            s if s >= 0 => s.clamp(1, 1 << 20) as usize,
            s => return Err(ctx.error(format!("buffer_size must be >= 0 or -1 (autotune), got {s}"))),
        };
        Ok(Arc::new(Prefetch { input, size }) as Arc<dyn Dataset>)
    }))
}
