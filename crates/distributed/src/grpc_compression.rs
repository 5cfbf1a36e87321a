//! Compressed gRPC messages (the prefix's flag 1): `grpc-encoding: gzip` or `deflate`, what a
//! TensorFlow peer sends when its session's `rpc_options.compression_algorithm` asks for
//! it. The two are told apart by their first bytes (gzip's magic 1f 8b; deflate is a zlib
//! stream), so the raw paths need not carry the header down. Output is bounded by gRPC's
//! message limit and the task's memory budget ([`crate::rpc_util::decoding_limit`]), so a
//! small compressed message cannot expand past either.

use std::io::Read;

use bytes::{Buf, Bytes};
use ferroflow_core::Status;

use crate::rpc_util::{decoding_limit, MAX_MESSAGE_SIZE};

/// Decompresses one message of `n` bytes read from `body`.
pub(crate) fn decompress(body: impl Buf, what: &str) -> Result<Bytes, Status> {
    let compressed_len = body.remaining();
    let mut reader = body.reader();
    let mut magic = [0u8; 2];
    if compressed_len < 2 {
        return Err(Status::internal(format!(
            "{what}: a compressed gRPC message of {compressed_len} bytes is neither gzip nor deflate"
        )));
    }
    reader.read_exact(&mut magic).map_err(|e| Status::internal(format!("{what}: reading the message: {e}")))?;
    let rest = Read::chain(&magic[..], reader);
    let max = decoding_limit();
    let limit = max as u64 + 1;
    let mut out = Vec::new();
    let read = if magic == [0x1f, 0x8b] {
        flate2::read::GzDecoder::new(rest).take(limit).read_to_end(&mut out)
    } else {
        flate2::read::ZlibDecoder::new(rest).take(limit).read_to_end(&mut out)
    };
    read.map_err(|e| {
        Status::internal(format!("{what}: the compressed message does not decompress as gzip or deflate: {e}"))
    })?;
    if out.len() > max {
        return Err(Status::resource_exhausted(format!(
            "{what}: the message decompresses to more than {max} bytes (the {MAX_MESSAGE_SIZE}-byte gRPC message \
             limit or this task's memory limit of {} bytes, whichever is smaller)",
            ferroflow_core::memory_limit()
        )));
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn gzip_and_deflate_messages_decompress() {
        let msg = b"a message that repeats, repeats, repeats".repeat(10);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&msg).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(decompress(&gz[..], "m").unwrap(), &msg[..]);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&msg).unwrap();
        let z = z.finish().unwrap();
        assert_eq!(decompress(&z[..], "m").unwrap(), &msg[..]);
    }

    #[test]
    fn output_stops_at_the_memory_budget() {
        // 65 MiB of zeros in a few hundred KB: past the 64 MiB budget the unit tests use.
        ferroflow_core::set_memory_limit(64 << 20);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..65 {
            gz.write_all(&zeros).unwrap();
        }
        let gz = gz.finish().unwrap();
        let e = decompress(&gz[..], "RunStepRequest").unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::ResourceExhausted, "{e}");
        assert!(e.message.contains("decompresses to more than 67108864 bytes"), "{e}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bad in [&[][..], &[1][..], &[0x1f, 0x8b, 1, 2, 3][..], &[0x78, 0x9c, 0xff][..], &[9, 9, 9, 9][..]] {
            let e = decompress(bad, "m").unwrap_err();
            assert_eq!(e.code, ferroflow_core::Code::Internal, "{bad:?}: {}", e.message);
        }
    }
}
