//! The graph: an ordered list of validated `NodeDef`s (TensorFlow's GraphDef is the IR).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use ferroflow_core::proto::{FunctionDefLibrary, GraphDef, NodeDef, VersionDef};
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use crate::shape_fn::{Dims, ShapeCtx};
use crate::signature::{lookup_op, resolve_node, Signature};

/// The GraphDef producer version ferroflow writes (TensorFlow 2.21's range).
pub const GRAPH_DEF_VERSION: i32 = 2474;

/// A validated node with its signature and inferred output shapes.
#[derive(Clone, Debug)]
pub struct NodeEntry {
    /// The node, with default attrs filled.
    pub def: NodeDef,
    /// Input and output types.
    pub sig: Signature,
    /// Inferred output shapes.
    pub shapes: Vec<Dims>,
}

#[derive(Default)]
struct Inner {
    nodes: Vec<NodeEntry>,
    by_name: HashMap<String, usize>,
    status: Option<Status>,
    collections: BTreeMap<String, Vec<String>>,
    counters: HashMap<String, usize>,
    used: std::collections::HashSet<String>,
    /// Functions of imported GraphDefs (bodies of `If`, `PartitionedCall`, …), kept for
    /// the runtime.
    library: FunctionDefLibrary,
}

/// A dataflow graph under construction, shared by every [`crate::Scope`] that builds it.
#[derive(Clone, Default)]
pub struct Graph {
    inner: Arc<Mutex<Inner>>,
}

/// Parses `"node"`, `"node:3"` (data) — not control inputs.
pub fn parse_tensor_name(s: &str) -> Result<(&str, usize), Status> {
    if s.starts_with('^') {
        return Err(Status::invalid_argument(format!("'{s}' is a control input, not a tensor name")));
    }
    match s.rsplit_once(':') {
        Some((n, i)) if !n.is_empty() => match i.parse::<usize>() {
            Ok(i) => Ok((n, i)),
            Err(_) => Err(Status::invalid_argument(format!("bad tensor name '{s}': expected 'node' or 'node:index'"))),
        },
        Some(_) => Err(Status::invalid_argument(format!("bad tensor name '{s}': empty node name"))),
        None if !s.is_empty() => Ok((s, 0)),
        None => Err(Status::invalid_argument("empty tensor name")),
    }
}

/// The canonical form `node:index` of a tensor name (`"node"` is `"node:0"`); the one rule
/// by which sessions, the master and the client rewrite compare tensor names.
pub fn canonical_tensor_name(s: &str) -> Result<String, Status> {
    let (n, i) = parse_tensor_name(s)?;
    Ok(format!("{n}:{i}"))
}

/// Each name once, in first-seen order, and for each given name its position in that list:
/// how a step fetches a tensor asked for twice once.
pub fn unique_names(names: impl IntoIterator<Item = String>) -> (Vec<String>, Vec<usize>) {
    let mut uniq: Vec<String> = Vec::new();
    let pos = names
        .into_iter()
        .map(|n| match uniq.iter().position(|u| *u == n) {
            Some(p) => p,
            None => {
                uniq.push(n);
                uniq.len() - 1
            }
        })
        .collect();
    (uniq, pos)
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Graph {
        Graph::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether two handles point at one graph.
    pub fn same(&self, other: &Graph) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The first construction error, if any.
    pub fn status(&self) -> Result<(), Status> {
        match &self.lock().status {
            Some(s) => Err(s.clone()),
            None => Ok(()),
        }
    }

    /// Records a construction error (the first one is kept).
    pub fn record_error(&self, s: Status) {
        let mut g = self.lock();
        if g.status.is_none() {
            g.status = Some(s);
        }
    }

    /// A name not yet used by a node or scope: `base`, else `base_1`, `base_2`, …
    pub fn unique_name(&self, base: &str) -> String {
        let mut g = self.lock();
        let mut n = g.counters.get(base).copied().unwrap_or(0);
        loop {
            let cand = if n == 0 { base.to_string() } else { format!("{base}_{n}") };
            n += 1;
            if !g.used.contains(&cand) && !g.by_name.contains_key(&cand) {
                g.counters.insert(base.to_string(), n);
                g.used.insert(cand.clone());
                return cand;
            }
        }
    }

    /// Validates and adds a node: the op must exist, attrs must check, inputs must name
    /// existing outputs of matching types, and the name must be new.
    pub fn add_node(&self, mut node: NodeDef) -> Result<NodeEntry, Status> {
        if crate::registry::op_registry().get(&node.op).is_none() {
            // A function of the library called by name runs as a call of it.
            let lib = self.lock().library.clone();
            crate::call_by_name::call_by_name(&mut node, &lib)?;
        }
        let sig = resolve_node(&mut node)?;
        let mut g = self.lock();
        if g.by_name.contains_key(&node.name) {
            return Err(Status::invalid_argument(format!("duplicate node name '{}'", node.name)));
        }
        let mut in_shapes = Vec::new();
        let mut consts = Vec::new();
        let mut k = 0;
        for inp in &node.input {
            if let Some(ctl) = inp.strip_prefix('^') {
                if !g.by_name.contains_key(ctl) {
                    return Err(Status::invalid_argument(format!(
                        "node '{}': control input '^{ctl}' names no node in the graph",
                        node.name
                    )));
                }
                continue;
            }
            let (src, idx) = parse_tensor_name(inp).map_err(|e| e.context(format!("node '{}'", node.name)))?;
            let Some(&si) = g.by_name.get(src) else {
                return Err(Status::invalid_argument(format!(
                    "node '{}': input '{inp}' names no node in the graph",
                    node.name
                )));
            };
            let se = &g.nodes[si];
            let Some(&(st, sref)) = se.sig.outputs.get(idx) else {
                return Err(Status::invalid_argument(format!(
                    "node '{}': input '{inp}' but '{src}' has only {} outputs",
                    node.name,
                    se.sig.outputs.len()
                )));
            };
            let (want, want_ref) = sig.inputs[k];
            if st != want {
                return Err(Status::invalid_argument(format!(
                    "node '{}' (op {}): input {k} '{inp}' is {st} but {want} is expected",
                    node.name, node.op
                )));
            }
            if want_ref && !sref {
                return Err(Status::invalid_argument(format!(
                    "node '{}' (op {}): input {k} '{inp}' must be a reference (a ref-variable), got a value",
                    node.name, node.op
                )));
            }
            in_shapes.push(se.shapes.get(idx).cloned().flatten());
            consts.push(if se.def.op == "Const" { shape_const(&se.def) } else { None });
            k += 1;
        }
        let def = lookup_op(&node)?;
        let shapes = match def.shape_fn {
            Some(f) => {
                let mut s = f(&ShapeCtx { node: &node, inputs: &in_shapes, consts: &consts })?;
                s.resize(sig.outputs.len(), None);
                s
            }
            None => vec![None; sig.outputs.len()],
        };
        let entry = NodeEntry { def: node, sig, shapes };
        let i = g.nodes.len();
        g.by_name.insert(entry.def.name.clone(), i);
        g.nodes.push(entry.clone());
        Ok(entry)
    }

    /// A node by name.
    pub fn node(&self, name: &str) -> Option<NodeEntry> {
        let g = self.lock();
        g.by_name.get(name).map(|&i| g.nodes[i].clone())
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.lock().nodes.len()
    }

    /// All nodes, in insertion (topological) order.
    pub fn nodes(&self) -> Vec<NodeEntry> {
        self.lock().nodes.clone()
    }

    /// Nodes added at or after index `from` (for ExtendSession).
    pub fn nodes_since(&self, from: usize) -> Vec<NodeDef> {
        let g = self.lock();
        g.nodes[from.min(g.nodes.len())..].iter().map(|e| e.def.clone()).collect()
    }

    /// Output type of `node:idx`.
    pub fn output_type(&self, name: &str, idx: usize) -> Option<DataType> {
        self.node(name).and_then(|e| e.sig.outputs.get(idx).map(|o| o.0))
    }

    /// The graph as a GraphDef.
    pub fn to_graph_def(&self) -> GraphDef {
        self.graph_def_since(0)
    }

    /// The nodes added at or after index `from`, with the versions and the whole function
    /// library (what ExtendSession sends).
    pub fn graph_def_since(&self, from: usize) -> GraphDef {
        let g = self.lock();
        GraphDef {
            node: g.nodes[from.min(g.nodes.len())..].iter().map(|e| e.def.clone()).collect(),
            versions: Some(VersionDef { producer: GRAPH_DEF_VERSION, min_consumer: 0, bad_consumers: vec![] }),
            library: (!g.library.function.is_empty() || !g.library.gradient.is_empty()).then(|| g.library.clone()),
            ..Default::default()
        }
    }

    /// Imports a GraphDef (from TensorFlow or ferroflow) into a new graph; nodes may come in
    /// any order. Every node is validated.
    pub fn import(gd: &GraphDef) -> Result<Graph, Status> {
        let g = Graph::new();
        g.import_into(gd, "")?;
        Ok(g)
    }

    /// Adds a GraphDef's nodes, with an optional name prefix (`prefix/`).
    pub fn import_into(&self, gd: &GraphDef, prefix: &str) -> Result<(), Status> {
        if let Some(lib) = &gd.library {
            self.add_functions(lib)?;
        }
        let rename = |s: &str| -> String {
            if prefix.is_empty() {
                s.to_string()
            } else if let Some(c) = s.strip_prefix('^') {
                format!("^{prefix}/{c}")
            } else {
                format!("{prefix}/{s}")
            }
        };
        let mut pending: Vec<NodeDef> = gd
            .node
            .iter()
            .map(|n| {
                let mut n = n.clone();
                n.name = rename(&n.name);
                n.input = n.input.iter().map(|i| rename(i)).collect();
                n
            })
            .collect();
        let names: std::collections::HashSet<String> = pending.iter().map(|n| n.name.clone()).collect();
        let mut back_edges: Vec<(String, usize, String)> = Vec::new();
        while !pending.is_empty() {
            let before = pending.len();
            let mut rest = Vec::new();
            for n in pending {
                let ready = n.input.iter().all(|i| {
                    let src = i.trim_start_matches('^');
                    let src = parse_tensor_name(src).map(|(s, _)| s).unwrap_or(src);
                    self.node(src).is_some() || !names.contains(src)
                });
                if ready {
                    self.add_node(n)?;
                } else {
                    rest.push(n);
                }
            }
            if rest.len() == before {
                // A while loop's back edge: a `Merge` with one input present goes in with
                // its missing inputs standing in for by that one, and gets them back (type
                // checked) once everything is in, as TensorFlow's importer does.
                let ready_input = |i: &String| {
                    !i.starts_with('^') && parse_tensor_name(i).is_ok_and(|(src, _)| self.node(src).is_some())
                };
                let pos = rest
                    .iter()
                    .position(|n| matches!(n.op.as_str(), "Merge" | "RefMerge") && n.input.iter().any(ready_input));
                let Some(pos) = pos else {
                    return Err(Status::invalid_argument(format!(
                        "GraphDef has a cycle or missing inputs through node '{}'",
                        rest[0].name
                    )));
                };
                let mut n = rest.remove(pos);
                let Some(stand_in) = n.input.iter().find(|i| ready_input(i)).cloned() else {
                    return Err(Status::internal(format!(
                        "node '{}': no ready input to stand in for a back edge",
                        n.name
                    )));
                };
                let mut missing = Vec::new();
                let mut k = 0;
                for inp in n.input.iter_mut() {
                    if inp.starts_with('^') {
                        continue;
                    }
                    if !ready_input(inp) {
                        missing.push((k, std::mem::replace(inp, stand_in.clone())));
                    }
                    k += 1;
                }
                let name = n.name.clone();
                self.add_node(n)?;
                back_edges.extend(missing.into_iter().map(|(k, inp)| (name.clone(), k, inp)));
            }
            pending = rest;
        }
        for (node, k, inp) in back_edges {
            self.update_input(&node, k, &inp)?;
        }
        Ok(())
    }

    /// Replaces data input `k` of `node` by `input` (TensorFlow's `_update_input`: how a
    /// while loop's `Merge` gets its `NextIteration` back edge). The new input must exist
    /// and have the type the node expects there.
    pub fn update_input(&self, node: &str, k: usize, input: &str) -> Result<(), Status> {
        let (src, idx) = parse_tensor_name(input).map_err(|e| e.context(format!("node '{node}'")))?;
        let mut g = self.lock();
        let &si = g.by_name.get(src).ok_or_else(|| {
            Status::invalid_argument(format!("node '{node}': input '{input}' names no node in the graph"))
        })?;
        let &(st, sref) = g.nodes[si].sig.outputs.get(idx).ok_or_else(|| {
            Status::invalid_argument(format!("node '{node}': input '{input}' but '{src}' has fewer outputs"))
        })?;
        let &di = g
            .by_name
            .get(node)
            .ok_or_else(|| Status::invalid_argument(format!("update_input: no node '{node}' in the graph")))?;
        let e = &mut g.nodes[di];
        let Some(&(want, want_ref)) = e.sig.inputs.get(k) else {
            return Err(Status::invalid_argument(format!("node '{node}' has no data input {k}")));
        };
        if st != want || (want_ref && !sref) {
            return Err(Status::invalid_argument(format!(
                "node '{node}' (op {}): input {k} '{input}' is {st}{} but {want}{} is expected",
                e.def.op,
                if sref { " ref" } else { "" },
                if want_ref { " ref" } else { "" }
            )));
        }
        let slot = e.def.input.iter().enumerate().filter(|(_, i)| !i.starts_with('^')).nth(k).map(|(j, _)| j);
        match slot {
            Some(j) => {
                e.def.input[j] = input.to_string();
                Ok(())
            }
            None => Err(Status::invalid_argument(format!("node '{node}' has no data input {k}"))),
        }
    }

    /// Adds a GraphDef's function library (function names are global: one already present
    /// must be identical).
    pub fn add_functions(&self, lib: &FunctionDefLibrary) -> Result<(), Status> {
        let mut g = self.lock();
        for f in &lib.function {
            let name = f.signature.as_ref().map(|s| s.name.as_str()).unwrap_or("");
            if name.is_empty() {
                return Err(Status::invalid_argument("the GraphDef's library has a function without a name"));
            }
            match g.library.function.iter().find(|h| h.signature.as_ref().is_some_and(|s| s.name == name)) {
                Some(h) if h == f => {}
                Some(_) => {
                    return Err(Status::invalid_argument(format!(
                        "function '{name}' is already in the graph's library with a different definition"
                    )))
                }
                None => g.library.function.push(f.clone()),
            }
        }
        for d in &lib.gradient {
            if !g.library.gradient.contains(d) {
                g.library.gradient.push(d.clone());
            }
        }
        Ok(())
    }

    /// Adds a node name to a collection (e.g. `variables`, `trainable_variables`).
    pub fn add_to_collection(&self, key: &str, name: &str) {
        let mut g = self.lock();
        let c = g.collections.entry(key.to_string()).or_default();
        if !c.iter().any(|n| n == name) {
            c.push(name.to_string());
        }
    }

    /// The names in a collection.
    pub fn collection(&self, key: &str) -> Vec<String> {
        self.lock().collections.get(key).cloned().unwrap_or_default()
    }

    /// Value of a `Const` node's output, if `name` is one.
    pub fn const_value(&self, name: &str) -> Option<Tensor> {
        self.node(name).filter(|e| e.def.op == "Const").and_then(|e| e.def.attr_tensor("value").ok())
    }
}

/// A `Const`'s value as shape functions read it (shapes, axes, sizes, range bounds: small
/// numeric tensors), decoded only when it is one: a large constant used by many nodes (a 1 MiB
/// string joined 2^17 times) must not be decoded once per use.
fn shape_const(def: &ferroflow_core::proto::NodeDef) -> Option<ferroflow_core::Tensor> {
    use ferroflow_core::proto::attr_value::Value;
    let Some(Value::Tensor(t)) = def.attr.get("value").and_then(|a| a.value.as_ref()) else { return None };
    let int = DataType::from_proto(t.dtype).ok()?.0.byte_size().is_some();
    let elems =
        t.tensor_shape.as_ref().map_or(Some(1i64), |s| s.dim.iter().try_fold(1i64, |a, d| a.checked_mul(d.size)));
    if !int || !elems.is_some_and(|n| (0..=4096).contains(&n)) {
        return None;
    }
    def.attr_tensor("value").ok()
}
