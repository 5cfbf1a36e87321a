//! Small GraphDef helpers shared by the client rewrite (here) and partitioning (in the
//! distributed crate): input parsing, fresh node names and `_Send`/`_Recv` node construction.

use std::collections::HashSet;

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::{attr, DataType, Status};

/// Resolves a node's signature from the op registry (with attr defaults) without
/// modifying the node.
pub fn signature(node: &NodeDef) -> Result<crate::Signature, Status> {
    let def = crate::lookup_op(node)?;
    let mut n = node.clone();
    crate::add_defaults(def, &mut n);
    crate::signature_of(def, &n)
}

/// One entry of `NodeDef.input`: a data edge `(node, slot)` or a control edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input<'a> {
    /// `"node"` (slot 0) or `"node:k"`.
    Data(&'a str, usize),
    /// `"^node"`.
    Control(&'a str),
}

impl Input<'_> {
    /// The source node's name.
    pub fn node(&self) -> &str {
        match self {
            Input::Data(n, _) | Input::Control(n) => n,
        }
    }
}

/// Parses one input string of `node`.
pub fn parse_input<'a>(node: &NodeDef, s: &'a str) -> Result<Input<'a>, Status> {
    if let Some(c) = s.strip_prefix('^') {
        if c.is_empty() {
            return Err(Status::invalid_argument(format!("node '{}' has an empty control input '^'", node.name)));
        }
        return Ok(Input::Control(c));
    }
    let (n, i) = crate::parse_tensor_name(s).map_err(|e| e.context(format!("node '{}'", node.name)))?;
    Ok(Input::Data(n, i))
}

/// The input string of `node:slot`, TensorFlow style (`"node"` for slot 0).
pub fn tensor_input(node: &str, slot: usize) -> String {
    if slot == 0 {
        node.to_string()
    } else {
        format!("{node}:{slot}")
    }
}

/// A node `name` running `op` on `inputs` (no device, no attrs yet).
pub fn node_def(name: &str, op: &str, inputs: &[&str]) -> NodeDef {
    NodeDef {
        name: name.into(),
        op: op.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

/// Node `n` running `op` on `inputs`, with `attrs`: what signature tests resolve.
#[cfg(test)]
pub(crate) fn test_node(op: &str, inputs: &[&str], attrs: &[(&str, ferroflow_core::proto::AttrValue)]) -> NodeDef {
    NodeDef { attr: attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(), ..node_def("n", op, inputs) }
}

/// A GraphDef with `node` and the versions and function library of `like`.
#[allow(deprecated)] // `version` is TF's deprecated field, copied as is.
pub fn graph_like(like: &GraphDef, node: Vec<NodeDef>) -> GraphDef {
    GraphDef { node, versions: like.versions.clone(), version: like.version, library: like.library.clone() }
}

/// Fresh node names `<prefix>_S<k>` (k counts up across the whole graph), never clashing
/// with a name already in the graph.
pub struct NameGen {
    used: HashSet<String>,
    next: u64,
}

impl NameGen {
    pub fn new<'a>(existing: impl IntoIterator<Item = &'a str>) -> NameGen {
        NameGen { used: existing.into_iter().map(str::to_string).collect(), next: 0 }
    }

    pub fn name(&mut self, prefix: &str) -> String {
        loop {
            let cand = format!("{prefix}_S{}", self.next);
            self.next += 1;
            if self.used.insert(cand.clone()) {
                return cand;
            }
        }
    }
}

/// The attrs both ends of a `_Send`/`_Recv` pair carry.
pub struct SendRecv<'a> {
    pub tensor_name: &'a str,
    pub send_device: &'a str,
    pub send_device_incarnation: u64,
    pub recv_device: &'a str,
    pub client_terminated: bool,
}

impl SendRecv<'_> {
    fn node(&self, name: String, op: &str, device: &str) -> NodeDef {
        let mut n = NodeDef { name, op: op.to_string(), device: device.to_string(), ..Default::default() };
        n.attr.insert("tensor_name".into(), attr::string(self.tensor_name));
        n.attr.insert("send_device".into(), attr::string(self.send_device));
        // TF stores the u64 incarnation bit for bit in an int attr.
        n.attr.insert("send_device_incarnation".into(), attr::int(self.send_device_incarnation as i64));
        n.attr.insert("recv_device".into(), attr::string(self.recv_device));
        n.attr.insert("client_terminated".into(), attr::bool(self.client_terminated));
        n
    }

    /// A `_Send` of `input` (type `dtype`) placed on `device`.
    pub fn send(&self, name: String, input: String, dtype: DataType, device: &str) -> NodeDef {
        let mut n = self.node(name, "_Send", device);
        n.input.push(input);
        n.attr.insert("T".into(), attr::ty(dtype));
        n
    }

    /// A `_Recv` of type `dtype` placed on `device`.
    pub fn recv(&self, name: String, dtype: DataType, device: &str) -> NodeDef {
        let mut n = self.node(name, "_Recv", device);
        n.attr.insert("tensor_type".into(), attr::ty(dtype));
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_and_names() {
        let n = NodeDef { name: "n".into(), ..Default::default() };
        assert_eq!(parse_input(&n, "a").unwrap(), Input::Data("a", 0));
        assert_eq!(parse_input(&n, "a/b:2").unwrap(), Input::Data("a/b", 2));
        assert_eq!(parse_input(&n, "^a").unwrap(), Input::Control("a"));
        assert!(parse_input(&n, "^").is_err());
        assert!(parse_input(&n, "a:x").unwrap_err().message.contains("node 'n'"));
        assert_eq!(tensor_input("a", 0), "a");
        assert_eq!(tensor_input("a", 3), "a:3");
        let mut g = NameGen::new(["a_S1"]);
        assert_eq!(g.name("a"), "a_S0");
        assert_eq!(g.name("a"), "a_S2");
        assert_eq!(g.name("b"), "b_S3");
    }
}
