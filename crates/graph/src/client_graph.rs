//! The client-side rewrite of a step's graph (TensorFlow's `RewriteGraphForExecution`,
//! docs/protocol.md): every feed `n:i` becomes a `_Recv` named `_recv_<n>_<i>` and every fetch
//! a `_Send` named `_send_<n>_<i>`, both on the client device with `tensor_name = "n:i"`,
//! `send_device = recv_device = client device`, the client device's incarnation and
//! `client_terminated = true`; then the graph is pruned to what the fetches and targets need.
//!
//! The master names a feed in `RunGraphRequest.send` and a fetch in `recv_key` by the
//! rendezvous key of its node ([`ClientTensor::key`]).

use std::collections::{HashMap, HashSet};

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::rendezvous_key;
use ferroflow_core::{DataType, Status};

use crate::graph_util::{graph_like, parse_input, signature, tensor_input, Input, SendRecv};

/// A fed or fetched tensor after the rewrite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientTensor {
    /// Canonical tensor name, `n:i` (also the `tensor_name` attr).
    pub name: String,
    /// The `_Recv` (feed) or `_Send` (fetch) node standing for it.
    pub node: String,
    /// Element type.
    pub dtype: DataType,
    /// Rendezvous key (frame 0:0) under which the tensor travels.
    pub key: String,
    /// For feeds: whether the `_Recv` survived pruning (an unused feed is pruned away and
    /// needs not be sent). Always true for fetches.
    pub used: bool,
}

/// The rewritten, pruned graph of one (feeds, fetches, targets) signature.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientGraph {
    /// The graph, still unpartitioned (client-device nodes carry full device names).
    pub graph: GraphDef,
    /// One entry per distinct feed, in request order.
    pub feeds: Vec<ClientTensor>,
    /// One entry per distinct fetch, in request order.
    pub fetches: Vec<ClientTensor>,
}

impl ClientGraph {
    /// The rendezvous key of each feed, in order.
    pub fn feed_keys(&self) -> Vec<String> {
        self.feeds.iter().map(|f| f.key.clone()).collect()
    }

    /// The rendezvous key of each fetch, in order.
    pub fn fetch_keys(&self) -> Vec<String> {
        self.fetches.iter().map(|f| f.key.clone()).collect()
    }
}

/// The attrs of a client feed's `_Recv` or fetch's `_Send`: both ends on the client device.
fn client_end<'a>(tensor_name: &'a str, client_device: &'a str, client_incarnation: u64) -> SendRecv<'a> {
    SendRecv {
        tensor_name,
        send_device: client_device,
        send_device_incarnation: client_incarnation,
        recv_device: client_device,
        client_terminated: true,
    }
}

fn canonical(what: &str, s: &str) -> Result<(String, usize), Status> {
    let (n, i) = crate::parse_tensor_name(s).map_err(|e| e.context(format!("{what} '{s}'")))?;
    Ok((n.to_string(), i))
}

/// Rewrites `graph` for one step signature and prunes it.
///
/// `feeds` and `fetches` are tensor names (`"n:i"`, a bare `"n"` meaning `"n:0"`;
/// duplicates are merged), `targets` are node names. `client_device` is a full device name
/// and `client_incarnation` its incarnation. Fetching a fed tensor returns the fed value.
///
/// Errors: NotFound for a feed, fetch or target naming no node; InvalidArgument for an
/// output index out of range or a generated name that clashes with an existing node.
pub fn rewrite_for_client<S: AsRef<str>>(
    graph: &GraphDef,
    feeds: &[S],
    fetches: &[S],
    targets: &[S],
    client_device: &str,
    client_incarnation: u64,
) -> Result<ClientGraph, Status> {
    // Shapes that follow from constants are answered without computing their tensors.
    let fed_nodes: std::collections::HashSet<&str> =
        feeds.iter().map(|f| f.as_ref().split(':').next().unwrap_or_default()).collect();
    let folded = crate::shape_fold::fold_static_shapes(graph, &fed_nodes);
    let graph = folded.as_ref().unwrap_or(graph);
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(graph.node.len());
    for (i, n) in graph.node.iter().enumerate() {
        if index.insert(n.name.as_str(), i).is_some() {
            return Err(Status::invalid_argument(format!("graph has two nodes named '{}'", n.name)));
        }
    }
    let output_type = |what: &str, n: &str, i: usize| -> Result<DataType, Status> {
        // TensorFlow's words first (its clients and tests match them), then which node.
        let &ni = index.get(n).ok_or_else(|| {
            let tf = if what == "feed" {
                format!("FeedInputs: unable to find feed output {n}:{i}")
            } else {
                format!("FetchOutputs node {n}:{i}: not found")
            };
            Status::not_found(format!("{tf} ({what} '{n}:{i}': no node named '{n}' in the graph)"))
        })?;
        let sig = signature(&graph.node[ni]).map_err(|e| e.context(format!("{what} '{n}:{i}'")))?;
        sig.outputs.get(i).map(|o| o.0).ok_or_else(|| {
            Status::invalid_argument(format!(
                "{what} '{n}:{i}': node '{n}' (op {}) has only {} outputs",
                graph.node[ni].op,
                sig.outputs.len()
            ))
        })
    };
    // The client's end of the fed or fetched tensor `n:i`: its `_recv_`/`_send_` node (a name
    // the graph must not have yet), dtype and rendezvous key.
    let endpoint = |what: &str, n: &str, i: usize| -> Result<ClientTensor, Status> {
        let dtype = output_type(what, n, i)?;
        let feed = what == "feed";
        let node = format!("_{}_{n}_{i}", if feed { "recv" } else { "send" });
        if index.contains_key(node.as_str()) {
            return Err(Status::invalid_argument(format!(
                "cannot rewrite the graph for this step: it already has a node named '{node}'"
            )));
        }
        let name = format!("{n}:{i}");
        let key = rendezvous_key(client_device, client_incarnation, client_device, &name);
        Ok(ClientTensor { name, node, dtype, key, used: !feed })
    };

    // Feeds: (n, i) → recv node name.
    let mut fed: HashMap<(String, usize), String> = HashMap::new();
    let mut feed_out = Vec::new();
    let mut recv_nodes = Vec::new();
    for f in feeds {
        let (n, i) = canonical("feed", f.as_ref())?;
        if fed.contains_key(&(n.clone(), i)) {
            continue;
        }
        let t = endpoint("feed", &n, i)?;
        let sr = client_end(&t.name, client_device, client_incarnation);
        recv_nodes.push(sr.recv(t.node.clone(), t.dtype, client_device));
        fed.insert((n, i), t.node.clone());
        feed_out.push(t);
    }
    // Consumers of fed tensors read the _Recv instead; a fed Placeholder's control edges
    // move to its _Recv. Applied while pruning, and to the nodes kept (never to a copy of
    // the whole graph).
    let rewire = |node: &NodeDef, s: &str| -> Result<Option<String>, Status> {
        Ok(match parse_input(node, s)? {
            Input::Data(n, i) => fed.get(&(n.to_string(), i)).cloned(),
            Input::Control(n) => {
                let is_placeholder = index.get(n).is_some_and(|&k| graph.node[k].op.starts_with("Placeholder"));
                if is_placeholder {
                    fed.get(&(n.to_string(), 0)).map(|r| format!("^{r}"))
                } else {
                    None
                }
            }
        })
    };
    // Fetches.
    let mut fetched: HashSet<(String, usize)> = HashSet::new();
    let mut fetch_out = Vec::new();
    let mut send_nodes = Vec::new();
    for f in fetches {
        let (n, i) = canonical("fetch", f.as_ref())?;
        if !fetched.insert((n.clone(), i)) {
            continue;
        }
        let t = endpoint("fetch", &n, i)?;
        let sr = client_end(&t.name, client_device, client_incarnation);
        let input = fed.get(&(n.clone(), i)).cloned().unwrap_or_else(|| tensor_input(&n, i));
        send_nodes.push(sr.send(t.node.clone(), input, t.dtype, client_device));
        fetch_out.push(t);
    }
    // Targets.
    let mut roots: Vec<String> = send_nodes.iter().map(|n| n.name.clone()).collect();
    for t in targets {
        let t = t.as_ref();
        let name = t.strip_prefix('^').unwrap_or(t);
        if !index.contains_key(name) {
            return Err(Status::not_found(format!(
                "PruneForTargets: Some target nodes not found: {name} (target '{t}': no node named '{name}' in the graph)"
            )));
        }
        roots.push(name.to_string());
    }

    // Prune: keep what the fetches and targets reach through data and control inputs. The
    // nodes are numbered receives first, then the graph's nodes, then the sends.
    let (nr, ng) = (recv_nodes.len(), graph.node.len());
    let node_at = |i: usize| -> &NodeDef {
        if i < nr {
            &recv_nodes[i]
        } else if i < nr + ng {
            &graph.node[i - nr]
        } else {
            &send_nodes[i - nr - ng]
        }
    };
    let mut pos: HashMap<&str, usize> = HashMap::with_capacity(nr + ng + send_nodes.len());
    for i in 0..nr + ng + send_nodes.len() {
        pos.insert(node_at(i).name.as_str(), i);
    }
    let mut keep = vec![false; nr + ng + send_nodes.len()];
    let mut stack: Vec<usize> = roots.iter().filter_map(|r| pos.get(r.as_str()).copied()).collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut keep[i], true) {
            continue;
        }
        let n = node_at(i);
        for s in &n.input {
            let rewired = if (nr..nr + ng).contains(&i) { rewire(n, s)? } else { None };
            let s = rewired.as_deref().unwrap_or(s);
            let src = parse_input(n, s)?.node().to_string();
            let &j = pos.get(src.as_str()).ok_or_else(|| {
                Status::invalid_argument(format!("node '{}': input '{s}' names no node in the graph", n.name))
            })?;
            if !keep[j] {
                stack.push(j);
            }
        }
    }
    for f in &mut feed_out {
        f.used = pos.get(f.node.as_str()).is_some_and(|&i| keep[i]);
    }
    drop(pos);
    let mut node: Vec<NodeDef> = Vec::with_capacity(keep.iter().filter(|&&k| k).count());
    node.extend(recv_nodes.into_iter().zip(&keep[..nr]).filter_map(|(n, &k)| k.then_some(n)));
    for (n, _) in graph.node.iter().zip(&keep[nr..nr + ng]).filter(|(_, &k)| k) {
        let mut n = n.clone();
        for i in 0..n.input.len() {
            if let Some(r) = rewire(&n, &n.input[i])? {
                n.input[i] = r;
            }
        }
        node.push(n);
    }
    node.extend(send_nodes.into_iter().zip(&keep[nr + ng..]).filter_map(|(n, &k)| k.then_some(n)));
    Ok(ClientGraph { graph: graph_like(graph, node), feeds: feed_out, fetches: fetch_out })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::{attr, Code, NodeAttrs, Tensor};

    const PS: &str = "/job:ps/replica:0/task:0/device:CPU:0";
    const W0: &str = "/job:worker/replica:0/task:0/device:CPU:0";

    fn konst(name: &str, dev: &str, v: Vec<f32>) -> NodeDef {
        let mut n = NodeDef { name: name.into(), op: "Const".into(), device: dev.into(), ..Default::default() };
        n.attr.insert("dtype".into(), attr::ty(DataType::Float));
        n.attr.insert("value".into(), attr::tensor(&Tensor::vec(v)));
        n
    }

    fn ident(name: &str, dev: &str, input: &str) -> NodeDef {
        let mut n = NodeDef { name: name.into(), op: "Identity".into(), device: dev.into(), ..Default::default() };
        n.input = vec![input.into()];
        n.attr.insert("T".into(), attr::ty(DataType::Float));
        n
    }

    const CLIENT: &str = W0;

    fn placeholder(name: &str) -> NodeDef {
        let mut n = NodeDef { name: name.into(), op: "Placeholder".into(), device: W0.into(), ..Default::default() };
        n.attr.insert("dtype".into(), attr::ty(DataType::Float));
        n
    }

    fn graph() -> GraphDef {
        let mut after = NodeDef { name: "after_x".into(), op: "NoOp".into(), ..Default::default() };
        after.input = vec!["^x".into()];
        GraphDef {
            node: vec![
                konst("w", PS, vec![1., 2.]),
                placeholder("x"),
                ident("y", W0, "x"),
                ident("z", W0, "y"),
                ident("wy", W0, "w"),
                after,
                konst("unused", PS, vec![0.]),
            ],
            ..Default::default()
        }
    }

    fn names(g: &GraphDef) -> Vec<&str> {
        g.node.iter().map(|n| n.name.as_str()).collect()
    }

    #[test]
    fn feeds_and_fetches_become_recv_and_send() {
        let g = graph();
        let c = rewrite_for_client(&g, &["x"], &["z:0", "z", "wy"], &["after_x"], CLIENT, 42).unwrap();
        assert_eq!(names(&c.graph), vec!["_recv_x_0", "w", "y", "z", "wy", "after_x", "_send_z_0", "_send_wy_0"]);
        let recv = &c.graph.node[0];
        assert_eq!(recv.op, "_Recv");
        assert_eq!(recv.device, CLIENT);
        assert_eq!(recv.attr_string("tensor_name").unwrap(), "x:0");
        assert_eq!(recv.attr_string("send_device").unwrap(), CLIENT);
        assert_eq!(recv.attr_string("recv_device").unwrap(), CLIENT);
        assert_eq!(recv.attr_int("send_device_incarnation").unwrap(), 42);
        assert!(recv.attr_bool("client_terminated").unwrap());
        assert_eq!(recv.attr_type("tensor_type").unwrap(), DataType::Float);
        let y = c.graph.node.iter().find(|n| n.name == "y").unwrap();
        assert_eq!(y.input, vec!["_recv_x_0"]);
        let after = c.graph.node.iter().find(|n| n.name == "after_x").unwrap();
        assert_eq!(after.input, vec!["^_recv_x_0"], "a fed Placeholder's control edges move to its _Recv");
        let send = c.graph.node.iter().find(|n| n.name == "_send_wy_0").unwrap();
        assert_eq!(send.input, vec!["wy"]);
        assert_eq!(send.device, CLIENT);
        assert_eq!(send.attr_type("T").unwrap(), DataType::Float);
        assert_eq!(send.attr_string("tensor_name").unwrap(), "wy:0");
        assert!(send.attr_bool("client_terminated").unwrap());
        assert_eq!(c.feeds.len(), 1);
        assert_eq!(c.feeds[0].key, rendezvous_key(CLIENT, 42, CLIENT, "x:0"));
        assert!(c.feeds[0].used);
        let fetch_names: Vec<&str> = c.fetches.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(fetch_names, vec!["z:0", "wy:0"], "duplicates merged, bare names canonical");
        assert_eq!(c.fetches[1].key, rendezvous_key(CLIENT, 42, CLIENT, "wy:0"));
    }

    #[test]
    fn pruning_drops_what_is_not_needed() {
        let g = graph();
        // Feeding y cuts x off; the feed of x is then unused.
        let c = rewrite_for_client(&g, &["y:0", "x:0"], &["z:0"], &[], CLIENT, 1).unwrap();
        assert_eq!(names(&c.graph), vec!["_recv_y_0", "z", "_send_z_0"]);
        assert_eq!(c.graph.node[1].input, vec!["_recv_y_0"]);
        assert_eq!(c.feeds.iter().map(|f| f.used).collect::<Vec<_>>(), vec![true, false]);
        // Fetching a fed tensor: the graph is just recv -> send.
        let c = rewrite_for_client(&g, &["x:0"], &["x:0"], &[], CLIENT, 1).unwrap();
        assert_eq!(names(&c.graph), vec!["_recv_x_0", "_send_x_0"]);
        assert_eq!(c.graph.node[1].input, vec!["_recv_x_0"]);
        // Targets only.
        let c = rewrite_for_client(&g, &["x:0"], &[], &["unused"], CLIENT, 1).unwrap();
        assert_eq!(names(&c.graph), vec!["unused"]);
        assert!(!c.feeds[0].used);
    }

    #[test]
    fn errors() {
        let g = graph();
        let e = rewrite_for_client(&g, &["nope:0"], &[], &[], CLIENT, 1).unwrap_err();
        assert_eq!(e.code, Code::NotFound);
        assert!(e.message.contains("feed 'nope:0'"), "{e}");
        let e = rewrite_for_client(&g, &[], &["w:2"], &[], CLIENT, 1).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("only 1 outputs"), "{e}");
        let e = rewrite_for_client(&g, &[], &[], &["ghost"], CLIENT, 1).unwrap_err();
        assert_eq!(e.code, Code::NotFound);
        let e = rewrite_for_client(&g, &["x:y"], &[], &[], CLIENT, 1).unwrap_err();
        assert!(e.message.contains("feed 'x:y'"), "{e}");
        let mut clash = graph();
        clash.node.push(konst("_send_w_0", PS, vec![1.]));
        let e = rewrite_for_client(&clash, &[], &["w"], &[], CLIENT, 1).unwrap_err();
        assert!(e.message.contains("'_send_w_0'"), "{e}");
    }
}
