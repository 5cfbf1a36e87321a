//! What each reader kind makes of one work item (a file name): the records of
//! `TFRecordReader` (key `file:offset`), the lines of `TextLineReader` (key `file:line`,
//! 1-based, header lines counted; a trailing `\r` dropped; a last line without a newline
//! kept unless empty), the fixed-size records of `FixedLengthRecordReader` (key
//! `file:record`; a record also needs its footer's bytes after it; records start every
//! `hop_bytes`), the whole file (`WholeFileReader`, key = file) or the name itself
//! (`IdentityReader`). Files are streamed, never read whole except by `WholeFileReader`.

use std::io::{BufRead, Read};

use ferroflow_core::Status;

use crate::io::file_stream::{io_status, open_stream, read_up_to};
use crate::io::tfrecord::RecordReader;

/// The reader kinds with their settings.
#[derive(Clone, Debug)]
pub(crate) enum ReaderKind {
    TfRecord { compression: String },
    TextLine { skip_header_lines: i64 },
    WholeFile,
    Identity,
    FixedLength { header: u64, record: u64, footer: u64, hop: u64, encoding: String },
}

impl ReaderKind {
    /// TensorFlow's class name (for messages).
    pub fn type_name(&self) -> &'static str {
        match self {
            ReaderKind::TfRecord { .. } => "TFRecordReader",
            ReaderKind::TextLine { .. } => "TextLineReader",
            ReaderKind::WholeFile => "WholeFileReader",
            ReaderKind::Identity => "IdentityReader",
            ReaderKind::FixedLength { .. } => "FixedLengthRecordReader",
        }
    }
}

type Stream = Box<dyn BufRead + Send>;

/// A record's key and value.
pub(crate) type Record = (Vec<u8>, Vec<u8>);

/// One work item being read.
pub(crate) enum Source {
    TfRecord {
        records: RecordReader<Stream>,
        offset: u64,
    },
    TextLine {
        lines: Stream,
        line: u64,
    },
    FixedLength {
        data: Stream,
        cache: Vec<u8>,
        number: u64,
    },
    /// A reader that yields once (`WholeFileReader`, `IdentityReader`); `done` after that.
    Once {
        done: bool,
    },
}

/// Opens `name`, decompressing "ZLIB" or "GZIP".
fn open(name: &str, compression: &str) -> Result<Stream, Status> {
    open_stream(name, compression, 256 << 10, "reader input file")
}

/// Skips `n` bytes; false if the stream ended first.
fn skip(r: &mut dyn Read, n: u64, name: &str) -> Result<bool, Status> {
    let copied = std::io::copy(&mut r.take(n), &mut std::io::sink()).map_err(|e| io_status(name, e))?;
    Ok(copied == n)
}

/// One line without its newline and one trailing `\r`; `None` at the end (a last line
/// that is empty after dropping `\r` does not count).
fn read_line(r: &mut dyn BufRead, name: &str) -> Result<Option<Vec<u8>>, Status> {
    let mut line = Vec::new();
    let n = r.read_until(b'\n', &mut line).map_err(|e| io_status(name, e))?;
    if n == 0 {
        return Ok(None);
    }
    let had_newline = line.last() == Some(&b'\n');
    if had_newline {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if !had_newline && line.is_empty() {
        return Ok(None);
    }
    Ok(Some(line))
}

impl Source {
    /// Starts reading `work` (TensorFlow's `OnWorkStarted`).
    pub fn start(kind: &ReaderKind, work: &str) -> Result<Source, Status> {
        Ok(match kind {
            ReaderKind::TfRecord { compression } => {
                Source::TfRecord { records: RecordReader::new(open(work, compression)?, work), offset: 0 }
            }
            ReaderKind::TextLine { skip_header_lines } => {
                let mut lines = open(work, "")?;
                let mut line = 0;
                while (line as i64) < *skip_header_lines {
                    if read_line(&mut lines, work)?.is_none() {
                        break;
                    }
                    line += 1;
                }
                Source::TextLine { lines, line }
            }
            ReaderKind::FixedLength { header, encoding, .. } => {
                let mut data = open(work, encoding)?;
                if !skip(&mut data, *header, work)? {
                    return Err(Status::out_of_range(format!(
                        "{work}: the file ends within its {header} header bytes"
                    )));
                }
                Source::FixedLength { data, cache: Vec::new(), number: 0 }
            }
            ReaderKind::WholeFile | ReaderKind::Identity => {
                if matches!(kind, ReaderKind::WholeFile) {
                    ferroflow_core::check_file_path(work, "reader input file")?;
                }
                Source::Once { done: false }
            }
        })
    }

    /// The next (key, value), or `None` once `work` is exhausted; the flag says the work is
    /// finished with this record (readers that make one record of a work item).
    pub fn next(&mut self, kind: &ReaderKind, work: &str) -> Result<(Option<Record>, bool), Status> {
        self.next_record(kind, work).map(|r| {
            let last = matches!(self, Source::Once { .. });
            let end = r.is_none() || last;
            (r, end)
        })
    }

    fn next_record(&mut self, kind: &ReaderKind, work: &str) -> Result<Option<Record>, Status> {
        let key = |k: u64| format!("{work}:{k}").into_bytes();
        match self {
            Source::TfRecord { records, offset } => {
                let at = *offset;
                let Some(rec) = records.next_record()? else { return Ok(None) };
                *offset += 16 + rec.len() as u64;
                Ok(Some((key(at), rec)))
            }
            Source::TextLine { lines, line } => {
                let Some(v) = read_line(lines, work)? else { return Ok(None) };
                *line += 1;
                Ok(Some((key(*line), v)))
            }
            Source::FixedLength { data, cache, number } => {
                let ReaderKind::FixedLength { record, footer, hop, .. } = kind else {
                    return Err(Status::internal("fixed-length source of another reader kind"));
                };
                let hop = if *hop == 0 { *record } else { *hop } as usize;
                if *number != 0 {
                    if hop <= cache.len() {
                        cache.drain(..hop);
                    } else {
                        let rest = (hop - cache.len()) as u64;
                        cache.clear();
                        if !skip(data, rest, work)? {
                            return Ok(None);
                        }
                    }
                }
                let need = (*record + *footer) as usize;
                let have = cache.len();
                if need > have {
                    let mut buf = vec![0u8; need - have];
                    if read_up_to(data, &mut buf, work)? < buf.len() {
                        return Ok(None);
                    }
                    cache.extend_from_slice(&buf);
                }
                let v = cache[..*record as usize].to_vec();
                let k = key(*number);
                *number += 1;
                Ok(Some((k, v)))
            }
            Source::Once { done } => {
                if *done {
                    return Ok(None);
                }
                *done = true;
                let value = match kind {
                    ReaderKind::WholeFile => std::fs::read(work).map_err(|e| io_status(work, e))?,
                    _ => work.as_bytes().to_vec(),
                };
                Ok(Some((work.as_bytes().to_vec(), value)))
            }
        }
    }
}
