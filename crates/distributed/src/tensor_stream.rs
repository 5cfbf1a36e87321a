//! RecvTensorResponse messages read from HTTP/2 DATA chunks *as they arrive*. A large
//! numeric `tensor_content` is copied once, straight into the tensor's typed buffer, chunk
//! by chunk while the rest of it is still on the wire: receiving a 64 MiB tensor costs one
//! copy that overlaps the transfer, instead of gathering the chunks into one buffer and then
//! converting that buffer into the tensor (two copies and two fresh 64 MiB allocations after
//! the last byte came). Every other message (small, string, unusual field order) is
//! buffered whole and decoded as before (`tensor_wire::Chunks`).
//!
//! The fast path only needs the message's head: the outer fields before the tensor, the
//! TensorProto fields before its content (dtype, shape), and the content's length. Both
//! ferroflow's encoder and TensorFlow's write the content last in its TensorProto. The
//! fields around the content are decoded with prost afterwards: the outer fields before
//! and after the tensor form a valid RecvTensorResponse without it, and the tensor's fields
//! before and after the content a valid TensorProto without it.

use bytes::{Buf, Bytes, BytesMut};
use ferroflow_core::proto::{Any, RecvTensorResponse, TensorProto};
use ferroflow_core::varint;
use ferroflow_core::{DataType, Shape, Status, Storage, Tensor};
use prost::Message;

use crate::rpc_util::MAX_MESSAGE_SIZE;
use crate::tensor_wire::Chunks;

/// Contents at least this large take the fast path.
const MIN_STREAMED: usize = 64 << 10;

/// How far into a message its content must start for the fast path.
const MAX_HEAD: usize = 4096;

/// One received RecvTensorResponse. `tensor` is the decoded tensor or what was wrong with
/// it (a message that is malformed as a whole ends the stream instead).
pub(crate) struct Received {
    pub(crate) tensor: Result<Tensor, Status>,
    pub(crate) is_dead: bool,
    pub(crate) transport_options: Option<Any>,
}

/// Where a message's content lies (offsets into the message, after its 5-byte prefix).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Layout {
    /// The outer `tensor` field's key.
    tensor_key: usize,
    /// The TensorProto's bytes: `[tensor_start, tensor_end)`.
    tensor_start: usize,
    tensor_end: usize,
    /// The `tensor_content` field's key, and its bytes `[content_start, content_start + content_len)`.
    content_key: usize,
    content_start: usize,
    content_len: usize,
    dtype: DataType,
    /// The message's length.
    len: usize,
}

/// A message whose content is being copied into its buffer.
struct Streaming {
    layout: Layout,
    /// The message's bytes before its content.
    head: Bytes,
    dest: Storage,
    filled: usize,
}

/// Reads a stream of gRPC-framed RecvTensorResponse messages (one for a RecvTensor call,
/// several for ferroflow's batched call): [`push`](Self::push) each DATA chunk, then take
/// the messages it completed with [`next`](Self::next).
#[derive(Default)]
pub(crate) struct RecvTensorReader {
    pending: Chunks,
    streaming: Option<Streaming>,
    /// The message at the front of `pending` is decoded whole (its head was scanned).
    whole: bool,
}

impl RecvTensorReader {
    /// Takes one DATA chunk: bytes of a content being streamed go to its buffer now.
    pub(crate) fn push(&mut self, mut b: Bytes) {
        if let Some(s) = &mut self.streaming {
            let n = (s.layout.content_len - s.filled).min(b.len());
            if n > 0 {
                write_bytes(&mut s.dest, s.filled, &b[..n]);
                s.filled += n;
                b.advance(n);
            }
        }
        self.pending.push(b);
    }

    /// The next complete message, `None` until one is; an error when the stream is not a
    /// sequence of RecvTensorResponse messages (`what` names the call).
    pub(crate) fn next(&mut self, what: &str) -> Result<Option<Received>, Status> {
        loop {
            if let Some(s) = &self.streaming {
                if s.filled < s.layout.content_len {
                    return Ok(None);
                }
                let tail = s.layout.len - s.layout.content_start - s.layout.content_len;
                if self.pending.remaining() < tail {
                    return Ok(None);
                }
                let tail = self.pending.copy_to_bytes(tail);
                let s = self.streaming.take().ok_or_else(|| Status::internal("no streamed message"))?;
                return assemble(s, tail, what).map(Some);
            }
            if self.pending.remaining() < 5 {
                return Ok(None);
            }
            let mut prefix = [0u8; 5];
            self.pending.peek(&mut prefix);
            let len = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
            if !self.whole && prefix[0] == 0 && (MIN_STREAMED..=MAX_MESSAGE_SIZE).contains(&len) {
                let mut head = vec![0u8; 5 + len.min(MAX_HEAD)];
                if !self.pending.peek(&mut head) {
                    return Ok(None);
                }
                if let Some(layout) = scan(&head[5..], len) {
                    // The buffer is reserved for what the head declares before the bytes
                    // come: a peer may not declare more than this task's memory limit.
                    let n = layout.content_len / streamable_size(layout.dtype).unwrap_or(1);
                    ferroflow_core::check_tensor_alloc(&[n], layout.dtype)
                        .map_err(|e| Status::new(e.code, format!("{what}: {}", e.message)))?;
                    self.start(layout);
                    continue;
                }
            }
            // Buffered whole: prefix checks and errors are the standard decoder's.
            self.whole = true;
            let Some(m) = self.pending.take_message(what)? else { return Ok(None) };
            self.whole = false;
            let resp: RecvTensorResponse = m.into_message(what)?;
            let proto = resp.tensor.unwrap_or_default();
            return Ok(Some(Received {
                tensor: Tensor::from_proto(&proto),
                is_dead: resp.is_dead,
                transport_options: resp.transport_options,
            }));
        }
    }

    /// Whether bytes of an unfinished message are held.
    pub(crate) fn has_pending(&self) -> bool {
        self.streaming.is_some() || self.pending.remaining() > 0
    }

    /// Starts streaming the message at the front of `pending` (its prefix and head have
    /// arrived), moving the content bytes already here into its buffer.
    fn start(&mut self, layout: Layout) {
        self.pending.advance(5);
        let head = self.pending.copy_to_bytes(layout.content_start);
        let size = layout.dtype.byte_size().unwrap_or(1);
        let dest = with_capacity(layout.dtype, layout.content_len / size);
        let mut s = Streaming { layout, head, dest, filled: 0 };
        while s.filled < layout.content_len && self.pending.remaining() > 0 {
            let chunk = self.pending.chunk();
            let n = (layout.content_len - s.filled).min(chunk.len());
            write_bytes(&mut s.dest, s.filled, &chunk[..n]);
            s.filled += n;
            self.pending.advance(n);
        }
        self.streaming = Some(s);
    }
}

/// Skips a field of wire type `wt` whose key ended at `*pos`; `None` for groups or if cut off.
fn skip(b: &[u8], pos: &mut usize, wt: u64) -> Option<()> {
    match wt {
        0 => varint::get(b, pos).map(|_| ()),
        1 => (*pos + 8 <= b.len()).then(|| *pos += 8),
        2 => {
            let n = usize::try_from(varint::get(b, pos)?).ok()?;
            (*pos + n <= b.len()).then(|| *pos += n)
        }
        5 => (*pos + 4 <= b.len()).then(|| *pos += 4),
        _ => None,
    }
}

/// Finds the content in the head `b` (the first bytes of a `len`-byte message): the first
/// outer field 1 (the tensor), and in it a numeric dtype followed by a large `tensor_content`.
/// `None` whenever the message does not look like that; it is then decoded whole.
fn scan(b: &[u8], len: usize) -> Option<Layout> {
    if cfg!(target_endian = "big") {
        return None;
    }
    let mut pos = 0;
    loop {
        let tensor_key = pos;
        let key = varint::get(b, &mut pos)?;
        let (field, wt) = (key >> 3, key & 7);
        if field != 1 {
            skip(b, &mut pos, wt)?;
            continue;
        }
        if wt != 2 {
            return None;
        }
        let t_len = usize::try_from(varint::get(b, &mut pos)?).ok()?;
        let tensor_start = pos;
        let tensor_end = tensor_start.checked_add(t_len).filter(|&e| e <= len)?;
        let mut dtype = None;
        while pos < tensor_end {
            let content_key = pos;
            let key = varint::get(b, &mut pos)?;
            match (key >> 3, key & 7) {
                (1, 0) => dtype = i32::try_from(varint::get(b, &mut pos)?).ok(),
                (4, 2) => {
                    let content_len = usize::try_from(varint::get(b, &mut pos)?).ok()?;
                    let content_start = pos;
                    if content_start.checked_add(content_len)? > tensor_end || content_len < MIN_STREAMED {
                        return None;
                    }
                    let dtype = match DataType::from_proto(dtype?).ok()? {
                        (d, false) => d,
                        _ => return None,
                    };
                    let size = streamable_size(dtype)?;
                    if content_len % size != 0 {
                        return None;
                    }
                    return Some(Layout {
                        tensor_key,
                        tensor_start,
                        tensor_end,
                        content_key,
                        content_start,
                        content_len,
                        dtype,
                        len,
                    });
                }
                (_, wt) => skip(b, &mut pos, wt)?,
            }
        }
        return None;
    }
}

/// The element size of a dtype whose tensors are a plain copy of their content.
fn streamable_size(d: DataType) -> Option<usize> {
    match d {
        DataType::Float | DataType::Int32 => Some(4),
        DataType::Double | DataType::Int64 => Some(8),
        DataType::UInt8 => Some(1),
        _ => None,
    }
}

/// An empty typed buffer with room for `n` elements (`d` is streamable).
fn with_capacity(d: DataType, n: usize) -> Storage {
    match d {
        DataType::Double => Storage::F64(Vec::with_capacity(n)),
        DataType::Int32 => Storage::I32(Vec::with_capacity(n)),
        DataType::Int64 => Storage::I64(Vec::with_capacity(n)),
        DataType::UInt8 => Storage::U8(Vec::with_capacity(n)),
        _ => Storage::F32(Vec::with_capacity(n)),
    }
}

/// Copies `src` to byte offset `at` of `dest`'s reserved (not yet initialized) room.
fn write_bytes(dest: &mut Storage, at: usize, src: &[u8]) {
    fn write<T>(v: &mut Vec<T>, at: usize, src: &[u8]) {
        let room = v.capacity() * std::mem::size_of::<T>();
        assert!(at + src.len() <= room, "content past the buffer reserved for it");
        // SAFETY: the destination range lies within the vector's allocation (checked above)
        // and cannot overlap `src`, a received chunk.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), v.as_mut_ptr().cast::<u8>().add(at), src.len()) }
    }
    match dest {
        Storage::F32(v) => write(v, at, src),
        Storage::F64(v) => write(v, at, src),
        Storage::I32(v) => write(v, at, src),
        Storage::I64(v) => write(v, at, src),
        Storage::U8(v) => write(v, at, src),
        // Only streamable dtypes get a buffer.
        _ => {}
    }
}

/// `dest` with its first `n` elements written.
fn filled(dest: Storage, n: usize) -> Storage {
    fn done<T>(mut v: Vec<T>, n: usize) -> Vec<T> {
        assert!(n <= v.capacity(), "more elements than the buffer reserved");
        // SAFETY: `n` elements fit the allocation (checked above), the caller wrote all of
        // their bytes (`content_len` = n * size bytes were counted into the buffer), and any
        // bit pattern is a valid f32, f64, i32, i64 or u8.
        unsafe { v.set_len(n) };
        v
    }
    match dest {
        Storage::F32(v) => Storage::F32(done(v, n)),
        Storage::F64(v) => Storage::F64(done(v, n)),
        Storage::I32(v) => Storage::I32(done(v, n)),
        Storage::I64(v) => Storage::I64(done(v, n)),
        Storage::U8(v) => Storage::U8(done(v, n)),
        other => other,
    }
}

/// The message around a streamed content: its head, the content, and `tail` (the bytes after
/// the content).
fn assemble(s: Streaming, tail: Bytes, what: &str) -> Result<Received, Status> {
    let l = s.layout;
    let content_end = l.content_start + l.content_len;
    let tensor_rest = l.tensor_end - content_end;
    let mut outer = BytesMut::with_capacity(l.tensor_key + tail.len() - tensor_rest);
    outer.extend_from_slice(&s.head[..l.tensor_key]);
    outer.extend_from_slice(&tail[tensor_rest..]);
    let resp = RecvTensorResponse::decode(outer.freeze())
        .map_err(|e| Status::internal(format!("{what}: malformed protobuf: {e}")))?;
    if resp.tensor.is_some() {
        return Err(Status::internal(format!("{what}: malformed RecvTensorResponse: two tensor fields")));
    }
    let mut fields = BytesMut::with_capacity(l.content_key - l.tensor_start + tensor_rest);
    fields.extend_from_slice(&s.head[l.tensor_start..l.content_key]);
    fields.extend_from_slice(&tail[..tensor_rest]);
    let tensor = TensorProto::decode(fields.freeze())
        .map_err(|e| Status::internal(format!("{what}: malformed protobuf: {e}")))
        .and_then(|p| tensor_of(&p, l, s.dest));
    Ok(Received { tensor, is_dead: resp.is_dead, transport_options: resp.transport_options })
}

/// The tensor whose other fields are `p` and whose content is `dest`; the same checks as
/// `Tensor::from_proto`.
fn tensor_of(p: &TensorProto, l: Layout, dest: Storage) -> Result<Tensor, Status> {
    if !p.tensor_content.is_empty() {
        return Err(Status::invalid_argument("TensorProto has two tensor_content fields"));
    }
    let dtype = DataType::from_i32(p.dtype)?;
    if dtype != l.dtype {
        return Err(Status::invalid_argument(format!(
            "TensorProto's dtype changes from {} to {dtype} after its content",
            l.dtype
        )));
    }
    let shape = match &p.tensor_shape {
        Some(s) => Shape::from_proto(s)?,
        None => Shape::scalar(),
    };
    let n = shape.checked_num_elements()?;
    let want = n.checked_mul(streamable_size(dtype).unwrap_or(1));
    if want != Some(l.content_len) {
        return Err(Status::invalid_argument(format!(
            "tensor_content of {dtype} shape {shape} must be {} bytes, got {}",
            want.map_or_else(|| "more than 2^64".to_string(), |w| w.to_string()),
            l.content_len
        )));
    }
    Tensor::from_storage(shape, filled(dest, n))
}

#[cfg(test)]
#[path = "tensor_stream_tests.rs"]
mod tests;
