//! Splits a placed graph into one GraphDef per task (or per device), inserting `_Send`/`_Recv`
//! pairs on every edge that crosses partitions, as TensorFlow's `graph_partition.cc`
//! (tf-wire.md §5):
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
use crate::graph_util::{graph_like, parse_input, signature, tensor_input, Input, NameGen, SendRecv};

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
    parts: BTreeMap<String, Vec<NodeDef>>,
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
        self.parts.entry(loc.to_string()).or_default().push(n);
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

    fn run(mut self) -> Result<BTreeMap<String, GraphDef>, Status> {
        let g = self.graph;
        let mut edge_id = 0usize;
        for di in 0..g.node.len() {
            let node = &g.node[di];
            let mut out = node.clone();
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
                    out.input[pos] = self.split_edge(di, input, data_pos, id)?;
                }
                if is_data {
                    data_pos += 1;
                }
            }
            let loc = self.loc[di].clone();
            self.push(&loc, out);
        }
        Ok(self.parts.into_iter().map(|(loc, node)| (loc, graph_like(g, node))).collect())
    }
}

/// Partitions a placed graph (every node has a full device name) into one GraphDef per task
/// (or device), keyed by the task name `/job:J/replica:R/task:T` (or the full device name).
/// Each partition keeps the graph's `versions` and function library.
///
/// Errors: a node without a full device, an input naming no node or a missing output, an
/// unknown op on a crossing edge, a reference edge across partitions, or a sender device
/// with no known incarnation.
pub fn partition(graph: &GraphDef, opts: &PartitionOptions<'_>) -> Result<BTreeMap<String, GraphDef>, Status> {
    let loc_of = |g: &GraphDef| -> Result<Vec<String>, Status> {
        g.node
            .iter()
            .map(|n| {
                full_device(n).map(|d| match opts.split_by {
                    SplitBy::Task => d.task_name(),
                    SplitBy::Device => d.to_string(),
                })
            })
            .collect()
    };
    let loc = loc_of(graph)?;
    match control_loops::add(graph, &loc)? {
        None => Partitioner::new(graph, None, loc, opts)?.run(),
        Some(loops) => {
            let loc = loc_of(&loops.graph)?;
            Partitioner::new(&loops.graph, Some(&loops), loc, opts)?.run()
        }
    }
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
mod tests {
    use super::*;
    use crate::test_graphs::{ident, konst, PS, W0, W1};
    use ferroflow_core::{Code, NodeAttrs};
    use ferroflow_kernels::rendezvous_key;

    fn incarnations() -> HashMap<String, u64> {
        [(PS, 0xa1b2c3d4e5f60708u64), (W0, 7), (W1, 9)].into_iter().map(|(d, i)| (d.to_string(), i)).collect()
    }

    fn key_of(n: &NodeDef) -> String {
        rendezvous_key(
            &n.attr_string("send_device").unwrap(),
            n.attr_int("send_device_incarnation").unwrap() as u64,
            &n.attr_string("recv_device").unwrap(),
            &n.attr_string("tensor_name").unwrap(),
        )
    }

    fn find<'g>(g: &'g GraphDef, name: &str) -> &'g NodeDef {
        g.node.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("no node {name} in {g:?}"))
    }

    fn ops(g: &GraphDef) -> Vec<(String, String)> {
        g.node.iter().map(|n| (n.name.clone(), n.op.clone())).collect()
    }

    fn run(nodes: Vec<NodeDef>) -> Result<BTreeMap<String, GraphDef>, Status> {
        let inc = incarnations();
        let g = GraphDef { node: nodes, ..Default::default() };
        partition(&g, &PartitionOptions { incarnations: &inc, split_by: SplitBy::Task })
    }

    #[test]
    fn ps_const_worker_consumer() {
        let mut noop = NodeDef { name: "step".into(), op: "NoOp".into(), device: W0.into(), ..Default::default() };
        noop.input = vec!["^x".into(), "^y".into()];
        let parts =
            run(vec![konst("w", PS, vec![1., 2.]), konst("x", W0, vec![3., 4.]), ident("y", W0, "w"), noop]).unwrap();
        assert_eq!(parts.keys().collect::<Vec<_>>(), vec!["/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"]);
        let ps = &parts["/job:ps/replica:0/task:0"];
        let wk = &parts["/job:worker/replica:0/task:0"];
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(ops(ps), vec![s("w", "Const"), s("w_S0", "_Send")]);
        assert_eq!(ops(wk), vec![s("x", "Const"), s("w_S1", "_Recv"), s("y", "Identity"), s("step", "NoOp")]);
        let send = find(ps, "w_S0");
        let recv = find(wk, "w_S1");
        assert_eq!(send.input, vec!["w"]);
        assert_eq!(send.device, PS);
        assert_eq!(send.attr_type("T").unwrap(), DataType::Float);
        assert_eq!(recv.attr_type("tensor_type").unwrap(), DataType::Float);
        assert_eq!(recv.device, W0);
        for n in [send, recv] {
            assert_eq!(n.attr_string("tensor_name").unwrap(), "edge_0_w");
            assert_eq!(n.attr_string("send_device").unwrap(), PS);
            assert_eq!(n.attr_string("recv_device").unwrap(), W0);
            assert!(!n.attr_bool("client_terminated").unwrap());
        }
        assert_eq!(key_of(send), key_of(recv));
        assert_eq!(key_of(send), rendezvous_key(PS, 0xa1b2c3d4e5f60708, W0, "edge_0_w"));
        assert_eq!(find(wk, "y").input, vec!["w_S1"]);
        assert_eq!(find(wk, "step").input, vec!["^x", "^y"]);
    }

    #[test]
    fn control_edge_across_tasks() {
        let mut noop = NodeDef { name: "done".into(), op: "NoOp".into(), device: W0.into(), ..Default::default() };
        noop.input = vec!["^w".into()];
        let parts = run(vec![konst("w", PS, vec![1.]), noop]).unwrap();
        let ps = &parts["/job:ps/replica:0/task:0"];
        let wk = &parts["/job:worker/replica:0/task:0"];
        let dummy = find(ps, "w_S0");
        assert_eq!(dummy.op, "Const");
        assert_eq!(dummy.input, vec!["^w"]);
        let t = dummy.attr_tensor("value").unwrap();
        assert_eq!((t.dtype(), t.shape().dims().to_vec()), (DataType::Float, vec![0]));
        let send = find(ps, "w_S1");
        assert_eq!((send.op.as_str(), send.input.clone()), ("_Send", vec!["w_S0".to_string()]));
        let recv = find(wk, "w_S2");
        assert_eq!(recv.op, "_Recv");
        assert_eq!(key_of(send), key_of(recv));
        assert_eq!(recv.attr_string("tensor_name").unwrap(), "edge_0_w");
        let ident = find(wk, "w_S3");
        assert_eq!((ident.op.as_str(), ident.input.clone()), ("Identity", vec!["w_S2".to_string()]));
        assert_eq!(find(wk, "done").input, vec!["^w_S3"]);
    }

    #[test]
    fn pairs_are_shared_per_destination_partition() {
        let parts = run(vec![
            konst("w", PS, vec![1.]),
            ident("a", W0, "w"),
            ident("b", W0, "w:0"),
            ident("c", W1, "w"),
            ident("d", W1, "w"),
        ])
        .unwrap();
        let ps = &parts["/job:ps/replica:0/task:0"];
        let sends: Vec<&NodeDef> = ps.node.iter().filter(|n| n.op == "_Send").collect();
        assert_eq!(sends.len(), 2, "one pair per destination task: {:?}", ops(ps));
        let w0 = &parts["/job:worker/replica:0/task:0"];
        let w1 = &parts["/job:worker/replica:0/task:1"];
        assert_eq!(w0.node.iter().filter(|n| n.op == "_Recv").count(), 1);
        assert_eq!(w1.node.iter().filter(|n| n.op == "_Recv").count(), 1);
        let r0 = w0.node.iter().find(|n| n.op == "_Recv").unwrap();
        let r1 = w1.node.iter().find(|n| n.op == "_Recv").unwrap();
        assert_eq!(find(w0, "a").input, vec![r0.name.clone()]);
        assert_eq!(find(w0, "b").input, vec![r0.name.clone()]);
        assert_eq!(find(w1, "c").input, vec![r1.name.clone()]);
        assert_eq!(find(w1, "d").input, vec![r1.name.clone()]);
        // Edges are numbered a: 0, b: 1, c: 2, d: 3.
        assert_eq!(r0.attr_string("tensor_name").unwrap(), "edge_0_w");
        assert_eq!(r1.attr_string("tensor_name").unwrap(), "edge_2_w");
        let keys: Vec<String> = sends.iter().map(|s| key_of(s)).collect();
        assert_eq!(keys, vec![key_of(r0), key_of(r1)]);
        assert!(key_of(r1).contains(W1));
    }

    #[test]
    fn same_task_needs_no_pair_and_versions_are_kept() {
        let g = GraphDef {
            node: vec![konst("w", W0, vec![1.]), ident("a", W0, "w")],
            versions: Some(ferroflow_core::proto::VersionDef { producer: 7, ..Default::default() }),
            ..Default::default()
        };
        let inc = incarnations();
        let parts = partition(&g, &PartitionOptions { incarnations: &inc, split_by: SplitBy::Task }).unwrap();
        assert_eq!(parts.len(), 1);
        let p = &parts["/job:worker/replica:0/task:0"];
        assert_eq!(p.node, g.node);
        assert_eq!(p.versions.as_ref().unwrap().producer, 7);
    }

    #[test]
    fn split_by_device() {
        let cpu1 = "/job:worker/replica:0/task:0/device:CPU:1";
        let mut inc = incarnations();
        inc.insert(cpu1.into(), 3);
        let g = GraphDef { node: vec![konst("w", W0, vec![1.]), ident("a", cpu1, "w")], ..Default::default() };
        let parts = partition(&g, &PartitionOptions { incarnations: &inc, split_by: SplitBy::Device }).unwrap();
        assert_eq!(parts.keys().collect::<Vec<_>>(), vec![W0, cpu1]);
        let by_task = partition(&g, &PartitionOptions { incarnations: &inc, split_by: SplitBy::Task }).unwrap();
        assert_eq!(by_task.len(), 1);
    }

    #[test]
    fn errors_name_the_problem() {
        let e = run(vec![konst("w", "/job:ps/task:0", vec![1.])]).unwrap_err();
        assert!(e.message.contains("node 'w'") && e.message.contains("not a full device name"), "{e}");
        let e = run(vec![konst("w", W0, vec![1.]), ident("a", W0, "nope")]).unwrap_err();
        assert!(e.message.contains("'nope' names no node"), "{e}");
        let e = run(vec![konst("w", PS, vec![1.]), ident("a", W0, "w:3")]).unwrap_err();
        assert!(e.message.contains("has only 1 outputs"), "{e}");
        let other = "/job:ps/replica:0/task:5/device:CPU:0";
        let e = run(vec![konst("w", other, vec![1.]), ident("a", W0, "w")]).unwrap_err();
        assert_eq!(e.code, Code::FailedPrecondition);
        assert!(e.message.contains(other) && e.message.contains(PS), "{e}");
        let e = run(vec![konst("w", W0, vec![1.]), konst("w", W0, vec![1.])]).unwrap_err();
        assert!(e.message.contains("two nodes named 'w'"), "{e}");
    }
}
