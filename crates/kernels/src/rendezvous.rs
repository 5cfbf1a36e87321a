//! The rendezvous interface: where `_Send` leaves a tensor and `_Recv` picks it up.
//! The local implementation lives in the runtime; the remote one (RecvTensor) in
//! distributed. A step's rendezvous is also its way to the other tasks of the cluster, so
//! it runs `RemoteCall`s whose target is another task.

use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::FunctionDefLibrary;
use ferroflow_core::{DataType, Status, Tensor};

use crate::CancelToken;

/// A function to run on another task (`RemoteCall`).
pub struct FunctionCall {
    /// The device to run on, as the `RemoteCall`'s `target` input named it.
    pub target: String,
    /// The function's name in `library`.
    pub function: String,
    /// The caller's function library (the function and what it calls).
    pub library: Arc<FunctionDefLibrary>,
    /// The arguments.
    pub args: Vec<Tensor>,
    /// The result types.
    pub tout: Vec<DataType>,
    /// The caller's step cancellation: the remote run ends with it.
    pub cancel: CancelToken,
    /// The caller's step deadline.
    pub deadline: Option<Instant>,
}

/// Called once with a function's results, or an error.
pub type FunctionDone = Box<dyn FnOnce(Result<Vec<Tensor>, Status>) + Send>;

/// Called once with the received tensor and its `is_dead` flag, or an error.
pub type RecvCallback = Box<dyn FnOnce(Result<(Tensor, bool), Status>) + Send>;

/// A per-step exchange of tensors by rendezvous key.
pub trait Rendezvous: Send + Sync {
    /// Delivers a tensor under `key`. Sending one key twice is an error.
    fn send(&self, key: &str, value: Tensor, is_dead: bool) -> Result<(), Status>;
    /// Asks for the tensor under `key`; `done` runs when it arrives or the step fails.
    fn recv_async(&self, key: &str, done: RecvCallback);
    /// Fails every pending and future receive with `status`.
    fn abort(&self, status: Status);
    /// The receives asked for so far will not be joined by others soon (the executor is
    /// about to run a kernel, or has nothing left to run): a rendezvous that batches remote
    /// receives sends them now. Without a flush they go after a short delay.
    fn flush(&self) {}
    /// Runs `call` on its target task. A rendezvous that cannot reach other tasks (an
    /// in-process session) fails with UNIMPLEMENTED.
    fn call_function(&self, call: FunctionCall, done: FunctionDone) {
        unreachable_task_call(call, done)
    }
    /// Runs this member's part of a collective (resolving its group with the cluster's
    /// group leader, exchanging chunks with the other members); `done` gets its output. A
    /// rendezvous that cannot reach other tasks fails with UNIMPLEMENTED.
    fn collective(&self, call: crate::CollectiveCall, done: crate::CollectiveDone) {
        crate::collective::unreachable_collective(call, done)
    }
}

/// What a step that cannot reach other tasks answers a `RemoteCall` to one: UNIMPLEMENTED.
pub fn unreachable_task_call(call: FunctionCall, done: FunctionDone) {
    done(Err(Status::unimplemented(format!(
        "RemoteCall of function '{}' on '{}': this step runs in-process and cannot reach other tasks \
         (a RemoteCall in a DirectSession may only target its own task)",
        call.function, call.target
    ))))
}

/// [`rendezvous_key`] with its frame part for a `(frame id, iteration)` (TensorFlow's
/// `frame_id:iter_id`, both decimal): a key ending in `;0:0` gets the frame's instead.
pub fn key_in_frame(key: &str, frame_iter: (u64, u64)) -> std::borrow::Cow<'_, str> {
    match frame_iter {
        (0, 0) => std::borrow::Cow::Borrowed(key),
        (f, i) => {
            let base = key.strip_suffix(";0:0").unwrap_or(key);
            std::borrow::Cow::Owned(format!("{base};{f}:{i}"))
        }
    }
}

/// The parts of a rendezvous key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedKey {
    /// Full name of the sending device.
    pub send_device: String,
    /// Incarnation of the sending device.
    pub incarnation: u64,
    /// Full name of the receiving device.
    pub recv_device: String,
    /// Edge name, e.g. `edge_7_grad/AddN` or `x:0`.
    pub tensor_name: String,
    /// Frame and iteration, `0:0` outside loops.
    pub frame_iter: String,
}

impl ParsedKey {
    /// Parses a key; InvalidArgument if it does not have five `;`-separated parts.
    pub fn parse(key: &str) -> Result<ParsedKey, Status> {
        let parts: Vec<&str> = key.split(';').collect();
        if parts.len() != 5 {
            return Err(Status::invalid_argument(format!(
                "invalid rendezvous key '{key}': expected 5 ';'-separated parts \
                 (send_device;incarnation;recv_device;tensor_name;frame:iter)"
            )));
        }
        let incarnation = u64::from_str_radix(parts[1], 16)
            .map_err(|_| Status::invalid_argument(format!("invalid rendezvous key '{key}': incarnation is not hex")))?;
        if parts[0].is_empty() || parts[2].is_empty() || parts[3].is_empty() {
            return Err(Status::invalid_argument(format!(
                "invalid rendezvous key '{key}': empty device or tensor name"
            )));
        }
        Ok(ParsedKey {
            send_device: parts[0].to_string(),
            incarnation,
            recv_device: parts[2].to_string(),
            tensor_name: parts[3].to_string(),
            frame_iter: parts[4].to_string(),
        })
    }
}
