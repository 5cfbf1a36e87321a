//! TFRecord framing, the container of `events.out.tfevents.*` files: each record is
//! `u64 length`, `masked CRC32C of the length bytes`, `data`, `masked CRC32C of data`
//! (all little-endian).

use std::io::Write;

use ferroflow_core::Status;
use ferroflow_kernels::io::crc::{masked_crc32c, unmask};

/// Writes `data` as one record.
pub fn write_record<W: Write>(out: &mut W, data: &[u8]) -> std::io::Result<()> {
    let len = (data.len() as u64).to_le_bytes();
    out.write_all(&len)?;
    out.write_all(&masked_crc32c(&len).to_le_bytes())?;
    out.write_all(data)?;
    out.write_all(&masked_crc32c(data).to_le_bytes())
}

/// Reads every record of a file's bytes, checking both checksums (`file` names it in errors).
pub fn read_records(bytes: &[u8], file: &str) -> Result<Vec<Vec<u8>>, Status> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let crc_at = |p: usize| -> Option<u32> { Some(u32::from_le_bytes(bytes.get(p..p + 4)?.try_into().ok()?)) };
    while pos < bytes.len() {
        let loss = |m: &str| Status::data_loss(format!("{file}: record at offset {pos}: {m}"));
        let len_bytes = bytes.get(pos..pos + 8).ok_or_else(|| loss("truncated length"))?;
        let stored = crc_at(pos + 8).ok_or_else(|| loss("truncated length checksum"))?;
        if unmask(stored) != unmask(masked_crc32c(len_bytes)) {
            return Err(loss("corrupted length (checksum mismatch)"));
        }
        let len = u64::from_le_bytes(len_bytes.try_into().unwrap_or([0; 8]));
        let start = pos + 12;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| start.checked_add(l))
            .filter(|&e| e.checked_add(4).is_some_and(|x| x <= bytes.len()))
            .ok_or_else(|| loss("truncated data"))?;
        let data = &bytes[start..end];
        if crc_at(end) != Some(masked_crc32c(data)) {
            return Err(loss("corrupted data (checksum mismatch)"));
        }
        out.push(data.to_vec());
        pos = end + 4;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::Code;

    #[test]
    fn frames_round_trip_and_detect_corruption() {
        let mut buf = Vec::new();
        write_record(&mut buf, b"hello").unwrap();
        write_record(&mut buf, b"").unwrap();
        assert_eq!(buf.len(), 12 + 5 + 4 + 12 + 4);
        assert_eq!(&buf[..8], &5u64.to_le_bytes());
        assert_eq!(read_records(&buf, "f").unwrap(), vec![b"hello".to_vec(), vec![]]);
        for i in 0..buf.len() {
            let mut b = buf.clone();
            b[i] ^= 0x20;
            assert_eq!(read_records(&b, "events").unwrap_err().code, Code::DataLoss, "byte {i}");
        }
        assert!(read_records(&buf[..buf.len() - 1], "f").is_err());
    }
}
