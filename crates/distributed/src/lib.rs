//! ferroflow's distributed runtime, wire-compatible with TensorFlow's (`docs/protocol.md`):
//!
//! - cluster description: [`ClusterSpec`] (code, flags, `ClusterDef`), [`TfConfig`];
//! - graph rewriting for a step ([`rewrite_for_client`]) and partitioning per task with
//!   `_Send`/`_Recv` pairs ([`partition`]);
//! - [`Server`]: one task, serving TensorFlow's MasterService and WorkerService plus
//!   ferroflow's Control service (Shutdown) on one port;
//! - [`GrpcSession`]: a client session on a cluster, like `tf.compat.v1.Session("grpc://…")`.

mod access;
mod allow_list;
mod channels;
mod client_runtime;
mod cluster_spec;
mod collective;
mod conn_handshake;
mod conn_idle;
mod control;
mod control_loops;
mod dispatch;
mod eager;
pub mod fail_points;
mod fault_filter;
mod graph_limits;
mod grpc_compression;
mod grpc_session;
mod ids;
mod in_memory;
mod local_master;
pub mod master;
mod master_api;
mod message_gate;
pub mod metrics;
mod pacing;
mod partition;
mod peer_channel;
mod peer_slots;
/// The raw gRPC building blocks of ferroflow's tensor-carrying calls; public for its own
/// bench tools (`examples/zero_master`), not a stable API.
#[doc(hidden)]
pub mod raw_grpc;
mod rpc;
mod rpc_metrics;
pub mod rpc_util;
mod server;
mod server_tcp;
mod tensor_stream;
mod tensor_wire;
mod tf_config;
mod tls;
mod transport;
pub mod worker;
mod worker_api;
mod worker_cache;

pub use access::{is_loopback_host, AllowList, DEFAULT_MAX_CONNECTIONS};
pub use channels::{endpoint, endpoint_with, master_client, strip_scheme, worker_client, ChannelCache};
pub use cluster_spec::{ClusterFlags, ClusterSpec};
pub use conn_idle::DEFAULT_CONNECTION_IDLE;
pub use control::proto as control_proto;
pub use fail_points::{FailAction, FailPoints};
pub use fault_filter::{Fault, FaultFilters, Rule};
pub use graph_limits::{GraphLimits, DEFAULT_MAX_GRAPH_BYTES, DEFAULT_MAX_GRAPH_NODES};
pub use grpc_session::{server_info, shutdown_server, GrpcSession, PartialRunHandle};
pub use in_memory::InMemoryNet;
pub use master_api::{MasterApi, RunStepCall, RunStepReply};
pub use pacing::{set_pace_bytes, DEFAULT_PACE_BYTES};
pub use partition::{partition, partition_graph, PartitionOptions, SplitBy};
pub use peer_channel::PeerChannel;
pub use peer_slots::DEFAULT_PEER_SHARE;
pub use server::{Server, ServerOptions};
pub use tf_config::{TaskId, TfConfig};
pub use tls::{is_tls_target, set_client_tls, ClientTls, ServerTls};
pub use transport::Transport;
pub use worker_api::{Deliver, RecvBatch, RunGraphCall, RunGraphReply, WorkerApi, WorkerRpc};
pub use worker_cache::{GrpcWorkerCache, WorkerCache};

#[cfg(test)]
mod fuzz_framing_tests;
#[cfg(test)]
mod proto_wire_tests;
#[cfg(test)]
mod test_graphs;
