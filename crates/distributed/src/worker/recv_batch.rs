//! The caller's side of ferroflow's batched RecvTensor (see `recv_tensors_http`): one call
//! fetches several tensors of a step from one peer, each delivered as soon as its message
//! has arrived.

use std::time::Instant;

use bytes::Bytes;
use ferroflow_core::proto::{RecvTensorRequest, RecvTensorResponse};
use ferroflow_core::{Status, Tensor};
use http_body_util::BodyExt;
use tonic::transport::Channel;

use super::recv_tensors_http::{index_of, PATH};
use crate::grpc_raw::{framed, past_deadline, start, trailer_status};
use crate::tensor_wire::Chunks;

/// Fetches `reqs` from the peer behind `channel` in one call, handing each tensor (and
/// its is_dead flag) to `deliver` with the index of its request as it arrives. Returns
/// the call's status once the stream ended: an error leaves the undelivered requests to
/// the caller. A peer that does not serve the batched call answers UNIMPLEMENTED before
/// delivering anything.
pub(crate) async fn recv_tensors(
    channel: Channel,
    reqs: &[RecvTensorRequest],
    deadline: Instant,
    what: &str,
    deliver: &mut (dyn FnMut(usize, Result<(Tensor, bool), Status>) + Send),
) -> Result<(), Status> {
    let frames: Vec<Bytes> = reqs.iter().map(framed).collect();
    let mut body = start(channel, PATH, frames, deadline, what).await?;
    let mut chunks = Chunks::default();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            past_deadline(Status::unavailable(format!("{what}: reading the stream failed: {e}")), deadline, what)
        })?;
        let frame = match frame.into_data() {
            Ok(data) => data,
            Err(frame) => match frame.into_trailers() {
                Ok(t) => return trailer_status(&t, what),
                Err(_) => continue,
            },
        };
        chunks.push(frame);
        while let Some(m) = chunks.take_message(what)? {
            let resp: RecvTensorResponse = m.into_message(what)?;
            let index = index_of(resp.transport_options.as_ref()).filter(|&i| i < reqs.len()).ok_or_else(|| {
                Status::internal(format!(
                    "{what}: a streamed tensor does not name one of the call's {} requests",
                    reqs.len()
                ))
            })?;
            let proto = resp.tensor.unwrap_or_default();
            let r = Tensor::from_proto(&proto)
                .map(|t| (t, resp.is_dead))
                .map_err(|e| e.context(format!("{what}: tensor '{}'", reqs[index].rendezvous_key)));
            deliver(index, r);
        }
    }
    Err(Status::internal(format!("{what}: the stream ended without a grpc-status")))
}
