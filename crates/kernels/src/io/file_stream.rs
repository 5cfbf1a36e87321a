//! Files read as streams by the readers of both input pipelines (`tf.data`'s file datasets
//! and TensorFlow 1.x's reader ops): opened under `--file_root`, decompressed ("ZLIB",
//! "GZIP"), buffered, with TensorFlow's error classes.

use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read};

use ferroflow_core::{Code, Status};

/// TensorFlow's status for an I/O error on `name`.
pub fn io_status(name: &str, e: std::io::Error) -> Status {
    match e.kind() {
        ErrorKind::NotFound => Status::not_found(format!("{name}; No such file or directory")),
        ErrorKind::PermissionDenied => Status::new(Code::PermissionDenied, format!("{name}; Permission denied")),
        ErrorKind::InvalidData | ErrorKind::InvalidInput => Status::data_loss(format!("{name}: {e}")),
        _ => Status::unknown(format!("{name}: {e}")),
    }
}

/// Opens `name` (`what` names it in a `--file_root` refusal) with a `buffer`-byte buffer,
/// decompressing "ZLIB" or "GZIP".
pub fn open_stream(
    name: &str,
    compression: &str,
    buffer: usize,
    what: &str,
) -> Result<Box<dyn BufRead + Send>, Status> {
    ferroflow_core::check_file_path(name, what)?;
    let raw = BufReader::with_capacity(buffer, File::open(name).map_err(|e| io_status(name, e))?);
    Ok(match compression {
        "" => Box::new(raw),
        "ZLIB" => Box::new(BufReader::new(flate2::bufread::ZlibDecoder::new(raw))),
        "GZIP" => Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(raw))),
        c => return Err(Status::invalid_argument(format!("Unsupported compression_type: {c}."))),
    })
}

/// Reads up to `buf.len()` bytes; how many (fewer only at the end of the stream).
pub fn read_up_to(r: &mut dyn Read, buf: &mut [u8], name: &str) -> Result<usize, Status> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io_status(name, e)),
        }
    }
    Ok(got)
}
