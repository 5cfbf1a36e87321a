//! GraphDef in protobuf text format (`.pbtxt`): the writer and the parser, compatible with
//! what TensorFlow's `tf.io.write_graph(..., as_text=True)` writes and reads.
//!
//! ```
//! use ferroflow_graph::{ops, Graph, Scope};
//! let s = Scope::new_root();
//! let x = ops::placeholder(&s, ferroflow_core::DataType::Float, Some(&[-1, 784]));
//! let _ = ops::identity(&s, x);
//! let text = s.graph().to_pbtxt();
//! assert!(text.contains("type: DT_FLOAT"));
//! let g = Graph::from_pbtxt(&text).unwrap();
//! assert_eq!(g.num_nodes(), 2);
//! ```

mod lex;
mod read;
mod write;

use ferroflow_core::proto::{CheckpointState, GraphDef, NodeDef};
use ferroflow_core::Status;

use crate::graph::Graph;

pub use write::{escape as c_escape, fmt_f32, fmt_f64};

/// Prints a GraphDef in text format.
pub fn graph_def_to_pbtxt(g: &GraphDef) -> String {
    write::graph_def_to_text(g)
}

/// Parses a GraphDef from text format. Malformed text is InvalidArgument naming the line
/// and column; unknown fields are skipped.
pub fn parse_graph_def(text: &str) -> Result<GraphDef, Status> {
    read::graph_def(&lex::parse(text)?)
}

/// Parses a CheckpointState (a checkpoint directory's `checkpoint` file). Malformed text
/// and unknown fields are InvalidArgument naming the line and column.
pub fn parse_checkpoint_state(text: &str) -> Result<CheckpointState, Status> {
    read::checkpoint_state(&lex::parse(text)?)
}

/// Prints a CheckpointState as TensorFlow writes its `checkpoint` file.
pub fn checkpoint_state_to_pbtxt(s: &CheckpointState) -> String {
    let mut out = format!("model_checkpoint_path: \"{}\"\n", c_escape(s.model_checkpoint_path.as_bytes()));
    for p in &s.all_model_checkpoint_paths {
        out.push_str(&format!("all_model_checkpoint_paths: \"{}\"\n", c_escape(p.as_bytes())));
    }
    for t in &s.all_model_checkpoint_timestamps {
        out.push_str(&format!("all_model_checkpoint_timestamps: {t:?}\n"));
    }
    if s.last_preserved_timestamp != 0.0 {
        out.push_str(&format!("last_preserved_timestamp: {:?}\n", s.last_preserved_timestamp));
    }
    out
}

/// Parses one NodeDef from text format (the body of a `node { … }`).
pub fn parse_node_def(text: &str) -> Result<NodeDef, Status> {
    read::node(&lex::parse(text)?)
}

impl Graph {
    /// The graph as a text-format GraphDef.
    pub fn to_pbtxt(&self) -> String {
        graph_def_to_pbtxt(&self.to_graph_def())
    }

    /// Parses a text-format GraphDef and imports it (every node validated).
    pub fn from_pbtxt(text: &str) -> Result<Graph, Status> {
        Graph::import(&parse_graph_def(text)?)
    }
}
