//! TFRecord framing (the container of `tf.data.TFRecordDataset` inputs and of
//! `events.out.tfevents.*` files): each record is `u64 length`, `masked CRC32C of the
//! length bytes`, `data`, `masked CRC32C of data`, all little-endian. The reader streams, so
//! a file of any size is read record by record.

use std::io::{ErrorKind, Read, Write};

use ferroflow_core::Status;

use super::crc::masked_crc32c;

/// Largest record the reader accepts (a corrupted length must not allocate the machine).
pub const MAX_RECORD_BYTES: u64 = 1 << 32;

/// Writes `data` as one record.
pub fn write_record<W: Write>(out: &mut W, data: &[u8]) -> std::io::Result<()> {
    let len = (data.len() as u64).to_le_bytes();
    out.write_all(&len)?;
    out.write_all(&masked_crc32c(&len).to_le_bytes())?;
    out.write_all(data)?;
    out.write_all(&masked_crc32c(data).to_le_bytes())
}

/// Reads records one at a time from a byte stream, checking both checksums.
pub struct RecordReader<R: Read> {
    src: R,
    /// Names the stream in errors.
    name: String,
    offset: u64,
}

/// Fills `buf`; `Ok(false)` at a clean end of stream before the first byte.
fn read_full<R: Read>(src: &mut R, buf: &mut [u8]) -> std::io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match src.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(std::io::Error::new(ErrorKind::UnexpectedEof, "truncated")),
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

impl<R: Read> RecordReader<R> {
    /// A reader over `src`, called `name` in errors.
    pub fn new(src: R, name: impl Into<String>) -> RecordReader<R> {
        RecordReader { src, name: name.into(), offset: 0 }
    }

    /// The next record, or `None` at the end of the stream.
    pub fn next_record(&mut self) -> Result<Option<Vec<u8>>, Status> {
        let at = self.offset;
        let name = self.name.clone();
        let loss = |m: &str| Status::data_loss(format!("{name}: corrupted record at {at}: {m}"));
        let io = |e: std::io::Error| {
            if e.kind() == ErrorKind::UnexpectedEof {
                Status::data_loss(format!("{name}: truncated record at {at}"))
            } else {
                Status::unknown(format!("{name}: reading the record at {at}: {e}"))
            }
        };
        let mut head = [0u8; 12];
        if !read_full(&mut self.src, &mut head).map_err(io)? {
            return Ok(None);
        }
        let (len_bytes, crc) = head.split_at(8);
        if crc != masked_crc32c(len_bytes).to_le_bytes() {
            return Err(loss("length checksum mismatch"));
        }
        let mut l = [0u8; 8];
        l.copy_from_slice(len_bytes);
        let len = u64::from_le_bytes(l);
        if len > MAX_RECORD_BYTES {
            return Err(loss(&format!("length {len} is more than {MAX_RECORD_BYTES}")));
        }
        let mut data = ferroflow_core::alloc::zeroed::<u8>(&[len as usize])?;
        let mut crc = [0u8; 4];
        if !read_full(&mut self.src, &mut data).map_err(io)? && len > 0 {
            return Err(Status::data_loss(format!("{name}: truncated record at {at}")));
        }
        if !read_full(&mut self.src, &mut crc).map_err(io)? {
            return Err(Status::data_loss(format!("{name}: truncated record at {at}")));
        }
        if crc != masked_crc32c(&data).to_le_bytes() {
            return Err(loss("data checksum mismatch"));
        }
        self.offset += 16 + len;
        Ok(Some(data))
    }
}

/// Every record of a file's bytes (`file` names it in errors).
pub fn read_records(bytes: &[u8], file: &str) -> Result<Vec<Vec<u8>>, Status> {
    let mut r = RecordReader::new(bytes, file);
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok(out)
}
