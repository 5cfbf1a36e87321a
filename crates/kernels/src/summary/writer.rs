//! The summary-writer resource of TensorFlow 2's summary API (`tf.summary.create_file_writer`):
//! an event file in a log directory, created by `CreateSummaryFileWriter` and written by the
//! `Write*Summary` ops. Events go to the file's buffer at once and reach the file when more
//! than `max_queue` are pending, when `flush_millis` have passed since the last flush, on
//! `FlushSummaryWriter` / `CloseSummaryWriter`, and when the resource is dropped.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ferroflow_core::proto::{event, Event};
use ferroflow_core::Status;

use super::event_file::{wall_time, FileWriter};

/// TensorFlow's type name of summary writers in resource handles.
pub(crate) const WRITER_TYPE_NAME: &str = "N10tensorflow22SummaryWriterInterfaceE";

struct Inner {
    file: FileWriter,
    /// Events written since the last flush.
    pending: i64,
    last_flush: Instant,
}

/// A summary writer resource.
pub(crate) struct SummaryWriter {
    /// The resource's name, for errors.
    name: String,
    max_queue: i64,
    flush_every: Option<Duration>,
    inner: Mutex<Inner>,
}

/// Distinguishes the files of writers made in one second by one process, as TensorFlow's
/// per-process counter does.
static FILE_COUNTER: AtomicU64 = AtomicU64::new(0);

/// TensorFlow's file name suffix of a writer: `.<pid>.<counter>`, then `suffix` (after a
/// `.` unless it starts with one).
fn unique_suffix(suffix: &str) -> String {
    let sep = if suffix.starts_with('.') { "" } else { "." };
    format!(".{}.{}{sep}{suffix}", std::process::id(), FILE_COUNTER.fetch_add(1, Ordering::Relaxed))
}

impl SummaryWriter {
    /// A writer of a new event file in `logdir` (created if needed).
    pub fn create(
        name: &str,
        logdir: &str,
        max_queue: i32,
        flush_millis: i32,
        suffix: &str,
    ) -> Result<SummaryWriter, Status> {
        let dir = if logdir.is_empty() { Path::new(".") } else { Path::new(logdir) };
        let file = FileWriter::with_suffix(dir, &unique_suffix(suffix))?;
        Ok(SummaryWriter {
            name: name.to_string(),
            max_queue: i64::from(max_queue),
            flush_every: u64::try_from(flush_millis).ok().map(Duration::from_millis),
            inner: Mutex::new(Inner { file, pending: 0, last_flush: Instant::now() }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn err(&self, e: Status) -> Status {
        Status::new(e.code, format!("summary writer '{}': {}", self.name, e.message))
    }

    /// Appends an event of `step` holding `what`, stamped now.
    pub fn write(&self, step: i64, what: event::What) -> Result<(), Status> {
        self.write_event(&Event { wall_time: wall_time(), step, what: Some(what), source_metadata: None })
    }

    /// Appends `e` as given (`ImportEvent`).
    pub fn write_event(&self, e: &Event) -> Result<(), Status> {
        let mut g = self.lock();
        g.file.add_event(e).map_err(|e| self.err(e))?;
        g.pending += 1;
        let due = self.flush_every.is_none_or(|every| g.last_flush.elapsed() > every);
        if g.pending > self.max_queue || due {
            self.flush_locked(&mut g)?;
        }
        Ok(())
    }

    fn flush_locked(&self, g: &mut Inner) -> Result<(), Status> {
        g.file.flush().map_err(|e| self.err(e))?;
        g.pending = 0;
        g.last_flush = Instant::now();
        Ok(())
    }

    /// Writes pending events to the file.
    pub fn flush(&self) -> Result<(), Status> {
        self.flush_locked(&mut self.lock())
    }

    /// Flushes and closes the file; later writes through a stale reference fail.
    pub fn close(&self) -> Result<(), Status> {
        self.lock().file.close().map_err(|e| self.err(e))
    }
}
