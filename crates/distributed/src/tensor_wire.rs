//! RecvTensor's response on the wire without copying the tensor (TensorFlow does the same
//! in its `grpc_tensor_coding`): the gRPC message is written as a small head (the length
//! prefix, `is_dead`, `send_start_micros` and the TensorProto up to the length of
//! `tensor_content`) followed by the tensor's own buffer, which HTTP/2 hands to the socket
//! as it is. The reader decodes the response straight from the HTTP/2 DATA chunks: bytes
//! that lie within one chunk are sliced, not copied.

use std::collections::VecDeque;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use ferroflow_core::proto::RecvTensorResponse;
use ferroflow_core::Status;
use prost::encoding::{encode_key, encode_varint, encoded_len_varint, WireType};
use prost::Message;

/// `RecvTensorResponse.tensor` (field 1) and `TensorProto.tensor_content` (field 4).
const RESPONSE_TENSOR_FIELD: u32 = 1;
const TENSOR_CONTENT_FIELD: u32 = 4;

/// The gRPC-framed response as (head, tensor content); the content is the tensor's buffer
/// itself (no copy) and may be empty.
pub(crate) fn encode_response(mut resp: RecvTensorResponse) -> (Bytes, Bytes) {
    let mut tensor = resp.tensor.take().unwrap_or_default();
    let content = std::mem::take(&mut tensor.tensor_content);
    let content_field =
        if content.is_empty() { 0 } else { 1 + encoded_len_varint(content.len() as u64) + content.len() };
    let tensor_len = tensor.encoded_len() + content_field;
    let rest_len = resp.encoded_len();
    let message_len = rest_len + 1 + encoded_len_varint(tensor_len as u64) + tensor_len;
    let mut head = BytesMut::with_capacity(5 + message_len - content.len());
    head.put_u8(0);
    head.put_u32(message_len as u32);
    // Fields may come in any order; the content goes last so that it is the tail.
    resp.encode_raw(&mut head);
    encode_key(RESPONSE_TENSOR_FIELD, WireType::LengthDelimited, &mut head);
    encode_varint(tensor_len as u64, &mut head);
    tensor.encode_raw(&mut head);
    if !content.is_empty() {
        encode_key(TENSOR_CONTENT_FIELD, WireType::LengthDelimited, &mut head);
        encode_varint(content.len() as u64, &mut head);
    }
    (head.freeze(), content)
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

    /// Decodes the one gRPC message the body must hold: a 5-byte prefix (uncompressed flag,
    /// big-endian length) and exactly that many bytes. `what` names the message in errors.
    pub(crate) fn into_message<M: Message + Default>(mut self, what: &str) -> Result<M, Status> {
        if self.len < 5 {
            return Err(Status::internal(format!(
                "{what}: the gRPC body has {} bytes, fewer than its 5-byte message prefix",
                self.len
            )));
        }
        let compressed = self.get_u8();
        let n = self.get_u32() as usize;
        if compressed != 0 {
            return Err(Status::unimplemented(format!(
                "{what}: the message is compressed (flag {compressed}); ferroflow accepts uncompressed messages only"
            )));
        }
        if n != self.len {
            return Err(Status::internal(format!(
                "{what}: the gRPC prefix announces {n} bytes but the body holds {}",
                self.len
            )));
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
        let (head, content) = encode_response(resp);
        for cut in [1, 3, 7, 64, 10_000] {
            let got: RecvTensorResponse =
                chunks_of(&[head.clone(), content.clone()], cut).into_message("test").unwrap();
            assert_eq!(got, want, "chunks of {cut} bytes");
            assert_eq!(Tensor::from_proto(got.tensor.as_ref().unwrap()).unwrap(), t);
        }
    }

    #[test]
    fn content_within_one_chunk_is_not_copied() {
        let t = Tensor::new(vec![1000], vec![1.25f32; 1000]).unwrap();
        let (head, content) = encode_response(RecvTensorResponse { tensor: Some(t.to_proto()), ..Default::default() });
        let mut c = Chunks::default();
        c.push(head);
        c.push(content.clone());
        let got: RecvTensorResponse = c.into_message("test").unwrap();
        let got_content = &got.tensor.unwrap().tensor_content;
        assert_eq!(got_content.as_ptr(), content.as_ptr(), "the content must be a slice of the received chunk");
    }

    #[test]
    fn string_and_empty_tensors_round_trip() {
        let s = Tensor::new(vec![2], vec![b"ab".to_vec(), b"".to_vec()]).unwrap();
        for t in [s, Tensor::new(vec![0], Vec::<f32>::new()).unwrap()] {
            let resp = RecvTensorResponse { tensor: Some(t.to_proto()), ..Default::default() };
            let (head, content) = encode_response(resp.clone());
            let got: RecvTensorResponse = chunks_of(&[head, content], 2).into_message("test").unwrap();
            assert_eq!(got, resp);
        }
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
        compressed.push(Bytes::from_static(&[1, 0, 0, 0, 0]));
        let e = compressed.into_message::<RecvTensorResponse>("r").unwrap_err();
        assert_eq!(e.code, ferroflow_core::Code::Unimplemented);
        let mut garbage = Chunks::default();
        garbage.push(Bytes::from_static(&[0, 0, 0, 0, 3, 0x0a, 0x05, 0x01]));
        assert!(garbage.into_message::<RecvTensorResponse>("r").unwrap_err().message.contains("malformed"));
    }
}
