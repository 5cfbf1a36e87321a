//! ferroflow's graph layer: the op registry (TensorFlow op names, attrs and defaults,
//! shape functions), the GraphDef IR with import/export, the builder API ([`Scope`],
//! [`Output`], one function per op in [`ops`]) and symbolic gradients.

mod call_by_name;
mod client_graph;
mod control_flow_v1;
pub mod data;
mod embedding;
mod function_def;
pub mod gradients;
mod graph;
pub mod graph_cycles;
pub mod graph_util;
pub mod io;
pub mod lookup;
mod op_def;
pub mod ops;
mod partitioned;
pub mod pbtxt;
mod registry;
mod scope;
pub mod shape_fn;
mod shape_fold;
mod signature;
mod step_signature;
pub mod tensor_array;
mod variable;
pub use variable::*;

pub use call_by_name::call_by_name;
pub use client_graph::{rewrite_for_client, ClientGraph, ClientTensor};
pub use control_flow_v1::{cond_v1, while_loop_v1};
pub use embedding::{embedding_lookup, embedding_lookup_partitioned};
pub use function_def::{define_function, Function};
pub use gradients::{gradients, gradients_with_options, indexed_slices, GradOp, GradOptions};
pub use graph::{canonical_tensor_name, parse_tensor_name, unique_names, Graph, NodeEntry, GRAPH_DEF_VERSION};
pub use op_def::{op, parse_type, ArgDef, ArgType, AttrDef, OpDef, OpDefBuilder};
pub use partitioned::{fixed_size_partitions, PartitionedVariable};
pub use registry::{op_registry, OpRegistry};
pub use scope::{AsOpName, DeviceFn, OpBuilder, Operation, Output, Scope};
pub use signature::{add_defaults, lookup_op, output_arg_ranges, resolve_node, signature_of, Signature};
pub use step_signature::{check_feed_types, StepSignature};
pub use tensor_array::{TensorArray, TensorArrayOptions};

pub use ferroflow_core::{attr, DataType, Shape, Status, Tensor};
