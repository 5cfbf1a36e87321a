//! `DecodeCompressed` (`tf.io.decode_compressed`): each string inflated as TensorFlow's
//! zlib input stream does. `compression_type` "" copies, "ZLIB" reads one zlib stream
//! (bytes after it are ignored), "GZIP" reads gzip members one after another (until the
//! input ends or a member inflates to nothing: TensorFlow's reader stops there). A stream cut
//! short is not an error: what it inflated so far is the value. Header, trailer-check and
//! body errors are DataLoss `inflate() failed with error N: msg` as zlib words them (the
//! body's own message is zlib's only for a bad first block type; other corrupt bodies say
//! "invalid compressed data"). ZSTD is refused as unimplemented.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{check_tensor_alloc, DataType, NodeAttrs, Status, Storage, Tensor};
use flate2::{Decompress, FlushDecompress, Status as ZStatus};

use crate::{KernelRegistry, OpKernel};

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    None,
    Zlib,
    Gzip,
    Zstd,
}

/// zlib's `Z_DATA_ERROR` with its message.
fn data_error(msg: &str) -> Status {
    Status::data_loss(format!("inflate() failed with error -3: {msg}"))
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(data);
    c.sum()
}

/// Raw deflate data from the start of `input`, appended to `out`: how many input bytes it
/// took, or None when the input ended first (`out` then holds what was inflated).
fn inflate_raw(input: &[u8], out: &mut Vec<u8>) -> Result<Option<usize>, Status> {
    let mut d = Decompress::new(false);
    loop {
        let at = d.total_in() as usize;
        if out.capacity() - out.len() < 1 << 15 {
            let grow = out.len().clamp(1 << 16, 1 << 26);
            check_tensor_alloc(&[out.len().saturating_add(grow)], DataType::UInt8)?;
            out.try_reserve(grow).map_err(|_| Status::resource_exhausted("out of memory inflating a string"))?;
        }
        let (in0, out0) = (d.total_in(), d.total_out());
        let st = d.decompress_vec(&input[at..], out, FlushDecompress::None).map_err(|_| {
            // zlib names a first block of the reserved type 3; other bad bodies get one message.
            if at == 0 && input.first().is_some_and(|b| (b >> 1) & 3 == 3) {
                data_error("invalid block type")
            } else {
                data_error("invalid compressed data")
            }
        })?;
        if st == ZStatus::StreamEnd {
            return Ok(Some(d.total_in() as usize));
        }
        let spare = out.capacity() > out.len();
        if d.total_in() == in0 && d.total_out() == out0 && spare {
            return Ok(None);
        }
    }
}

/// One zlib stream: header, deflate body, Adler-32 trailer.
fn inflate_zlib(input: &[u8]) -> Result<Vec<u8>, Status> {
    let mut out = Vec::new();
    let &[cmf, flg, ..] = input else { return Ok(out) };
    if ((u32::from(cmf) << 8) | u32::from(flg)) % 31 != 0 {
        return Err(data_error("incorrect header check"));
    }
    if cmf & 0x0f != 8 {
        return Err(data_error("unknown compression method"));
    }
    if (cmf >> 4) + 8 > 15 {
        return Err(data_error("invalid window size"));
    }
    if flg & 0x20 != 0 {
        // A preset dictionary (never given here): Z_NEED_DICT once its id has arrived.
        return if input.len() >= 6 { Err(Status::data_loss("inflate() failed with error 2")) } else { Ok(out) };
    }
    let Some(used) = inflate_raw(&input[2..], &mut out)? else { return Ok(out) };
    let rest = &input[2 + used..];
    if rest.len() >= 4 && u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) != adler32(&out) {
        return Err(data_error("incorrect data check"));
    }
    Ok(out)
}

/// The length of the gzip header at the start of `b`, None when `b` ends inside it.
fn gzip_header(b: &[u8]) -> Result<Option<usize>, Status> {
    if b.len() < 2 {
        return Ok(None);
    }
    if b[..2] != [0x1f, 0x8b] {
        return Err(data_error("incorrect header check"));
    }
    if b.len() < 4 {
        return Ok(None);
    }
    if b[2] != 8 {
        return Err(data_error("unknown compression method"));
    }
    let flags = b[3];
    if flags & 0xe0 != 0 {
        return Err(data_error("unknown header flags set"));
    }
    let mut p = 10;
    if flags & 4 != 0 {
        let Some(x) = b.get(p..p + 2) else { return Ok(None) };
        p += 2 + usize::from(u16::from_le_bytes([x[0], x[1]]));
    }
    for bit in [8u8, 16] {
        if flags & bit != 0 {
            let Some(end) = b.get(p..).and_then(|s| s.iter().position(|&c| c == 0)) else { return Ok(None) };
            p += end + 1;
        }
    }
    if flags & 2 != 0 {
        let Some(x) = b.get(p..p + 2) else { return Ok(None) };
        if u32::from(u16::from_le_bytes([x[0], x[1]])) != crc32(&b[..p]) & 0xffff {
            return Err(data_error("header crc mismatch"));
        }
        p += 2;
    }
    Ok((p <= b.len()).then_some(p))
}

/// Gzip members one after another until the input ends or a member is empty.
fn inflate_gzip(input: &[u8]) -> Result<Vec<u8>, Status> {
    let mut out = Vec::new();
    let mut pos = 0;
    // Every member takes at least its 10-byte header, so this ends.
    while pos < input.len() {
        let Some(head) = gzip_header(&input[pos..])? else { break };
        let start = out.len();
        let Some(used) = inflate_raw(&input[pos + head..], &mut out)? else { break };
        pos += head + used;
        let Some(t) = input.get(pos..pos + 8) else { break };
        let member = &out[start..];
        if u32::from_le_bytes([t[0], t[1], t[2], t[3]]) != crc32(member) {
            return Err(data_error("incorrect data check"));
        }
        if u32::from_le_bytes([t[4], t[5], t[6], t[7]]) != member.len() as u32 {
            return Err(data_error("incorrect length check"));
        }
        pos += 8;
        // TensorFlow's stream stops at an inflate call that yields nothing: after an empty
        // member the rest of the input is not read.
        if out.len() == start {
            break;
        }
    }
    Ok(out)
}

op_kernel! {
    struct DecodeCompressed { kind: Kind }
    fn compute(&self, ctx) {
        let t = ctx.input(0)?;
        let Storage::Str(v) = t.storage() else {
            return Err(ctx.error(format!("bytes must be a string tensor, got {}", t.dtype())));
        };
        let mut out = Vec::with_capacity(v.len());
        for s in v.iter() {
            let r = match self.kind {
                Kind::None => Ok(s.clone()),
                Kind::Zlib => inflate_zlib(s),
                Kind::Gzip => inflate_gzip(s),
                Kind::Zstd => Err(Status::unimplemented("ZSTD decompression is not supported by ferroflow")),
            };
            out.push(r.map_err(|e| ctx.error_with(e))?);
        }
        ctx.set_output(0, Tensor::new(t.shape().clone(), out)?)
    }
}

fn factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let kind = match node.attr_string("compression_type")?.as_str() {
        "" => Kind::None,
        "ZLIB" => Kind::Zlib,
        "GZIP" => Kind::Gzip,
        "ZSTD" => Kind::Zstd,
        _ => return Err(node.node_error("Only ZLIB, ZSTD, GZIP or NONE are supported compressions")),
    };
    Ok(Box::new(DecodeCompressed { kind }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("DecodeCompressed", factory);
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code, Status, Tensor};

    use crate::testutil::{node, run_kernel};

    fn run(kind: &str, v: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, Status> {
        let n = v.len();
        let out = run_kernel(
            node("DecodeCompressed", &[("compression_type", attr::string(kind))]),
            vec![Tensor::new(vec![n], v).unwrap()],
            1,
        )?;
        Ok(out[0].as_slice::<Vec<u8>>()?.to_vec())
    }

    fn err(kind: &str, b: &[u8], want: &str) {
        let e = run(kind, vec![b.to_vec()]).unwrap_err();
        assert_eq!(e.code, Code::DataLoss, "{e}");
        assert!(e.message.contains(want), "{e} does not say {want}");
    }

    /// zlib.compress(b"hello") and gzip.compress(b"hello", mtime=0).
    const Z: &[u8] = b"\x78\x9c\xcb\x48\xcd\xc9\xc9\x07\x00\x06\x2c\x02\x15";
    const G: &[u8] =
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xcb\x48\xcd\xc9\xc9\x07\x00\x86\xa6\x10\x36\x05\x00\x00\x00";

    #[test]
    fn inflates_and_accepts_cut_streams() {
        assert_eq!(
            run("ZLIB", vec![Z.to_vec(), Z[..11].to_vec(), vec![]]).unwrap(),
            [b"hello".to_vec(), b"hello".to_vec(), vec![]]
        );
        let two = [G, G].concat();
        let got = run("GZIP", vec![two, G[..20].to_vec(), [G, &[0x1f]].concat()]).unwrap();
        assert_eq!(got, [b"hellohello".to_vec(), b"hello".to_vec(), b"hello".to_vec()]);
        assert_eq!(super::adler32(b"hello"), 0x062c0215);
    }

    #[test]
    fn tensorflows_errors() {
        err("ZLIB", b"notzlib", "inflate() failed with error -3: incorrect header check");
        err("ZLIB", b"\x88\x1cxx", "inflate() failed with error -3: invalid window size");
        err("ZLIB", b"\x78\xbbxxxxxx", "inflate() failed with error 2");
        err("ZLIB", b"\x78\x9c\xff\xff", "inflate() failed with error -3: invalid block type");
        let mut bad = Z.to_vec();
        bad[12] ^= 1;
        err("ZLIB", &bad, "incorrect data check");
        err("GZIP", Z, "incorrect header check");
        err("GZIP", &[b"\x1f\x8b\x07\x00", &G[4..]].concat(), "unknown compression method");
        err("GZIP", &[b"\x1f\x8b\x08\x20", &G[4..]].concat(), "unknown header flags set");
        let mut crc = G.to_vec();
        crc[17] ^= 1;
        err("GZIP", &crc, "incorrect data check");
        let mut len = G.to_vec();
        len[21] ^= 1;
        err("GZIP", &len, "incorrect length check");
        err("GZIP", &[G, b"\0\0\0"].concat(), "incorrect header check");
        let e = crate::create_kernel(&node("DecodeCompressed", &[("compression_type", attr::string("LZ4"))]))
            .err()
            .unwrap();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("Only ZLIB, ZSTD, GZIP or NONE are supported compressions"), "{e}");
        assert_eq!(run("ZSTD", vec![b"x".to_vec()]).unwrap_err().code, Code::Unimplemented);
    }
}
