//! Splits a placed graph into one GraphDef per task (or per device), inserting `_Send`/`_Recv`
//! pairs on every edge that crosses partitions, as TensorFlow's `graph_partition.cc`
//! (docs/protocol.md, "Steps, partitions and rendezvous keys"):
//!
//! - the source side gets a `_Send` of `src:slot`, the destination side a `_Recv`;
//! - both carry `tensor_name = "edge_<edge_id>_<src>"`, `send_device`, `recv_device` (full
//!   names), `send_device_incarnation` (the sender device's incarnation) and
//!   `client_terminated = false`; `_Send` adds `T`, `_Recv` adds `tensor_type`;
//! - a control edge sends a dummy `Const` (DT_FLOAT, shape [0], `^src`); the receiver feeds
//!   an `Identity` and the destination node gets `^identity`;
//! - one pair is shared per (src, slot, destination partition).
//!
//! Node naming: every inserted node is named `<src>_S<k>` where `<src>` is the edge's source
//! node and `k` a counter over the whole call (the names TF's master gives them), skipping
//! names already in the graph. Edge ids number every input of every node in graph order
//! (node by node, input by input), so tensor names are deterministic; the pair of an edge
//! shared by several consumers takes the id of its first edge.
//!
//! Data types come from the op registry (`_Send`/`_Recv` are registered in the graph crate);
//! a reference output is sent as its value (T = base type).

use std::collections::{BTreeMap, HashMap};

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::{attr, DataType, DeviceName, Status, Tensor};
use ferroflow_graph::Signature;

use crate::control_loops::{self, ControlLoops};
use ferroflow_graph::graph_util::{graph_like, parse_input, signature, tensor_input, Input, NameGen, SendRecv};

/// What a partition is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SplitBy {
    /// One partition per task, `/job:J/replica:R/task:T` (what a master does).
    #[default]
    Task,
    /// One partition per device (what a worker does within its partition).
    Device,
}

/// Inputs of [`partition`] besides the graph.
#[derive(Clone, Copy, Debug)]
pub struct PartitionOptions<'a> {
    /// Full device name → incarnation (from each task's GetStatus).
    pub incarnations: &'a HashMap<String, u64>,
    /// Partition granularity.
    pub split_by: SplitBy,
}

struct Partitioner<'a> {
    graph: &'a GraphDef,
    loops: Option<&'a ControlLoops>,
    opts: &'a PartitionOptions<'a>,
    index: HashMap<&'a str, usize>,
    device: Vec<String>,
    loc: Vec<String>,
    sigs: HashMap<usize, Signature>,
    names: NameGen,
    parts: BTreeMap<String, Vec<Part>>,
    /// Per node whose inputs cross partitions: (input position, the input that replaces it).
    rewired: HashMap<usize, Vec<(usize, String)>>,
    /// (src, slot or -1 for control, destination partition) → the node the destination reads.
    dup: HashMap<(usize, i64, String), String>,
}

impl<'a> Partitioner<'a> {
    fn new(
        graph: &'a GraphDef,
        loops: Option<&'a ControlLoops>,
        loc: Vec<String>,
        opts: &'a PartitionOptions<'a>,
    ) -> Result<Self, Status> {
        let mut index = HashMap::with_capacity(graph.node.len());
        let mut device = Vec::with_capacity(graph.node.len());
        for (i, n) in graph.node.iter().enumerate() {
            if index.insert(n.name.as_str(), i).is_some() {
                return Err(Status::invalid_argument(format!("graph has two nodes named '{}'", n.name)));
            }
            device.push(full_device(n)?.to_string());
        }
        Ok(Partitioner {
            graph,
            loops,
            opts,
            index,
            device,
            loc,
            sigs: HashMap::new(),
            names: NameGen::new(graph.node.iter().map(|n| n.name.as_str())),
            parts: BTreeMap::new(),
            rewired: HashMap::new(),
            dup: HashMap::new(),
        })
    }

    fn sig(&mut self, i: usize) -> Result<&Signature, Status> {
        if !self.sigs.contains_key(&i) {
            let s = signature(&self.graph.node[i])?;
            self.sigs.insert(i, s);
        }
        Ok(&self.sigs[&i])
    }

    fn push(&mut self, loc: &str, n: NodeDef) {
        self.parts.entry(loc.to_string()).or_default().push(Part::New(Box::new(n)));
    }

    /// Splits the edge `input` (the `data_pos`-th data input, if data) of node `di`, and
    /// returns the input string that replaces it in the destination.
    fn split_edge(&mut self, di: usize, input: Input<'_>, data_pos: usize, edge_id: usize) -> Result<String, Status> {
        let g = self.graph;
        let node = &g.node[di];
        let src = input.node();
        let &si = self.index.get(src).ok_or_else(|| {
            Status::invalid_argument(format!("node '{}': input '{src}' names no node in the graph", node.name))
        })?;
        let (slot, control) = match input {
            Input::Data(_, k) => (k as i64, false),
            Input::Control(_) => (-1, true),
        };
        let dloc = self.loc[di].clone();
        let key = (si, slot, dloc.clone());
        if let Some(r) = self.dup.get(&key) {
            return Ok(if control { format!("^{r}") } else { r.clone() });
        }
        let sloc = self.loc[si].clone();
        let send_dev = self.device[si].clone();
        let recv_dev = self.device[di].clone();
        let incarnation = *self.opts.incarnations.get(&send_dev).ok_or_else(|| {
            let mut known: Vec<&str> = self.opts.incarnations.keys().map(String::as_str).collect();
            known.sort();
            Status::failed_precondition(format!(
                "no incarnation is known for device '{send_dev}' (sender of edge '{src}' -> '{}'); \
                 known devices: [{}]",
                node.name,
                known.join(", ")
            ))
        })?;
        let (send_input, dtype) = if control {
            let c = self.names.name(src);
            let mut dummy =
                NodeDef { name: c.clone(), op: "Const".into(), device: send_dev.clone(), ..Default::default() };
            dummy.input.push(format!("^{src}"));
            dummy.attr.insert("dtype".into(), attr::ty(DataType::Float));
            let empty = Tensor::new(vec![0usize], Vec::<f32>::new()).map_err(|e| e.context("dummy control Const"))?;
            dummy.attr.insert("value".into(), attr::tensor(&empty));
            self.push(&sloc, dummy);
            (c, DataType::Float)
        } else {
            let k = slot as usize;
            let outputs = self.sig(si)?.outputs.len();
            let dtype = self.sig(si)?.outputs.get(k).map(|o| o.0).ok_or_else(|| {
                Status::invalid_argument(format!(
                    "node '{}': input '{src}:{k}' but '{src}' has only {outputs} outputs",
                    self.graph.node[di].name
                ))
            })?;
            if self.sig(di)?.inputs.get(data_pos).is_some_and(|i| i.1) {
                let node = &self.graph.node[di];
                return Err(Status::invalid_argument(format!(
                    "node '{}' (op {}) on {} takes a reference input from '{src}' on {}; a reference cannot \
                     cross devices: the placer must colocate them",
                    node.name, node.op, recv_dev, send_dev
                )));
            }
            (tensor_input(src, k), dtype)
        };
        let tensor_name = format!("edge_{edge_id}_{src}");
        let sr = SendRecv {
            tensor_name: &tensor_name,
            send_device: &send_dev,
            send_device_incarnation: incarnation,
            recv_device: &recv_dev,
            client_terminated: false,
        };
        let send = sr.send(self.names.name(src), send_input, dtype, &send_dev);
        let mut recv = sr.recv(self.names.name(src), dtype, &recv_dev);
        if let Some(merge) = self.loops.map(|l| l.recv_control(si, &dloc)).transpose()?.flatten() {
            recv.input.push(format!("^{merge}"));
        }
        let recv_name = recv.name.clone();
        self.push(&sloc, send);
        self.push(&dloc, recv);
        let target = if control {
            let id = self.names.name(src);
            let mut ident = NodeDef { name: id.clone(), op: "Identity".into(), device: recv_dev, ..Default::default() };
            ident.input.push(recv_name);
            ident.attr.insert("T".into(), attr::ty(DataType::Float));
            self.push(&dloc, ident);
            id
        } else {
            recv_name
        };
        self.dup.insert(key, target.clone());
        Ok(if control { format!("^{target}") } else { target })
    }

    /// Decides every partition's nodes; the graph's own nodes are referred to by index,
    /// so that [`Layout::assemble`] can move them instead of copying them.
    fn run(mut self) -> Result<Layout, Status> {
        let g = self.graph;
        let mut edge_id = 0usize;
        for di in 0..g.node.len() {
            let node = &g.node[di];
            let mut data_pos = 0;
            for (pos, s) in node.input.iter().enumerate() {
                let input = parse_input(node, s)?;
                let id = edge_id;
                edge_id += 1;
                let is_data = matches!(input, Input::Data(..));
                let crosses = match self.index.get(input.node()) {
                    Some(&si) => self.loc[si] != self.loc[di],
                    None => true, // split_edge reports the missing node
                };
                if crosses {
                    let r = self.split_edge(di, input, data_pos, id)?;
                    self.rewired.entry(di).or_default().push((pos, r));
                }
                if is_data {
                    data_pos += 1;
                }
            }
            let loc = self.loc[di].clone();
            self.parts.entry(loc).or_default().push(Part::Node(di));
        }
        Ok(Layout { parts: self.parts, rewired: self.rewired })
    }
}

/// One node of a partition: a node of the graph (by index) or one the partitioner added.
enum Part {
    Node(usize),
    New(Box<NodeDef>),
}

/// The partitions, before the graph's nodes are placed in them.
struct Layout {
    parts: BTreeMap<String, Vec<Part>>,
    rewired: HashMap<usize, Vec<(usize, String)>>,
}

impl Layout {
    /// The partition graphs, taking node `i` of the graph from `node(i)` (called once per
    /// node) and the versions and library from `like`.
    fn assemble(mut self, like: &GraphDef, mut node: impl FnMut(usize) -> NodeDef) -> BTreeMap<String, GraphDef> {
        let mut out = BTreeMap::new();
        for (loc, parts) in std::mem::take(&mut self.parts) {
            let mut nodes = Vec::with_capacity(parts.len());
            for p in parts {
                nodes.push(match p {
                    Part::New(n) => *n,
                    Part::Node(i) => {
                        let mut n = node(i);
                        for (pos, r) in self.rewired.remove(&i).unwrap_or_default() {
                            n.input[pos] = r;
                        }
                        n
                    }
                });
            }
            out.insert(loc, graph_like(like, nodes));
        }
        out
    }
}

/// Partitions a placed graph (every node has a full device name) into one GraphDef per task
/// (or device), keyed by the task name `/job:J/replica:R/task:T` (or the full device name).
/// Each partition keeps the graph's `versions` and function library.
///
/// Errors: a cycle (outside loop back edges; across tasks it would otherwise wait for
/// itself until the step's deadline), a node without a full device, an input naming no node or a missing output, an
/// unknown op on a crossing edge, a reference edge across partitions, or a sender device
/// with no known incarnation.
pub fn partition(graph: &GraphDef, opts: &PartitionOptions<'_>) -> Result<BTreeMap<String, GraphDef>, Status> {
    ferroflow_graph::graph_cycles::check_acyclic(graph)?;
    let loc = locations(graph, opts)?;
    match control_loops::add(graph, &loc)? {
        None => Ok(Partitioner::new(graph, None, loc, opts)?.run()?.assemble(graph, |i| graph.node[i].clone())),
        Some(loops) => {
            let loc = locations(&loops.graph, opts)?;
            let layout = Partitioner::new(&loops.graph, Some(&loops), loc, opts)?.run()?;
            Ok(layout.assemble(&loops.graph, |i| loops.graph.node[i].clone()))
        }
    }
}

/// [`partition`] taking the graph: its nodes move into the partitions instead of being
/// copied (a large graph is then held once, not twice, while it is partitioned).
pub fn partition_graph(mut graph: GraphDef, opts: &PartitionOptions<'_>) -> Result<BTreeMap<String, GraphDef>, Status> {
    ferroflow_graph::graph_cycles::check_acyclic(&graph)?;
    let loc = locations(&graph, opts)?;
    let take = |g: &mut GraphDef, layout: Layout| {
        let mut nodes = std::mem::take(&mut g.node);
        layout.assemble(g, |i| std::mem::take(&mut nodes[i]))
    };
    match control_loops::add(&graph, &loc)? {
        None => {
            let layout = Partitioner::new(&graph, None, loc, opts)?.run()?;
            Ok(take(&mut graph, layout))
        }
        Some(mut loops) => {
            drop(graph);
            let loc = locations(&loops.graph, opts)?;
            let layout = Partitioner::new(&loops.graph, Some(&loops), loc, opts)?.run()?;
            let mut g = std::mem::take(&mut loops.graph);
            Ok(take(&mut g, layout))
        }
    }
}

/// Each node's partition: its task (or device).
fn locations(g: &GraphDef, opts: &PartitionOptions<'_>) -> Result<Vec<String>, Status> {
    g.node
        .iter()
        .map(|n| {
            full_device(n).map(|d| match opts.split_by {
                SplitBy::Task => d.task_name(),
                SplitBy::Device => d.to_string(),
            })
        })
        .collect()
}

/// A node's device, which must be a full device name.
fn full_device(n: &NodeDef) -> Result<DeviceName, Status> {
    let d = DeviceName::parse(&n.device).map_err(|e| e.context(format!("node '{}'", n.name)))?;
    if !d.is_full() {
        return Err(Status::invalid_argument(format!(
            "node '{}' (op {}) has device '{}', which is not a full device name \
             (/job:J/replica:R/task:T/device:TYPE:i); place the graph before partitioning it",
            n.name, n.op, n.device
        )));
    }
    Ok(d)
}

#[cfg(test)]
#[path = "partition_tests.rs"]
mod tests;
