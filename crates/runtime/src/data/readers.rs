//! File datasets, each reading its files in order and streaming them: `TFRecordDataset`
//! (records, checksums checked), `TextLineDataset` (lines without `\n` or `\r\n`) and
//! `FixedLengthRecordDataset(V2)` (`record_bytes` records between `header_bytes` and
//! `footer_bytes`). `compression_type` is `""`, `"ZLIB"` or `"GZIP"`.

use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};
use ferroflow_kernels::io::file_stream::{io_status, open_stream, read_up_to};
use ferroflow_kernels::io::tfrecord::RecordReader;

use super::dataset::{scalar_i64, Dataset, DatasetIter, Element, IterCtx};
use super::BuildFn;

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Records,
    Lines,
    Fixed { header: u64, record: usize, footer: usize },
}

struct Files {
    names: Vec<String>,
    compression: String,
    buffer: usize,
    format: Format,
}

/// One open file in the chosen format.
enum Open {
    Records(RecordReader<Box<dyn Read + Send>>),
    Lines(BufReader<Box<dyn Read + Send>>, String),
    Fixed(Box<dyn Read + Send>, String, Vec<u8>),
}

struct FilesIter {
    ds: Arc<Files>,
    next_file: usize,
    cur: Option<Open>,
}

impl Dataset for Files {
    fn make_iter(self: Arc<Self>, _: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        Ok(Box::new(FilesIter { ds: self, next_file: 0, cur: None }))
    }
}

fn open(name: &str, compression: &str, buffer: usize) -> Result<Box<dyn Read + Send>, Status> {
    Ok(Box::new(open_stream(name, compression, buffer, "dataset file")?))
}

fn io_err(name: &str, e: std::io::Error) -> Status {
    io_status(name, e)
}

impl FilesIter {
    fn open_next(&mut self) -> Result<bool, Status> {
        let Some(name) = self.ds.names.get(self.next_file).cloned() else { return Ok(false) };
        self.next_file += 1;
        let mut src = open(&name, &self.ds.compression, self.ds.buffer)?;
        self.cur = Some(match self.ds.format {
            Format::Records => Open::Records(RecordReader::new(src, name)),
            Format::Lines => Open::Lines(BufReader::new(src), name),
            Format::Fixed { header, record, footer } => {
                std::io::copy(&mut (&mut src).take(header), &mut std::io::sink()).map_err(|e| io_err(&name, e))?;
                // Look ahead one record and the footer: a record is one only if a whole
                // footer follows it.
                let mut ahead = vec![0u8; record + footer];
                let n = read_up_to(src.as_mut(), &mut ahead, &name)?;
                ahead.truncate(n);
                Open::Fixed(src, name, ahead)
            }
        });
        Ok(true)
    }
}

impl DatasetIter for FilesIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        loop {
            ctx.check()?;
            let got = match self.cur.as_mut() {
                None => {
                    if !self.open_next()? {
                        return Ok(None);
                    }
                    continue;
                }
                Some(Open::Records(r)) => r.next_record()?,
                Some(Open::Lines(r, name)) => {
                    let mut line = Vec::new();
                    let n = r.read_until(b'\n', &mut line).map_err(|e| io_err(name, e))?;
                    if n == 0 {
                        None
                    } else {
                        if line.last() == Some(&b'\n') {
                            line.pop();
                            if line.last() == Some(&b'\r') {
                                line.pop();
                            }
                        }
                        Some(line)
                    }
                }
                Some(Open::Fixed(r, name, ahead)) => {
                    let Format::Fixed { record, footer, .. } = self.ds.format else { return Ok(None) };
                    if ahead.len() < record + footer {
                        None
                    } else {
                        let rec = ahead[..record].to_vec();
                        let mut more = vec![0u8; record];
                        let n = read_up_to(r.as_mut(), &mut more, name)?;
                        ahead.drain(..record);
                        ahead.extend_from_slice(&more[..n]);
                        Some(rec)
                    }
                }
            };
            match got {
                Some(bytes) => return Ok(Some(vec![Tensor::scalar(bytes)])),
                None => self.cur = None,
            }
        }
    }
}

/// The file names of input 0 (a string scalar or vector).
fn names(t: &Tensor) -> Result<Vec<String>, Status> {
    if t.dtype() != DataType::String || t.rank() > 1 {
        return Err(Status::invalid_argument(format!(
            "`filenames` must be a scalar or a vector of strings, got a {} of shape {}",
            t.dtype(),
            t.shape()
        )));
    }
    Ok(t.as_slice::<Vec<u8>>()?.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect())
}

fn string_scalar(t: &Tensor, what: &str) -> Result<String, Status> {
    if t.dtype() != DataType::String || t.rank() != 0 {
        return Err(Status::invalid_argument(format!("{what} must be a string scalar")));
    }
    Ok(String::from_utf8_lossy(&t.scalar_value::<Vec<u8>>()?).into_owned())
}

/// `TFRecordDataset`, `TextLineDataset`, `FixedLengthRecordDataset(V2)`.
pub(super) fn files(n: &NodeDef) -> Result<BuildFn, Status> {
    let op = n.op.clone();
    Ok(Box::new(move |ctx| {
        let names = names(&ctx.input(0)?).map_err(|e| ctx.error(e.message))?;
        let (format, compression, buffer) = if op.starts_with("FixedLength") {
            let header = scalar_i64(ctx, 1, "header_bytes")?;
            let record = scalar_i64(ctx, 2, "record_bytes")?;
            let footer = scalar_i64(ctx, 3, "footer_bytes")?;
            let buffer = scalar_i64(ctx, 4, "buffer_size")?;
            if header < 0 || footer < 0 || record <= 0 {
                return Err(ctx.error(format!(
                    "record_bytes must be positive and header_bytes, footer_bytes not negative (got {record}, \
                     {header}, {footer})"
                )));
            }
            let buffer = buffer.max(0);
            if record > 1 << 30 || footer > 1 << 30 {
                return Err(ctx.error("record_bytes and footer_bytes must be at most 2^30"));
            }
            let compression =
                if ctx.num_inputs() > 5 { string_scalar(&ctx.input(5)?, "compression_type")? } else { String::new() };
            let f = Format::Fixed { header: header as u64, record: record as usize, footer: footer as usize };
            (f, compression, buffer)
        } else {
            let compression = string_scalar(&ctx.input(1)?, "compression_type")?;
            // -1 (or 0): the default buffer.
            let buffer = scalar_i64(ctx, 2, "buffer_size")?.max(0);
            (if op.starts_with("TFRecord") { Format::Records } else { Format::Lines }, compression, buffer)
        };
        if !matches!(compression.as_str(), "" | "ZLIB" | "GZIP") {
            return Err(ctx.error(format!("Unsupported compression_type: {compression}.")));
        }
        let buffer = if buffer == 0 { 256 << 10 } else { (buffer as usize).clamp(8 << 10, 64 << 20) };
        Ok(Arc::new(Files { names, compression, buffer, format }) as Arc<dyn Dataset>)
    }))
}
