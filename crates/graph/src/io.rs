//! Binary GraphDef files (`.pb`): TensorFlow's `tf.io.write_graph(..., as_text=False)`
//! format, read and written with prost. Malformed bytes are InvalidArgument.

use std::path::Path;

use ferroflow_core::proto::GraphDef;
use ferroflow_core::Status;
use prost::Message;

use crate::graph::Graph;

/// Decodes a binary GraphDef.
pub fn decode_graph_def(bytes: &[u8]) -> Result<GraphDef, Status> {
    GraphDef::decode(bytes).map_err(|e| Status::invalid_argument(format!("malformed GraphDef: {e}")))
}

/// Reads a binary GraphDef file.
pub fn read_graph_def(path: impl AsRef<Path>) -> Result<GraphDef, Status> {
    let p = path.as_ref();
    let bytes = std::fs::read(p).map_err(|e| Status::from(e).context(format!("reading {}", p.display())))?;
    decode_graph_def(&bytes).map_err(|e| e.context(p.display()))
}

/// Writes a binary GraphDef file.
pub fn write_graph_def(path: impl AsRef<Path>, g: &GraphDef) -> Result<(), Status> {
    let p = path.as_ref();
    std::fs::write(p, g.encode_to_vec()).map_err(|e| Status::from(e).context(format!("writing {}", p.display())))
}

impl Graph {
    /// The graph as binary GraphDef bytes.
    pub fn to_pb_bytes(&self) -> Vec<u8> {
        self.to_graph_def().encode_to_vec()
    }

    /// Imports a graph from binary GraphDef bytes.
    pub fn from_pb_bytes(bytes: &[u8]) -> Result<Graph, Status> {
        Graph::import(&decode_graph_def(bytes)?)
    }

    /// Writes the graph as a binary GraphDef file (`.pb`).
    pub fn write_pb(&self, path: impl AsRef<Path>) -> Result<(), Status> {
        write_graph_def(path, &self.to_graph_def())
    }

    /// Reads and imports a binary GraphDef file; every node is validated.
    pub fn read_pb(path: impl AsRef<Path>) -> Result<Graph, Status> {
        Graph::import(&read_graph_def(path)?)
    }

    /// Writes the graph as a text GraphDef file (`.pbtxt`).
    pub fn write_pbtxt(&self, path: impl AsRef<Path>) -> Result<(), Status> {
        let p = path.as_ref();
        std::fs::write(p, self.to_pbtxt()).map_err(|e| Status::from(e).context(format!("writing {}", p.display())))
    }

    /// Reads and imports a text GraphDef file.
    pub fn read_pbtxt(path: impl AsRef<Path>) -> Result<Graph, Status> {
        let p = path.as_ref();
        let text =
            std::fs::read_to_string(p).map_err(|e| Status::from(e).context(format!("reading {}", p.display())))?;
        Graph::from_pbtxt(&text).map_err(|e| e.context(p.display()))
    }
}
