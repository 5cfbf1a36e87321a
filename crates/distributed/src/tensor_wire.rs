//! Tensor-carrying gRPC messages on the wire without copying the tensors (TensorFlow does
//! the same in its `grpc_tensor_coding`). A response (RecvTensor's, RunStep's, RunGraph's)
//! is written as a list of chunks: small heads (the gRPC length prefix, the other fields,
//! each TensorProto up to the length of its `tensor_content`) and, between them, the
//! tensors' own buffers, which HTTP/2 hands to the socket as they are. The reader decodes a
//! message straight from the HTTP/2 DATA chunks: bytes that lie within one chunk are sliced,
//! not copied.

use std::collections::VecDeque;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use ferroflow_core::proto::{
    NamedTensorProto, RecvTensorResponse, RunGraphRequest, RunGraphResponse, RunStepResponse, TensorProto,
};
use ferroflow_core::Status;

use crate::rpc_util::MAX_MESSAGE_SIZE;
use prost::encoding::{encode_key, encode_varint, encoded_len_varint, WireType};
use prost::Message;

/// `TensorProto.tensor_content`.
const TENSOR_CONTENT_FIELD: u32 = 4;
/// `NamedTensorProto.name` and `.tensor`.
const NAMED_NAME_FIELD: u32 = 1;
const NAMED_TENSOR_FIELD: u32 = 2;

/// Contents up to this size are copied into the surrounding head rather than sent as a
/// chunk of their own: HTTP/2 sends every chunk as a DATA frame, and h2 flushes the socket
/// before it queues the frame after one of 256 bytes or more, so a small tensor costs less
/// as a copy than as a frame (and a write) of its own.
const INLINE_MAX: usize = 32 << 10;

/// A message being written as chunks: `head` collects small fields; a tensor's content
/// ends the current head and follows it as a chunk of its own.
struct Parts {
    chunks: Vec<Bytes>,
    head: BytesMut,
}

impl Parts {
    fn new() -> Parts {
        Parts { chunks: Vec::new(), head: BytesMut::with_capacity(256) }
    }

    fn len_field(&mut self, field: u32, len: usize) {
        encode_key(field, WireType::LengthDelimited, &mut self.head);
        encode_varint(len as u64, &mut self.head);
    }

    /// `tensor` as length-delimited field `field`, its content last and not copied.
    fn tensor(&mut self, field: u32, mut tensor: TensorProto) {
        let content = std::mem::take(&mut tensor.tensor_content);
        self.len_field(field, tensor_len(&tensor, content.len()));
        tensor.encode_raw(&mut self.head);
        if !content.is_empty() {
            self.len_field(TENSOR_CONTENT_FIELD, content.len());
            if content.len() <= INLINE_MAX {
                self.head.put_slice(&content);
            } else {
                let head = self.head.split().freeze();
                self.chunks.push(head);
                self.chunks.push(content);
            }
        }
    }

    /// `named` as the repeated NamedTensorProto field `field`.
    fn named_tensors(&mut self, field: u32, named: Vec<NamedTensorProto>) {
        for nt in named {
            let tensor = nt.tensor.unwrap_or_default();
            let name_len =
                if nt.name.is_empty() { 0 } else { 1 + encoded_len_varint(nt.name.len() as u64) + nt.name.len() };
            let t_len = tensor_len(&tensor, tensor.tensor_content.len());
            self.len_field(field, name_len + 1 + encoded_len_varint(t_len as u64) + t_len);
            if !nt.name.is_empty() {
                self.len_field(NAMED_NAME_FIELD, nt.name.len());
                self.head.put_slice(nt.name.as_bytes());
            }
            self.tensor(NAMED_TENSOR_FIELD, tensor);
        }
    }

    /// The chunks behind a gRPC prefix (uncompressed, big-endian length), or
    /// ResourceExhausted past gRPC's 2 GiB message limit.
    fn finish(mut self, what: &str) -> Result<Vec<Bytes>, Status> {
        if !self.head.is_empty() {
            let head = self.head.split().freeze();
            self.chunks.push(head);
        }
        let n: usize = self.chunks.iter().map(|c| c.len()).sum();
        if n > MAX_MESSAGE_SIZE {
            return Err(Status::resource_exhausted(format!(
                "{what} of {n} bytes exceeds the {MAX_MESSAGE_SIZE}-byte gRPC message limit"
            )));
        }
        // The prefix and a small first head travel as one DATA frame.
        let mut chunks = self.chunks.into_iter().filter(|c| !c.is_empty()).peekable();
        let first_len = chunks.peek().map_or(0, |c| if c.len() <= INLINE_MAX { c.len() } else { 0 });
        let mut prefix = BytesMut::with_capacity(5 + first_len);
        prefix.put_u8(0);
        prefix.put_u32(n as u32);
        if first_len > 0 {
            if let Some(c) = chunks.next() {
                prefix.put_slice(&c);
            }
        }
        let mut out = vec![prefix.freeze()];
        out.extend(chunks);
        Ok(out)
    }
}

/// The encoded length of `tensor` (whose content was taken out) with `content` bytes of
/// content.
fn tensor_len(tensor: &TensorProto, content: usize) -> usize {
    let without = if tensor.tensor_content.is_empty() {
        tensor.encoded_len()
    } else {
        tensor.encoded_len() - 1 - encoded_len_varint(tensor.tensor_content.len() as u64) - tensor.tensor_content.len()
    };
    without + if content == 0 { 0 } else { 1 + encoded_len_varint(content as u64) + content }
}

/// RecvTensorResponse as gRPC-framed chunks (field 1 is the tensor).
pub(crate) fn encode_recv_tensor(mut resp: RecvTensorResponse) -> Result<Vec<Bytes>, Status> {
    let tensor = resp.tensor.take().unwrap_or_default();
    let mut p = Parts::new();
    resp.encode_raw(&mut p.head);
    p.tensor(1, tensor);
    p.finish("RecvTensorResponse")
}

/// `msg` (whose tensors were taken out) followed by `tensors` as its repeated
/// NamedTensorProto field `field`, as gRPC-framed chunks; `what` names it in errors.
fn encode_with_named<M: Message>(
    msg: &M,
    field: u32,
    tensors: Vec<NamedTensorProto>,
    what: &str,
) -> Result<Vec<Bytes>, Status> {
    let mut p = Parts::new();
    msg.encode_raw(&mut p.head);
    p.named_tensors(field, tensors);
    p.finish(what)
}

/// RunStepResponse as gRPC-framed chunks (field 1 is the fetched tensors).
pub fn encode_run_step(mut resp: RunStepResponse) -> Result<Vec<Bytes>, Status> {
    let tensors = std::mem::take(&mut resp.tensor);
    encode_with_named(&resp, 1, tensors, "RunStepResponse")
}

/// RunGraphResponse as gRPC-framed chunks (field 1 is the tensors returned to the caller).
pub(crate) fn encode_run_graph(mut resp: RunGraphResponse) -> Result<Vec<Bytes>, Status> {
    let tensors = std::mem::take(&mut resp.recv);
    encode_with_named(&resp, 1, tensors, "RunGraphResponse")
}

/// RunGraphRequest as gRPC-framed chunks (field 3 is the tensors fed to the partition).
pub(crate) fn encode_run_graph_request(mut req: RunGraphRequest) -> Result<Vec<Bytes>, Status> {
    let tensors = std::mem::take(&mut req.send);
    encode_with_named(&req, 3, tensors, "RunGraphRequest")
}

/// A gRPC request or response body received as HTTP/2 DATA chunks.
#[derive(Default)]
pub(crate) struct Chunks {
    bufs: VecDeque<Bytes>,
    len: usize,
}

impl Chunks {
    /// Appends a chunk (empty ones are dropped).
    pub(crate) fn push(&mut self, b: Bytes) {
        if !b.is_empty() {
            self.len += b.len();
            self.bufs.push_back(b);
        }
    }

    /// Bytes held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Copies the first bytes into `out`; false (and `out` partly written) if fewer arrived.
    pub(crate) fn peek(&self, out: &mut [u8]) -> bool {
        let mut at = 0;
        for b in &self.bufs {
            if at == out.len() {
                break;
            }
            let n = b.len().min(out.len() - at);
            out[at..at + n].copy_from_slice(&b[..n]);
            at += n;
        }
        at == out.len()
    }

    /// Splits off the next whole gRPC message (its 5-byte prefix and payload) if all of it
    /// has arrived, without copying: a body that carries a stream of messages is read one
    /// message at a time. `None` until the message is complete.
    pub(crate) fn take_message(&mut self, what: &str) -> Result<Option<Chunks>, Status> {
        if self.len < 5 {
            return Ok(None);
        }
        let mut prefix = [0u8; 5];
        self.peek(&mut prefix);
        let n = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
        if n > MAX_MESSAGE_SIZE {
            return Err(Status::resource_exhausted(format!(
                "{what}: a message of {n} bytes exceeds the {MAX_MESSAGE_SIZE}-byte limit"
            )));
        }
        if self.len < 5 + n {
            return Ok(None);
        }
        let mut out = Chunks::default();
        let mut want = 5 + n;
        while want > 0 {
            let Some(front) = self.bufs.front_mut() else { break };
            if front.len() <= want {
                want -= front.len();
                self.len -= front.len();
                let b = self.bufs.pop_front().unwrap_or_default();
                out.push(b);
            } else {
                out.push(front.split_to(want));
                self.len -= want;
                want = 0;
            }
        }
        Ok(Some(out))
    }

    /// Decodes the one gRPC message the body must hold: a 5-byte prefix (compressed flag,
    /// big-endian length) and exactly that many bytes, gzip- or deflate-compressed when the
    /// flag is 1. `what` names the message in errors.
    pub(crate) fn into_message<M: Message + Default>(mut self, what: &str) -> Result<M, Status> {
        if self.len < 5 {
            return Err(Status::internal(format!(
                "{what}: the gRPC body has {} bytes, fewer than its 5-byte message prefix",
                self.len
            )));
        }
        let compressed = self.get_u8();
        let n = self.get_u32() as usize;
        if compressed > 1 {
            return Err(Status::internal(format!("{what}: the gRPC prefix has compressed-flag {compressed}")));
        }
        if n != self.len {
            return Err(Status::internal(format!(
                "{what}: the gRPC prefix announces {n} bytes but the body holds {}",
                self.len
            )));
        }
        if compressed == 1 {
            let plain = crate::grpc_compression::decompress(self, what)?;
            return M::decode(plain).map_err(|e| Status::internal(format!("{what}: malformed protobuf: {e}")));
        }
        M::decode(self).map_err(|e| Status::internal(format!("{what}: malformed protobuf: {e}")))
    }
}

impl Buf for Chunks {
    fn remaining(&self) -> usize {
        self.len
    }

    fn chunk(&self) -> &[u8] {
        self.bufs.front().map_or(&[], |b| b.as_ref())
    }

    fn advance(&mut self, mut cnt: usize) {
        assert!(cnt <= self.len, "advance past the end of the body");
        self.len -= cnt;
        while cnt > 0 {
            let Some(front) = self.bufs.front_mut() else { return };
            if cnt < front.len() {
                front.advance(cnt);
                return;
            }
            cnt -= front.len();
            self.bufs.pop_front();
        }
    }

    /// Bytes within the first chunk are a slice of it; only bytes spanning chunks are copied.
    fn copy_to_bytes(&mut self, len: usize) -> Bytes {
        assert!(len <= self.len, "copy_to_bytes past the end of the body");
        if let Some(front) = self.bufs.front_mut() {
            if len <= front.len() {
                let out = front.split_to(len);
                if front.is_empty() {
                    self.bufs.pop_front();
                }
                self.len -= len;
                return out;
            }
        }
        let mut out = BytesMut::with_capacity(len);
        out.put((&mut *self).take(len));
        out.freeze()
    }
}

#[cfg(test)]
#[path = "tensor_wire_tests.rs"]
mod tests;
