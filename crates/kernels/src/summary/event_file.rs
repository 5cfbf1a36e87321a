//! [`FileWriter`]: one TensorBoard event file, `<logdir>/events.out.tfevents.<secs>.<host><suffix>`,
//! a TFRecord stream of `Event` protos starting with the file-version event. Used by the
//! summary-writer kernels (`CreateSummaryFileWriter`) and by `ferroflow_train`'s
//! `tf.compat.v1.summary.FileWriter`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use ferroflow_core::proto::{event, Event, GraphDef, Message, SourceMetadata, Summary};
use ferroflow_core::{Code, Status};

use crate::io::tfrecord::write_record;

/// The version string of the first event of every file.
pub const FILE_VERSION: &str = "brain.Event:2";

/// The writer named in the first event's `source_metadata`, as TensorFlow's C++ events
/// writer names itself.
pub const WRITER: &str = "tensorflow.core.util.events_writer";

/// Seconds since the epoch, as an event's `wall_time`.
pub fn wall_time() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// An I/O failure on `path` as TensorFlow's status for it: a path component that is a
/// file is FAILED_PRECONDITION ("Not a directory"), as TensorFlow's POSIX file system says.
pub fn io_status(e: &std::io::Error, what: &str, path: &Path) -> Status {
    use std::io::ErrorKind;
    let code = match e.kind() {
        ErrorKind::NotFound => Code::NotFound,
        ErrorKind::PermissionDenied => Code::PermissionDenied,
        ErrorKind::AlreadyExists => Code::AlreadyExists,
        ErrorKind::NotADirectory | ErrorKind::IsADirectory => Code::FailedPrecondition,
        _ => Code::Unknown,
    };
    Status::new(code, format!("cannot {what} {}: {e}", path.display()))
}

/// Writes events to one file in a log directory.
///
/// ```
/// use ferroflow_kernels::summary::FileWriter;
/// let dir = std::env::temp_dir().join(format!("ferroflow-fw-doc-{}", std::process::id()));
/// let mut w = FileWriter::new(&dir).unwrap();
/// w.add_scalar("loss", 0.5, 1).unwrap();
/// w.close().unwrap();
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
pub struct FileWriter {
    path: PathBuf,
    out: Option<BufWriter<File>>,
}

impl FileWriter {
    /// Creates `logdir` if needed and a new event file in it, starting with the
    /// file-version event.
    pub fn new(logdir: impl AsRef<Path>) -> Result<FileWriter, Status> {
        FileWriter::with_suffix(logdir, "")
    }

    /// As [`FileWriter::new`], the file name ending in `suffix`. A `logdir` that exists but
    /// is not a directory is FAILED_PRECONDITION, as in TensorFlow.
    pub fn with_suffix(logdir: impl AsRef<Path>, suffix: &str) -> Result<FileWriter, Status> {
        let dir = logdir.as_ref();
        if dir.exists() && !dir.is_dir() {
            return Err(Status::failed_precondition(format!("{} is not a directory", dir.display())));
        }
        std::fs::create_dir_all(dir).map_err(|e| io_status(&e, "create log directory", dir))?;
        let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let base = format!("events.out.tfevents.{secs:010}.{}{suffix}", hostname());
        // Two writers in one second get distinct files.
        let mut path = dir.join(&base);
        let mut n = 1;
        while path.exists() {
            path = dir.join(format!("{base}.{n}"));
            n += 1;
        }
        let f = File::create(&path).map_err(|e| io_status(&e, "create", &path))?;
        let mut w = FileWriter { path, out: Some(BufWriter::new(f)) };
        let version = Event {
            wall_time: secs as f64,
            step: 0,
            what: Some(event::What::FileVersion(FILE_VERSION.into())),
            source_metadata: Some(SourceMetadata { writer: WRITER.into() }),
        };
        w.add_event(&version)?;
        w.flush()?;
        Ok(w)
    }

    /// The event file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends an event.
    pub fn add_event(&mut self, e: &Event) -> Result<(), Status> {
        let bytes = e.encode_to_vec();
        let path = &self.path;
        let out =
            self.out.as_mut().ok_or_else(|| Status::failed_precondition(format!("{} is closed", path.display())))?;
        write_record(out, &bytes).map_err(|e| io_status(&e, "write", path))
    }

    /// Appends a serialized `Summary` (the output of a summary op) at `step`.
    pub fn add_summary(&mut self, summary: &[u8], step: i64) -> Result<(), Status> {
        let s = Summary::decode(summary).map_err(|e| {
            Status::invalid_argument(format!("add_summary: the bytes are not a serialized Summary: {e}"))
        })?;
        self.add_event(&Event {
            wall_time: wall_time(),
            step,
            what: Some(event::What::Summary(s)),
            source_metadata: None,
        })
    }

    /// Appends one scalar value at `step` (no graph op needed).
    pub fn add_scalar(&mut self, tag: &str, value: f32, step: i64) -> Result<(), Status> {
        use ferroflow_core::proto::summary;
        let s = Summary {
            value: vec![summary::Value {
                tag: tag.into(),
                value: Some(summary::value::Value::SimpleValue(value)),
                ..Default::default()
            }],
        };
        self.add_event(&Event {
            wall_time: wall_time(),
            step,
            what: Some(event::What::Summary(s)),
            source_metadata: None,
        })
    }

    /// Appends the graph, shown by TensorBoard's graph tab.
    pub fn add_graph(&mut self, graph: &GraphDef) -> Result<(), Status> {
        let e = Event {
            wall_time: wall_time(),
            step: 0,
            what: Some(event::What::GraphDef(graph.encode_to_vec())),
            source_metadata: None,
        };
        self.add_event(&e)
    }

    /// Writes buffered events to the file.
    pub fn flush(&mut self) -> Result<(), Status> {
        match self.out.as_mut().map(|o| o.flush()) {
            Some(Err(e)) => Err(io_status(&e, "flush", &self.path)),
            _ => Ok(()),
        }
    }

    /// Flushes and closes the file; later writes fail with FailedPrecondition.
    pub fn close(&mut self) -> Result<(), Status> {
        self.flush()?;
        if let Some(out) = self.out.take() {
            let f = out.into_inner().map_err(|e| io_status(e.error(), "flush", &self.path))?;
            f.sync_all().map_err(|e| io_status(&e, "sync", &self.path))?;
        }
        Ok(())
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}
