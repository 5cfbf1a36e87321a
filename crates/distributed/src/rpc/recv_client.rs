//! The caller's side of RecvTensor over gRPC (`RemoteWorker`'s): TensorFlow's call for one tensor, and ferroflow's
//! batched call (see `rpc::recv_tensors`) that fetches several tensors of a step from one
//! peer, each delivered as soon as its message has arrived. Both read the tensors with
//! `tensor_stream`, a large content straight into its tensor while it arrives.

use std::time::Instant;

use bytes::Bytes;
use ferroflow_core::proto::RecvTensorRequest;
use ferroflow_core::{Status, Tensor};
use http_body_util::BodyExt;
use tonic::body::Body;
use tonic::transport::Channel;

use crate::metrics::PeerBytes;
use crate::pacing::InPacer;
use crate::raw_grpc::{framed, past_deadline, start, trailer_status, Call};
use crate::rpc::recv_tensor::PATH as RECV_TENSOR;
use crate::rpc::recv_tensors::{index_of, PATH};
use crate::tensor_stream::RecvTensorReader;

/// Fetches `reqs` from the peer behind `channel` in one call, handing each tensor (and
/// its is_dead flag) to `deliver` with the index of its request as it arrives. Returns
/// the call's status once the stream ended: an error leaves the undelivered requests to
/// the caller. A peer that does not serve the batched call answers UNIMPLEMENTED before
/// delivering anything. The bytes each way are counted for `peer`.
pub(crate) async fn recv_tensors(
    channel: Channel,
    reqs: &[RecvTensorRequest],
    deadline: Instant,
    what: &str,
    peer: &PeerBytes,
    deliver: &mut (dyn FnMut(usize, Result<(Tensor, bool), Status>) + Send),
) -> Result<(), Status> {
    let frames: Vec<Bytes> = reqs.iter().map(framed).collect();
    let (_, mut body) = start(Call { channel, path: PATH, deadline, what, peer }, frames).await?;
    let mut reader = RecvTensorReader::default();
    let mut pacer = InPacer::default();
    loop {
        pacer.before_read(deadline).await;
        let frame = match next_frame(&mut body, deadline, what, peer).await? {
            Frame::Data(data) => data,
            Frame::Trailers(t) => return trailer_status(&t, what),
            Frame::End => break,
        };
        pacer.read(frame.len());
        reader.push(frame);
        while let Some(m) = reader.next(what)? {
            pacer.message_done();
            let index = index_of(m.transport_options.as_ref()).filter(|&i| i < reqs.len()).ok_or_else(|| {
                Status::internal(format!(
                    "{what}: a streamed tensor does not name one of the call's {} requests",
                    reqs.len()
                ))
            })?;
            let r = m
                .tensor
                .map(|t| (t, m.is_dead))
                .map_err(|e| e.context(format!("{what}: tensor '{}'", reqs[index].rendezvous_key)));
            deliver(index, r);
        }
    }
    Err(Status::internal(format!("{what}: the stream ended without a grpc-status")))
}

/// One RecvTensor call (TensorFlow's, served by every peer): the tensor and its is_dead
/// flag, its content read into the tensor as it arrives. The bytes each way are counted
/// for `peer`.
pub(crate) async fn recv_tensor(
    channel: Channel,
    req: &RecvTensorRequest,
    deadline: Instant,
    what: &str,
    peer: &PeerBytes,
) -> Result<(Tensor, bool), Status> {
    let (_, mut body) = start(Call { channel, path: RECV_TENSOR, deadline, what, peer }, vec![framed(req)]).await?;
    let mut reader = RecvTensorReader::default();
    let mut got = None;
    let mut ended = false;
    let mut pacer = InPacer::default();
    loop {
        pacer.before_read(deadline).await;
        let frame = match next_frame(&mut body, deadline, what, peer).await? {
            Frame::Data(data) => data,
            Frame::Trailers(t) => {
                trailer_status(&t, what)?;
                ended = true;
                break;
            }
            Frame::End => break,
        };
        pacer.read(frame.len());
        reader.push(frame);
        if let Some(m) = reader.next(what)? {
            pacer.message_done();
            if got.is_some() {
                return Err(Status::internal(format!("{what}: the response holds more than one message")));
            }
            got = Some(m);
        }
    }
    if !ended {
        return Err(Status::internal(format!("{what}: the response ended without a grpc-status")));
    }
    match got {
        Some(m) if !reader.has_pending() => Ok((m.tensor.map_err(|e| e.context(what))?, m.is_dead)),
        Some(_) => Err(Status::internal(format!("{what}: bytes follow the response message"))),
        None => Err(Status::internal(format!("{what}: the response has no complete message"))),
    }
}

/// What a response body yields next.
enum Frame {
    Data(Bytes),
    Trailers(http::HeaderMap),
    End,
}

/// The next DATA chunk (counted as received from `peer`) or the trailers of `body` (other
/// frames are skipped); a failed read is Unavailable, or DeadlineExceeded once the call's
/// deadline passed.
async fn next_frame(body: &mut Body, deadline: Instant, what: &str, peer: &PeerBytes) -> Result<Frame, Status> {
    loop {
        let Some(frame) = body.frame().await else { return Ok(Frame::End) };
        let frame = frame.map_err(|e| {
            past_deadline(Status::unavailable(format!("{what}: reading the response failed: {e}")), deadline, what)
        })?;
        match frame.into_data() {
            Ok(data) => {
                peer.received(data.len());
                return Ok(Frame::Data(data));
            }
            Err(frame) => {
                if let Ok(t) = frame.into_trailers() {
                    return Ok(Frame::Trailers(t));
                }
            }
        }
    }
}
