//! Structured fields of a [`Status`] that survive the wire: TensorFlow's status payloads
//! (a map from a type URL to bytes). Over gRPC they travel as TensorFlow's servers send
//! them, a `tensorflow.distributed_runtime.GrpcPayloadContainer` in the status details
//! (`grpc-status-details-bin`), so a TensorFlow peer reads ferroflow's
//! `WorkerPossiblyRestarted` and ferroflow reads TensorFlow's. Code that acts on an error
//! asks these fields (the node, the reason), never the message text.

use std::collections::HashMap;
use std::fmt;

use crate::Status;

/// TensorFlow's: the error may come from a worker that restarted (its graph handles are gone).
pub const WORKER_POSSIBLY_RESTARTED: &str =
    "type.googleapis.com/tensorflow.distributed_runtime.WorkerPossiblyRestarted";
/// TensorFlow's: the peer sent status details that were not a payload container.
pub const GRPC_PAYLOADS_LOST: &str = "type.googleapis.com/tensorflow.distributed_runtime.GrpcPayloadsLost";
/// ferroflow's: the name of the node whose kernel failed (UTF-8).
pub const ERROR_NODE: &str = "type.googleapis.com/ferroflow.ErrorNode";
/// ferroflow's: the task (`/job:J/replica:0/task:T`) on which the call or step part that
/// failed ran, or which could not be reached (UTF-8).
pub const ERROR_TASK: &str = "type.googleapis.com/ferroflow.ErrorTask";
/// ferroflow's: the innermost function (by name) whose body the error is reported from
/// (UTF-8); set as the error leaves each function call, so it names the last one left.
pub const ERROR_FUNCTION: &str = "type.googleapis.com/ferroflow.ErrorFunction";
/// TensorFlow's: the error only reports that a step stopped because something else
/// failed first (a cancelled partition, an aborted rendezvous): not the cause.
pub const DERIVED_STATUS: &str = "type.googleapis.com/tensorflow.DerivedStatus";

/// A status's payloads, sorted by key (none for most: no allocation then, and a status stays
/// small).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Payloads(Option<Box<[Payload]>>);

/// One payload: its type URL and bytes.
type Payload = (String, Vec<u8>);

impl fmt::Debug for Payloads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(|(k, _)| k)).finish()
    }
}

/// TensorFlow's `GrpcPayloadContainer` (distributed_runtime_payloads.proto).
#[derive(Clone, PartialEq, prost::Message)]
struct GrpcPayloadContainer {
    #[prost(map = "string, bytes", tag = "1")]
    payloads: HashMap<String, Vec<u8>>,
}

impl Payloads {
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|m| m.is_empty())
    }

    pub fn get(&self, key: &str) -> Option<&[u8]> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Sets `key` (replacing its value if set).
    pub fn insert(&mut self, key: &str, value: Vec<u8>) {
        let mut v: Vec<Payload> = self.0.take().map(Vec::from).unwrap_or_default();
        match v.binary_search_by(|(k, _)| k.as_str().cmp(key)) {
            Ok(i) => v[i].1 = value,
            Err(i) => v.insert(i, (key.to_string(), value)),
        }
        self.0 = Some(v.into_boxed_slice());
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.0.iter().flat_map(|m| m.iter().map(|(k, v)| (k.as_str(), v.as_slice())))
    }

    /// The container's bytes, as TensorFlow puts them in a gRPC status's details (empty
    /// when there are no payloads).
    pub fn encode(&self) -> Vec<u8> {
        if self.is_empty() {
            return Vec::new();
        }
        let payloads = self.iter().map(|(k, v)| (k.to_string(), v.to_vec())).collect();
        prost::Message::encode_to_vec(&GrpcPayloadContainer { payloads })
    }

    /// Payloads from a gRPC status's details; details that are not a container give
    /// TensorFlow's [`GRPC_PAYLOADS_LOST`] marker instead.
    pub fn decode(details: &[u8]) -> Payloads {
        let mut p = Payloads::default();
        match <GrpcPayloadContainer as prost::Message>::decode(details) {
            Ok(c) => {
                for (k, v) in c.payloads {
                    p.insert(&k, v);
                }
            }
            Err(_) => p.insert(GRPC_PAYLOADS_LOST, Vec::new()),
        }
        p
    }
}

impl Status {
    /// The status with payload `key` set to `value`.
    pub fn with_payload(mut self, key: &str, value: impl Into<Vec<u8>>) -> Status {
        self.payloads.insert(key, value.into());
        self
    }

    /// Payload `key`, if set.
    pub fn payload(&self, key: &str) -> Option<&[u8]> {
        self.payloads.get(key)
    }

    /// The status naming `node` as the node whose kernel failed (kept if one is named).
    pub fn with_node(self, node: &str) -> Status {
        self.with_first_text(ERROR_NODE, node)
    }

    /// The node whose kernel failed, if the status names one.
    pub fn node(&self) -> Option<&str> {
        self.payload_text(ERROR_NODE)
    }

    /// The status naming `task` as where it failed (kept if one is named: the innermost
    /// task is the one that failed).
    pub fn with_task(self, task: &str) -> Status {
        self.with_first_text(ERROR_TASK, task)
    }

    /// The task where the error happened, if the status names one.
    pub fn task(&self) -> Option<&str> {
        self.payload_text(ERROR_TASK)
    }

    /// The status with `context` ("in function 'f'") in front, marked as reported from
    /// function `name`, unless it is marked so already (an error that left a call of `name`
    /// inside a call of `name` is named once).
    pub fn in_function(self, name: &str, context: impl fmt::Display) -> Status {
        if self.payload_text(ERROR_FUNCTION) == Some(name) {
            return self;
        }
        self.context(context).with_payload(ERROR_FUNCTION, name.as_bytes())
    }

    /// Whether the status names node `node` as the one whose kernel failed.
    pub fn names_node(&self, node: &str) -> bool {
        self.node() == Some(node)
    }

    /// The status with `node` and its op `op` named in front (`node 'n' (op T): …`) and
    /// as its node payload, unless it names `node` already.
    pub fn in_node(self, node: &str, op: &str) -> Status {
        if self.names_node(node) {
            return self;
        }
        self.context(format_args!("node '{node}' (op {op})")).with_node(node)
    }

    /// The status with text payload `key` set to `text`, unless it already has a text one.
    fn with_first_text(self, key: &str, text: &str) -> Status {
        if self.payload_text(key).is_some() {
            return self;
        }
        self.with_payload(key, text.as_bytes())
    }

    /// Payload `key` as text, if set and UTF-8.
    fn payload_text(&self, key: &str) -> Option<&str> {
        self.payload(key).and_then(|b| std::str::from_utf8(b).ok())
    }

    /// The status marked as derived from another failure ([`DERIVED_STATUS`]).
    pub fn derived(self) -> Status {
        self.with_payload(DERIVED_STATUS, Vec::new())
    }

    /// Whether the status only reports another failure ([`DERIVED_STATUS`]).
    pub fn is_derived(&self) -> bool {
        self.payload(DERIVED_STATUS).is_some()
    }

    /// The status marked as a possible outcome of a worker restart
    /// ([`WORKER_POSSIBLY_RESTARTED`]).
    pub fn possibly_restarted(self) -> Status {
        self.with_payload(WORKER_POSSIBLY_RESTARTED, Vec::new())
    }

    /// Whether the error may come from a worker that restarted (TensorFlow's payload).
    pub fn worker_possibly_restarted(&self) -> bool {
        self.payload(WORKER_POSSIBLY_RESTARTED).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Code;

    #[test]
    fn payloads_round_trip_through_tensorflows_container() {
        let s =
            Status::aborted("Graph handle is not found: g1").possibly_restarted().with_node("train/apply").derived();
        let bytes = s.payloads.encode();
        let back = Payloads::decode(&bytes);
        assert_eq!(back, s.payloads);
        let r = Status { code: Code::Aborted, message: String::new(), payloads: back };
        assert!(r.worker_possibly_restarted());
        assert_eq!(r.node(), Some("train/apply"));
        assert!(r.is_derived());
        // The first node named is kept: it is where the error arose.
        assert_eq!(r.with_node("outer").node(), Some("train/apply"));
    }

    #[test]
    fn no_payloads_no_bytes_and_garbage_is_marked_lost() {
        let s = Status::internal("x");
        assert!(s.payloads.is_empty() && s.payloads.encode().is_empty());
        assert!(Payloads::decode(&[]).is_empty());
        let lost = Payloads::decode(&[0xff, 0xff, 0xff]);
        assert!(lost.get(GRPC_PAYLOADS_LOST).is_some());
    }

    #[test]
    fn the_container_matches_tensorflows_wire_format() {
        // map<string, bytes> payloads = 1: an entry message (key = 1, value = 2) per key.
        let s = Status::internal("x").with_payload("k", b"v".to_vec());
        assert_eq!(s.payloads.encode(), vec![0x0a, 6, 0x0a, 1, b'k', 0x12, 1, b'v']);
    }

    #[test]
    fn node_and_function_context_is_added_once_by_the_payload_not_the_text() {
        // A kernel's error gets its node named once, however often it is passed on.
        let e = Status::invalid_argument("bad shape").in_node("n", "MatMul").in_node("n", "MatMul");
        assert_eq!((e.message.as_str(), e.node()), ("node 'n' (op MatMul): bad shape", Some("n")));
        // The text naming the node is not what counts: only the payload does.
        let e = Status::internal("input of 'n' missing").in_node("n", "Add");
        assert_eq!(e.message, "node 'n' (op Add): input of 'n' missing");
        // An outer node (a call) is named too, the failing node stays the inner one.
        let e = e.in_node("call", "f");
        assert_eq!(
            (e.message.as_str(), e.node()),
            ("node 'call' (op f): node 'n' (op Add): input of 'n' missing", Some("n"))
        );
        // A function is named as the error leaves it; a call of f inside f is named once,
        // a different function around it again.
        let e = Status::aborted("x").in_function("f", "in function 'f'").in_function("f", "in function 'f'");
        assert_eq!(e.message, "in function 'f': x");
        let e = e.in_function("g", "in function 'g'");
        assert_eq!(e.message, "in function 'g': in function 'f': x");
        assert_eq!(e.payload(ERROR_FUNCTION), Some(&b"g"[..]));
    }
}
