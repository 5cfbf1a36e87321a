//! ferroflow's distributed runtime: cluster description ([`ClusterSpec`], [`TfConfig`]),
//! graph rewriting for a step ([`rewrite_for_client`]: client feeds/fetches as
//! `_Recv`/`_Send`, then pruning) and partitioning per task with `_Send`/`_Recv` pairs
//! ([`partition`]), following TensorFlow's wire protocol (`tf-wire.md`).

mod client_graph;
mod cluster_spec;
mod graph_util;
mod partition;
mod sendrecv_ops;
mod tf_config;

pub use client_graph::{rewrite_for_client, ClientGraph, ClientTensor};
pub use cluster_spec::{ClusterFlags, ClusterSpec};
pub use partition::{partition, PartitionOptions, SplitBy};
pub use sendrecv_ops::{send_recv_op_defs, SENDRECV_OPS};
pub use tf_config::{TaskId, TfConfig};

#[cfg(test)]
mod proto_wire_tests;
#[cfg(test)]
mod test_graphs;
