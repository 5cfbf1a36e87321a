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
mod tests {
    use ferroflow_core::Tensor;

    use super::*;

    fn chunks_of(parts: &[Bytes], cut: usize) -> Chunks {
        let mut all = BytesMut::new();
        for p in parts {
            all.extend_from_slice(p);
        }
        let all = all.freeze();
        let mut c = Chunks::default();
        let mut i = 0;
        while i < all.len() {
            let j = (i + cut).min(all.len());
            c.push(all.slice(i..j));
            i = j;
        }
        c
    }

    #[test]
    fn encoded_response_decodes_with_prost_in_any_chunking() {
        let t = Tensor::new(vec![3, 5], (0..15).map(|i| i as f32 * 0.5).collect::<Vec<_>>()).unwrap();
        let resp = RecvTensorResponse {
            tensor: Some(t.to_proto()),
            is_dead: true,
            send_start_micros: 77,
            ..Default::default()
        };
        let want = resp.clone();
        let parts = encode_recv_tensor(resp).unwrap();
        for cut in [1, 3, 7, 64, 10_000] {
            let got: RecvTensorResponse = chunks_of(&parts, cut).into_message("test").unwrap();
            assert_eq!(got, want, "chunks of {cut} bytes");
            assert_eq!(Tensor::from_proto(got.tensor.as_ref().unwrap()).unwrap(), t);
        }
    }

    #[test]
    fn content_within_one_chunk_is_not_copied() {
        let t = Tensor::new(vec![10_000], vec![1.25f32; 10_000]).unwrap();
        let parts =
            encode_recv_tensor(RecvTensorResponse { tensor: Some(t.to_proto()), ..Default::default() }).unwrap();
        let content = parts.iter().max_by_key(|p| p.len()).unwrap().clone();
        assert_eq!(content.len(), 40_000);
        let mut c = Chunks::default();
        for p in parts {
            c.push(p);
        }
        let got: RecvTensorResponse = c.into_message("test").unwrap();
        let got_content = &got.tensor.unwrap().tensor_content;
        assert_eq!(got_content.as_ptr(), content.as_ptr(), "the content must be a slice of the received chunk");
    }

    #[test]
    fn string_and_empty_tensors_round_trip() {
        let s = Tensor::new(vec![2], vec![b"ab".to_vec(), b"".to_vec()]).unwrap();
        for t in [s, Tensor::new(vec![0], Vec::<f32>::new()).unwrap()] {
            let resp = RecvTensorResponse { tensor: Some(t.to_proto()), ..Default::default() };
            let got: RecvTensorResponse =
                chunks_of(&encode_recv_tensor(resp.clone()).unwrap(), 2).into_message("test").unwrap();
            assert_eq!(got, resp);
        }
    }

    #[test]
    fn run_step_responses_decode_with_prost() {
        let a = Tensor::new(vec![2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let b = Tensor::new(vec![2], vec![b"x".to_vec(), b"yz".to_vec()]).unwrap();
        let named = vec![
            NamedTensorProto { name: "a:0".into(), tensor: Some(a.to_proto()) },
            NamedTensorProto { name: String::new(), tensor: Some(Tensor::scalar(7i64).to_proto()) },
            NamedTensorProto { name: "b:0".into(), tensor: Some(b.to_proto()) },
            NamedTensorProto { name: "none".into(), tensor: None },
        ];
        let rs = RunStepResponse {
            tensor: named.clone(),
            status_code: 3,
            status_error_message: "m".into(),
            ..Default::default()
        };
        for cut in [1, 5, 1000] {
            let got: RunStepResponse =
                chunks_of(&encode_run_step(rs.clone()).unwrap(), cut).into_message("test").unwrap();
            // A missing tensor is written as an empty one (the same on the wire for proto3).
            let mut want = rs.clone();
            want.tensor[3].tensor = Some(TensorProto::default());
            assert_eq!(got, want);
        }
        let got: RunStepResponse = chunks_of(&encode_run_step(rs).unwrap(), 4).into_message("test").unwrap();
        assert_eq!(Tensor::from_proto(got.tensor[0].tensor.as_ref().unwrap()).unwrap(), a);
        assert_eq!(Tensor::from_proto(got.tensor[2].tensor.as_ref().unwrap()).unwrap(), b);
    }

    #[test]
    fn run_graph_messages_decode_with_prost_and_keep_their_other_fields() {
        let a = Tensor::new(vec![4], vec![0.5f32, -1.0, 2.0, 3.5]).unwrap();
        let b = Tensor::new(vec![1], vec![b"s".to_vec()]).unwrap();
        let named = vec![
            NamedTensorProto { name: "k1".into(), tensor: Some(a.to_proto()) },
            NamedTensorProto { name: "k2".into(), tensor: Some(b.to_proto()) },
        ];
        let resp = RunGraphResponse {
            recv: named.clone(),
            status_code: 9,
            status_error_message: "why".into(),
            ..Default::default()
        };
        let req = RunGraphRequest {
            session_handle: "s".into(),
            graph_handle: "g".into(),
            step_id: 42,
            send: named,
            recv_key: vec!["r1".into(), "r2".into()],
            store_errors_in_response_body: true,
            request_id: -7,
            ..Default::default()
        };
        for cut in [1, 3, 1000] {
            let got: RunGraphResponse =
                chunks_of(&encode_run_graph(resp.clone()).unwrap(), cut).into_message("test").unwrap();
            assert_eq!(got, resp, "response, chunks of {cut}");
            let got: RunGraphRequest =
                chunks_of(&encode_run_graph_request(req.clone()).unwrap(), cut).into_message("test").unwrap();
            assert_eq!(got, req, "request, chunks of {cut}");
            assert_eq!(Tensor::from_proto(got.send[0].tensor.as_ref().unwrap()).unwrap(), a);
        }
    }

    #[test]
    fn run_graph_tensors_travel_as_their_own_buffers() {
        let t = Tensor::new(vec![10_000], vec![3.0f32; 10_000]).unwrap();
        let proto = t.to_proto();
        let content = proto.tensor_content.clone();
        let resp = RunGraphResponse {
            recv: vec![NamedTensorProto { name: "k".into(), tensor: Some(proto.clone()) }],
            ..Default::default()
        };
        let req = RunGraphRequest {
            send: vec![NamedTensorProto { name: "k".into(), tensor: Some(proto) }],
            ..Default::default()
        };
        for parts in [encode_run_graph(resp).unwrap(), encode_run_graph_request(req).unwrap()] {
            assert!(
                parts.iter().any(|p| p.as_ptr() == content.as_ptr() && p.len() == content.len()),
                "the tensor's buffer must be one of the chunks, not copied"
            );
        }
    }

    #[test]
    fn small_tensors_and_the_prefix_travel_in_one_chunk() {
        let small = Tensor::new(vec![100], vec![2.0f32; 100]).unwrap();
        let resp = RunGraphResponse {
            recv: vec![
                NamedTensorProto { name: "a".into(), tensor: Some(small.to_proto()) },
                NamedTensorProto { name: "b".into(), tensor: Some(Tensor::scalar(7i64).to_proto()) },
            ],
            ..Default::default()
        };
        let parts = encode_run_graph(resp.clone()).unwrap();
        assert_eq!(parts.len(), 1, "one DATA frame for a message of small tensors");
        let got: RunGraphResponse = chunks_of(&parts, 7).into_message("test").unwrap();
        assert_eq!(got, resp);
        // A large one still goes as its own buffer, after a head that carries the prefix.
        let big = Tensor::new(vec![10_000], vec![1.0f32; 10_000]).unwrap();
        let resp = RunGraphResponse {
            recv: vec![NamedTensorProto { name: "big".into(), tensor: Some(big.to_proto()) }],
            ..Default::default()
        };
        let parts = encode_run_graph(resp.clone()).unwrap();
        assert_eq!(parts.iter().map(|p| p.len() >= 40_000).collect::<Vec<_>>(), vec![false, true]);
        assert_eq!(chunks_of(&parts, 1000).into_message::<RunGraphResponse>("test").unwrap(), resp);
    }

    #[test]
    fn a_stream_of_messages_splits_at_every_chunking() {
        let msgs: Vec<RecvTensorResponse> = (0..3)
            .map(|i| RecvTensorResponse {
                tensor: Some(Tensor::new(vec![5 + i], vec![i as f32; 5 + i]).unwrap().to_proto()),
                is_dead: i == 1,
                ..Default::default()
            })
            .collect();
        let mut all = BytesMut::new();
        for m in &msgs {
            for p in encode_recv_tensor(m.clone()).unwrap() {
                all.extend_from_slice(&p);
            }
        }
        let all = all.freeze();
        for cut in 1..=all.len() {
            let mut body = Chunks::default();
            let mut got = Vec::new();
            for piece in all.chunks(cut) {
                body.push(Bytes::copy_from_slice(piece));
                while let Some(m) = body.take_message("test").unwrap() {
                    got.push(m.into_message::<RecvTensorResponse>("test").unwrap());
                }
            }
            assert_eq!(got, msgs, "cut {cut}");
            assert_eq!(body.remaining(), 0);
        }
    }

    #[test]
    fn gzip_compressed_messages_decode() {
        use std::io::Write;
        let resp = RecvTensorResponse { is_dead: true, send_start_micros: 42, ..Default::default() };
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&resp.encode_to_vec()).unwrap();
        let z = gz.finish().unwrap();
        let mut body = vec![1u8];
        body.extend((z.len() as u32).to_be_bytes());
        body.extend(z);
        let mut c = Chunks::default();
        c.push(Bytes::from(body));
        assert_eq!(c.into_message::<RecvTensorResponse>("t").unwrap(), resp);
    }

    #[test]
    fn bad_bodies_are_errors_not_panics() {
        let mut short = Chunks::default();
        short.push(Bytes::from_static(&[0, 0, 0]));
        assert!(short.into_message::<RecvTensorResponse>("r").unwrap_err().message.contains("5-byte"));
        let mut wrong_len = Chunks::default();
        wrong_len.push(Bytes::from_static(&[0, 0, 0, 0, 9, 1]));
        assert!(wrong_len.into_message::<RecvTensorResponse>("r").unwrap_err().message.contains("announces 9"));
        let mut compressed = Chunks::default();
        compressed.push(Bytes::from_static(&[1, 0, 0, 0, 2, 7, 7]));
        let e = compressed.into_message::<RecvTensorResponse>("r").unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::Internal, "{}", e.message);
        let mut flag = Chunks::default();
        flag.push(Bytes::from_static(&[2, 0, 0, 0, 0]));
        assert!(flag.into_message::<RecvTensorResponse>("r").unwrap_err().message.contains("flag 2"));
        let mut garbage = Chunks::default();
        garbage.push(Bytes::from_static(&[0, 0, 0, 0, 3, 0x0a, 0x05, 0x01]));
        assert!(garbage.into_message::<RecvTensorResponse>("r").unwrap_err().message.contains("malformed"));
    }
}
