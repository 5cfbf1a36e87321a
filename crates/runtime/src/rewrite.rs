//! Client feeds and fetches become `_Recv`/`_Send` nodes on the client device
//! (TensorFlow's RewriteGraphForExecution), then the graph is pruned to what the fetches
//! and targets need.

use std::collections::{HashMap, HashSet};

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::{attr, Status};
use ferroflow_graph::{parse_tensor_name, resolve_node};
use ferroflow_kernels::rendezvous_key;

/// A graph rewritten for one (feeds, fetches, targets) signature.
#[derive(Clone, Debug)]
pub struct Rewritten {
    /// The pruned graph with `_Recv`/`_Send` nodes.
    pub graph: GraphDef,
    /// Rendezvous key of each feed, in order.
    pub feed_keys: Vec<String>,
    /// Rendezvous key of each fetch, in order.
    pub fetch_keys: Vec<String>,
}

/// Normalizes `n` to `n:0`; validates the form.
pub fn canonical_tensor_name(s: &str) -> Result<String, Status> {
    let (n, i) = parse_tensor_name(s)?;
    Ok(format!("{n}:{i}"))
}

fn mangle(s: &str) -> String {
    s.replace(':', "_")
}

/// Rewrites `gd` for the given feeds, fetches (tensor names) and targets (node names),
/// with the client on `client_device` (incarnation `incarnation`).
pub fn rewrite_for_execution(
    gd: &GraphDef,
    feeds: &[String],
    fetches: &[String],
    targets: &[String],
    client_device: &str,
    incarnation: u64,
) -> Result<Rewritten, Status> {
    let mut nodes: Vec<NodeDef> = gd.node.clone();
    let index: HashMap<String, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), i)).collect();
    let out_type = |tensor: &str| -> Result<(String, i32), Status> {
        let (n, i) = parse_tensor_name(tensor)?;
        let &ni =
            index.get(n).ok_or_else(|| Status::not_found(format!("tensor '{tensor}' names no node in the graph")))?;
        let mut def = gd.node[ni].clone();
        let sig = resolve_node(&mut def)?;
        let (t, _) = sig.outputs.get(i).ok_or_else(|| {
            Status::not_found(format!("tensor '{tensor}': node '{n}' has only {} outputs", sig.outputs.len()))
        })?;
        Ok((format!("{n}:{i}"), t.as_i32()))
    };
    let mut feed_keys = Vec::new();
    let mut fed: HashMap<String, String> = HashMap::new();
    for f in feeds {
        let (name, dtype) = out_type(f)?;
        if fed.contains_key(&name) {
            return Err(Status::invalid_argument(format!("tensor '{name}' is fed more than once")));
        }
        let recv = format!("_recv_{}", mangle(&name));
        if index.contains_key(&recv) {
            return Err(Status::invalid_argument(format!("graph already has a node named '{recv}'")));
        }
        let mut n =
            NodeDef { name: recv.clone(), op: "_Recv".into(), device: client_device.into(), ..Default::default() };
        n.attr.insert(
            "tensor_type".into(),
            ferroflow_core::proto::AttrValue { value: Some(ferroflow_core::proto::attr_value::Value::Type(dtype)) },
        );
        n.attr.insert("tensor_name".into(), attr::string(&name));
        n.attr.insert("send_device".into(), attr::string(client_device));
        n.attr.insert("recv_device".into(), attr::string(client_device));
        n.attr.insert("send_device_incarnation".into(), attr::int(incarnation as i64));
        n.attr.insert("client_terminated".into(), attr::bool(true));
        feed_keys.push(rendezvous_key(client_device, incarnation, client_device, &name));
        fed.insert(name, recv);
        nodes.push(n);
    }
    if !fed.is_empty() {
        for n in nodes.iter_mut() {
            for inp in n.input.iter_mut() {
                if inp.starts_with('^') {
                    continue;
                }
                if let Ok(c) = canonical_tensor_name(inp) {
                    if let Some(r) = fed.get(&c) {
                        *inp = r.clone();
                    }
                }
            }
        }
    }
    let mut fetch_keys = Vec::new();
    let mut roots: Vec<String> = Vec::new();
    for f in fetches {
        let (name, dtype) = out_type(f)?;
        let send = format!("_send_{}", mangle(&name));
        if nodes.iter().any(|n| n.name == send) {
            return Err(Status::invalid_argument(format!("tensor '{name}' is fetched more than once")));
        }
        let src = fed.get(&name).cloned().unwrap_or_else(|| name.clone());
        let mut n =
            NodeDef { name: send.clone(), op: "_Send".into(), device: client_device.into(), ..Default::default() };
        n.input.push(src);
        n.attr.insert(
            "T".into(),
            ferroflow_core::proto::AttrValue { value: Some(ferroflow_core::proto::attr_value::Value::Type(dtype)) },
        );
        n.attr.insert("tensor_name".into(), attr::string(&name));
        n.attr.insert("send_device".into(), attr::string(client_device));
        n.attr.insert("recv_device".into(), attr::string(client_device));
        n.attr.insert("send_device_incarnation".into(), attr::int(incarnation as i64));
        n.attr.insert("client_terminated".into(), attr::bool(true));
        fetch_keys.push(rendezvous_key(client_device, incarnation, client_device, &name));
        roots.push(send);
        nodes.push(n);
    }
    for t in targets {
        if !index.contains_key(t.as_str()) {
            return Err(Status::not_found(format!("target '{t}' names no node in the graph")));
        }
        roots.push(t.clone());
    }
    let graph = prune(nodes, &roots, gd);
    Ok(Rewritten { graph, feed_keys, fetch_keys })
}

/// Keeps the nodes that `roots` depend on (through data and control inputs).
fn prune(nodes: Vec<NodeDef>, roots: &[String], gd: &GraphDef) -> GraphDef {
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let mut keep: HashSet<usize> = HashSet::new();
    let mut stack: Vec<usize> = roots.iter().filter_map(|r| index.get(r.as_str()).copied()).collect();
    while let Some(i) = stack.pop() {
        if !keep.insert(i) {
            continue;
        }
        for inp in &nodes[i].input {
            let name = inp.trim_start_matches('^');
            let name = parse_tensor_name(name).map(|(n, _)| n).unwrap_or(name);
            if let Some(&j) = index.get(name) {
                stack.push(j);
            }
        }
    }
    let mut kept: Vec<(usize, NodeDef)> = nodes.into_iter().enumerate().filter(|(i, _)| keep.contains(i)).collect();
    kept.sort_by_key(|(i, _)| *i);
    GraphDef {
        node: kept.into_iter().map(|(_, n)| n).collect(),
        versions: gd.versions.clone(),
        library: gd.library.clone(),
        ..Default::default()
    }
}
