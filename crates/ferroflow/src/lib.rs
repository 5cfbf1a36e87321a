//! ferroflow: distributed TensorFlow, in Rust.
//!
//! This facade re-exports the API users build on: tensors ([`Tensor`]), the graph builder
//! ([`Scope`], [`ops`], [`gradients`]), sessions ([`Session`]: in-process or
//! `grpc://host:port`), servers ([`Server`], [`ClusterSpec`]) and training ([`train`]).
//!
//! ```
//! use ferroflow::{ops, DirectSession, Scope, StepRunner, Tensor};
//! let s = Scope::new_root();
//! let a = ops::constant(&s, Tensor::vec(vec![1.0f32, 2.0]));
//! let sess = DirectSession::new(s.graph());
//! let out = sess.run(&[], &[&a], &[]).unwrap();
//! assert_eq!(out[0].as_slice::<f32>().unwrap(), &[1.0, 2.0]);
//! ```

#![warn(missing_docs)]

pub use ferroflow_core::{attr, Code, DataType, DeviceName, Shape, Status, Tensor};
pub use ferroflow_distributed::{ClusterSpec, GrpcSession, Server, ServerOptions, TfConfig};
pub use ferroflow_graph::{
    embedding_lookup, embedding_lookup_partitioned, gradients, ops, Graph, Operation, Output, PartitionedVariable,
    Scope, Variable, VariableOptions,
};
pub use ferroflow_runtime::{DirectSession, RunOptions, StepRunner};
pub use ferroflow_train as train;
pub use session::Session;

mod session;

/// The generated TensorFlow protocol buffers.
pub use ferroflow_proto as proto;
