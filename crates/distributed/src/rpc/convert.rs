//! The proto ⇄ core conversions of the calls that carry tensors, written once: the RPC
//! handlers decode a request into the core's types and encode the reply; the remote
//! clients do the reverse. Encoding a tensor shares its buffer (no copy); decoding
//! copies it once and checks it against its declared dtype and shape.

use ferroflow_core::proto::{NamedTensorProto, RunGraphRequest, RunGraphResponse, RunStepRequest, RunStepResponse};
use ferroflow_core::{Status, Tensor};

use super::status_in_body::StatusInBody;
use crate::master_api::{RunStepCall, RunStepReply};
use crate::worker_api::{RunGraphCall, RunGraphReply};

/// Named tensors as protos.
pub(crate) fn to_named(tensors: Vec<(String, Tensor)>) -> Vec<NamedTensorProto> {
    tensors.into_iter().map(|(name, t)| NamedTensorProto { tensor: Some(t.to_proto()), name }).collect()
}

/// Named protos as tensors; an invalid one is named with `what` ("RunGraph: fed tensor").
pub(crate) fn from_named(named: Vec<NamedTensorProto>, what: &str) -> Result<Vec<(String, Tensor)>, Status> {
    named
        .into_iter()
        .map(|nt| {
            let t = Tensor::from_proto(nt.tensor.as_ref().unwrap_or(&Default::default()))
                .map_err(|e| e.context(format!("{what} '{}'", nt.name)))?;
            Ok((nt.name, t))
        })
        .collect()
}

impl RunGraphCall {
    /// A received request, its fed tensors decoded (`task` names this worker in errors).
    pub(crate) fn from_proto(mut req: RunGraphRequest, task: &str) -> Result<RunGraphCall, Status> {
        let send = from_named(std::mem::take(&mut req.send), &format!("RunGraph on {task}: fed tensor"))?;
        Ok(RunGraphCall { req, send })
    }

    /// The request to send.
    pub(crate) fn into_proto(self) -> RunGraphRequest {
        RunGraphRequest { send: to_named(self.send), ..self.req }
    }
}

impl RunGraphReply {
    /// The reply to send.
    pub(crate) fn into_proto(self) -> RunGraphResponse {
        RunGraphResponse { recv: to_named(self.recv), step_stats: self.step_stats, ..Default::default() }
    }

    /// A received reply (its status already checked), its tensors decoded.
    pub(crate) fn from_proto(resp: RunGraphResponse, what: &str) -> Result<RunGraphReply, Status> {
        Ok(RunGraphReply {
            recv: from_named(resp.recv, &format!("{what}: returned tensor"))?,
            step_stats: resp.step_stats,
        })
    }
}

impl RunStepCall {
    /// A received request, its fed tensors decoded.
    pub(crate) fn from_proto(mut req: RunStepRequest) -> Result<RunStepCall, Status> {
        let feeds = from_named(std::mem::take(&mut req.feed), "RunStep: fed tensor")?;
        Ok(RunStepCall { req, feeds })
    }

    /// The request to send.
    pub(crate) fn into_proto(self) -> RunStepRequest {
        RunStepRequest { feed: to_named(self.feeds), ..self.req }
    }
}

impl RunStepReply {
    /// The reply to send.
    pub(crate) fn into_proto(self) -> RunStepResponse {
        RunStepResponse { tensor: to_named(self.tensors), metadata: self.metadata, ..Default::default() }
    }

    /// A received reply, an error in its body returned as the error, its tensors decoded.
    pub(crate) fn from_proto(resp: RunStepResponse, what: &str) -> Result<RunStepReply, Status> {
        let resp = resp.into_result()?;
        Ok(RunStepReply {
            tensors: from_named(resp.tensor, &format!("{what}: fetched tensor"))?,
            metadata: resp.metadata,
        })
    }
}

/// The `type_url` of a RecvBuf reply's bytes.
const RECV_BUF_EXTRA: &str = "type.googleapis.com/tensorflow.RecvBufRespExtra";

/// A RecvBuf reply carrying `bytes` in pieces of at most `piece` bytes (TensorFlow's
/// `recv_buf_max_chunk`), as TensorFlow's workers send them.
pub(crate) fn recv_buf_response(bytes: Vec<u8>, piece: usize) -> ferroflow_core::proto::RecvBufResponse {
    use prost::Message;
    let tensor_content =
        if bytes.len() <= piece { vec![bytes] } else { bytes.chunks(piece.max(1)).map(<[u8]>::to_vec).collect() };
    let extra = ferroflow_core::proto::RecvBufRespExtra { tensor_content };
    ferroflow_core::proto::RecvBufResponse {
        transport_options: Some(ferroflow_core::proto::Any {
            type_url: RECV_BUF_EXTRA.into(),
            value: extra.encode_to_vec(),
        }),
        send_start_micros: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0),
        ..Default::default()
    }
}

/// The bytes of a RecvBuf reply, which must be `want` of them.
pub(crate) fn recv_buf_bytes(resp: ferroflow_core::proto::RecvBufResponse, want: i64) -> Result<Vec<u8>, Status> {
    use prost::Message;
    let Some(any) = resp.transport_options else {
        return Err(Status::internal("RecvBufResponse carries no tensor (no transport_options)"));
    };
    if any.type_url != RECV_BUF_EXTRA {
        return Err(Status::internal(format!(
            "RecvBufResponse carries a '{}', expected {RECV_BUF_EXTRA}",
            any.type_url
        )));
    }
    let extra = ferroflow_core::proto::RecvBufRespExtra::decode(any.value.as_slice())
        .map_err(|e| Status::internal(format!("RecvBufResponse: bad RecvBufRespExtra: {e}")))?;
    let n: usize = extra.tensor_content.iter().map(Vec::len).sum();
    if n as i64 != want {
        return Err(Status::internal(format!(
            "Tensor Size Mismatch: RecvBufResponse returned {n} bytes, expected: {want}"
        )));
    }
    Ok(extra.tensor_content.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_graph_calls_and_replies_round_trip_through_their_protos() {
        let call = RunGraphCall {
            req: RunGraphRequest { step_id: 7, recv_key: vec!["k".into()], ..Default::default() },
            send: vec![("a".into(), Tensor::new(vec![2], vec![1.0f32, 2.0]).unwrap())],
        };
        let back = RunGraphCall::from_proto(call.into_proto(), "/job:w/replica:0/task:0").unwrap();
        assert_eq!(
            (back.req.step_id, back.req.recv_key.as_slice(), back.req.send.len()),
            (7, &["k".to_string()][..], 0)
        );
        assert_eq!(back.send[0].0, "a");
        assert_eq!(back.send[0].1.as_slice::<f32>().unwrap(), &[1.0, 2.0]);
        let reply = RunGraphReply { recv: vec![("r".into(), Tensor::scalar(3i32))], step_stats: None };
        let back = RunGraphReply::from_proto(reply.into_proto(), "RunGraph").unwrap();
        assert_eq!(back.recv[0].1.scalar_value::<i32>().unwrap(), 3);
    }

    #[test]
    fn a_bad_fed_tensor_is_named() {
        let bad = NamedTensorProto { name: "x".into(), tensor: Some(Default::default()) };
        let req = RunGraphRequest { send: vec![bad], ..Default::default() };
        let e = RunGraphCall::from_proto(req, "/job:w/replica:0/task:1").unwrap_err();
        assert!(e.message.contains("RunGraph on /job:w/replica:0/task:1: fed tensor 'x'"), "{e}");
    }

    #[test]
    fn recv_buf_bytes_in_pieces() {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        let resp = recv_buf_response(bytes.clone(), 4096);
        assert_eq!(recv_buf_bytes(resp.clone(), 10_000).unwrap(), bytes);
        let e = recv_buf_bytes(resp, 9_999).unwrap_err();
        assert_eq!(e.message, "Tensor Size Mismatch: RecvBufResponse returned 10000 bytes, expected: 9999");
        let one = recv_buf_response(vec![1, 2], usize::MAX);
        assert_eq!(recv_buf_bytes(one, 2).unwrap(), [1, 2]);
        assert!(recv_buf_bytes(Default::default(), 0).is_err());
    }
}
