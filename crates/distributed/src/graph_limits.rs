//! Limits on the size of one graph (issue #22): a session's graph on the master
//! (CreateSession, ExtendSession) and a registered graph on a worker (RegisterGraph). A
//! graph over either limit is refused with RESOURCE_EXHAUSTED, as gRPC refuses a message
//! over its size limit: the request is well formed, it only exceeds a quota this server
//! sets, and the message names the flag that raises it.

use ferroflow_core::proto::{FunctionDefLibrary, NodeDef, VersionDef};
use ferroflow_core::Status;

/// Default most nodes per graph.
pub const DEFAULT_MAX_GRAPH_NODES: usize = 10_000_000;
/// Default most bytes per graph: 2 GiB, protobuf's own limit for one message (a larger
/// GraphDef cannot be serialized, by TensorFlow or by anyone).
pub const DEFAULT_MAX_GRAPH_BYTES: u64 = 2 << 30;

/// How large one graph may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphLimits {
    /// Most nodes (`ferroflow server --max_graph_nodes`).
    pub max_nodes: usize,
    /// Most bytes of the graph's serialized `GraphDef` (`--max_graph_bytes`).
    pub max_bytes: u64,
}

impl Default for GraphLimits {
    fn default() -> Self {
        GraphLimits { max_nodes: DEFAULT_MAX_GRAPH_NODES, max_bytes: DEFAULT_MAX_GRAPH_BYTES }
    }
}

/// Serialized bytes of `nodes` as `GraphDef.node` entries.
pub(crate) fn nodes_bytes(nodes: &[NodeDef]) -> u64 {
    nodes.iter().map(|n| prost::encoding::message::encoded_len(1, n) as u64).sum()
}

/// Serialized bytes of a graph's `versions` and `library` (its deprecated `version`, a
/// few bytes at most, is not counted).
pub(crate) fn meta_bytes(versions: Option<&VersionDef>, library: Option<&FunctionDefLibrary>) -> u64 {
    versions.map_or(0, |v| prost::encoding::message::encoded_len(4, v) as u64)
        + library.map_or(0, |l| prost::encoding::message::encoded_len(2, l) as u64)
}

/// `1234567` as `1,234,567`.
fn grouped(v: u64) -> String {
    let digits = v.to_string();
    let groups: Vec<&str> =
        digits.as_bytes().rchunks(3).rev().map(|g| std::str::from_utf8(g).unwrap_or_default()).collect();
    groups.join(",")
}

impl GraphLimits {
    /// RESOURCE_EXHAUSTED naming `what` (e.g. "CreateSession: the session's graph") unless
    /// a graph of `nodes` nodes and `bytes` serialized bytes fits.
    pub(crate) fn check(&self, what: &str, nodes: usize, bytes: u64) -> Result<(), Status> {
        if nodes > self.max_nodes {
            return Err(Status::resource_exhausted(format!(
                "{what} has {} nodes, more than this server's limit of {} nodes per graph (raise it with \
                 `ferroflow server --max_graph_nodes N`)",
                grouped(nodes as u64),
                grouped(self.max_nodes as u64)
            )));
        }
        if bytes > self.max_bytes {
            return Err(Status::resource_exhausted(format!(
                "{what} is {} bytes serialized, more than this server's limit of {} bytes per graph (raise it \
                 with `ferroflow server --max_graph_bytes SIZE`)",
                grouped(bytes),
                grouped(self.max_bytes)
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::proto::GraphDef;
    use ferroflow_core::Code;

    fn node(name: &str) -> NodeDef {
        NodeDef { name: name.into(), op: "NoOp".into(), ..Default::default() }
    }

    #[test]
    fn limits_name_the_graph_the_count_the_limit_and_the_flag() {
        let l = GraphLimits { max_nodes: 1000, max_bytes: 4096 };
        assert!(l.check("g", 1000, 4096).is_ok());
        let e = l.check("CreateSession: the session's graph", 1001, 10).unwrap_err();
        assert_eq!(e.code, Code::ResourceExhausted);
        assert!(e.message.starts_with("CreateSession: the session's graph has 1,001 nodes"), "{}", e.message);
        assert!(e.message.contains("limit of 1,000 nodes per graph"), "{}", e.message);
        assert!(e.message.contains("--max_graph_nodes"), "{}", e.message);
        let e = l.check("g", 10, 1_234_567).unwrap_err();
        assert_eq!(e.code, Code::ResourceExhausted);
        assert!(e.message.contains("is 1,234,567 bytes serialized"), "{}", e.message);
        assert!(e.message.contains("limit of 4,096 bytes") && e.message.contains("--max_graph_bytes"), "{}", e.message);
    }

    #[test]
    fn defaults_are_ten_million_nodes_and_protobufs_two_gib() {
        assert_eq!(GraphLimits::default(), GraphLimits { max_nodes: 10_000_000, max_bytes: 2_147_483_648 });
    }

    #[test]
    fn bytes_are_the_graphdefs_serialized_size() {
        let mut g = GraphDef { node: vec![node("a"), node("bb")], ..Default::default() };
        g.versions = Some(Default::default());
        g.library = Some(ferroflow_core::proto::FunctionDefLibrary {
            function: vec![Default::default()],
            ..Default::default()
        });
        let meta = meta_bytes(g.versions.as_ref(), g.library.as_ref());
        assert_eq!(nodes_bytes(&g.node) + meta, prost::Message::encoded_len(&g) as u64);
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(10_000_000), "10,000,000");
    }
}
