//! Building an [`Executor`] from a graph: every node's kernel is created (its op, attrs and
//! inputs validated) and its edges resolved, once per graph. The nodes move into the
//! executor (one copy of a large graph, not two), each node's out-edges take one exact
//! allocation, and a `Const` node drops its value, which its kernel holds.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use ferroflow_core::proto::{FunctionDefLibrary, GraphDef, NodeDef};
use ferroflow_core::Status;
use ferroflow_graph::{parse_tensor_name, resolve_node};
use ferroflow_kernels::create_kernel;

use crate::control_flow_info::{self, Kind, WalkNode};
use crate::executor::{ExecNode, Executor, FrameLayout, OutEdge};
use crate::function::{call_kernel, CALL_OPS};

impl Executor {
    /// Validates the graph (ops, attrs, edges, types) and creates every kernel (function
    /// calls instantiate their functions from the graph's library).
    pub fn new(gd: &GraphDef) -> Result<Executor, Status> {
        Executor::build(gd.node.clone(), gd.library.as_ref(), 0)
    }

    /// [`Executor::new`] taking the graph: its nodes move into the executor instead of
    /// being copied, so a large graph is held once, not twice, while it is built.
    pub fn from_graph(gd: GraphDef) -> Result<Executor, Status> {
        let GraphDef { node, library, .. } = gd;
        Executor::build(node, library.as_ref(), 0)
    }

    /// [`Executor::from_graph`] with the library given apart and `depth` enclosing function
    /// calls.
    pub(crate) fn build(
        defs: Vec<NodeDef>,
        library: Option<&FunctionDefLibrary>,
        depth: usize,
    ) -> Result<Executor, Status> {
        {
            let mut names = HashSet::with_capacity(defs.len());
            for n in &defs {
                if !names.insert(n.name.as_str()) {
                    return Err(Status::invalid_argument(format!("duplicate node name '{}'", n.name)));
                }
            }
        }
        // Kernels first (each node's defaults added, its signature checked), then edges:
        // each node's def moves into the executor, never copied.
        let mut nodes = Vec::with_capacity(defs.len());
        for mut def in defs {
            let sig = resolve_node(&mut def)?;
            let in_node = |e: Status| e.context(format!("node '{}' (op {})", def.name, def.op)).with_node(&def.name);
            let kernel = if CALL_OPS.contains(&def.op.as_str()) {
                call_kernel(&def, library, depth).map_err(in_node)?
            } else if crate::data::DATA_OPS.contains(&def.op.as_str()) {
                crate::data::data_kernel(&def, library, depth).map_err(in_node)?
            } else {
                create_kernel(&def)?
            };
            let expensive = kernel.is_expensive();
            if def.op == "Const" {
                // The kernel holds the value; the node need not hold it a second time
                // (TensorFlow's `StripTensorDataFromNodeDef` does the same).
                def.attr.remove("value");
            }
            nodes.push(ExecNode {
                kind: Kind::of_op(&def.op),
                num_inputs: 0,
                num_outputs: sig.outputs.len(),
                out_edges: Box::default(),
                control_out: Box::default(),
                local: 0,
                input_base: 0,
                expensive,
                cost_ns: AtomicU64::new(u64::MAX),
                kernel,
                def: Arc::new(def),
            });
        }
        let defs: Vec<Arc<NodeDef>> = nodes.iter().map(|n| n.def.clone()).collect();
        let index: HashMap<&str, usize> = defs.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
        // (source, slot, destination, input index) and (source, destination).
        let mut edges: Vec<(usize, usize, usize, usize)> = Vec::new();
        let mut controls: Vec<(usize, usize)> = Vec::new();
        for (i, def) in defs.iter().enumerate() {
            let mut k = 0;
            for inp in &def.input {
                if let Some(c) = inp.strip_prefix('^') {
                    let &src = index.get(c).ok_or_else(|| {
                        Status::invalid_argument(format!(
                            "node '{}': control input '^{c}' is not in the graph",
                            def.name
                        ))
                    })?;
                    controls.push((src, i));
                } else {
                    let (src, slot) = parse_tensor_name(inp).map_err(|e| e.context(format!("node '{}'", def.name)))?;
                    let &s = index.get(src).ok_or_else(|| {
                        Status::invalid_argument(format!("node '{}': input '{inp}' is not in the graph", def.name))
                    })?;
                    if slot >= nodes[s].num_outputs {
                        return Err(Status::invalid_argument(format!(
                            "node '{}': input {k} reads output {slot} of '{}', which has {} outputs",
                            def.name, defs[s].name, nodes[s].num_outputs
                        )));
                    }
                    edges.push((s, slot, i, k));
                    k += 1;
                }
            }
            nodes[i].num_inputs = k;
        }
        drop(index);
        drop(defs);
        let mut in_data = vec![0u32; nodes.len()];
        let mut in_control = vec![0u32; nodes.len()];
        // Each node's out-edges in one exact allocation, by output slot and then in the
        // order the consumers were read (a stable sort keeps it).
        edges.sort_by_key(|&(s, slot, _, _)| (s, slot));
        for run in edges.chunk_by(|a, b| a.0 == b.0) {
            nodes[run[0].0].out_edges = run.iter().map(|&(_, slot, d, k)| OutEdge { slot, dst: d, input: k }).collect();
        }
        for &(_, _, d, _) in &edges {
            in_data[d] += 1;
        }
        drop(edges);
        controls.sort_by_key(|&(s, _)| s);
        for run in controls.chunk_by(|a, b| a.0 == b.0) {
            nodes[run[0].0].control_out = run.iter().map(|&(_, d)| d).collect();
        }
        for &(_, d) in &controls {
            in_control[d] += 1;
        }
        drop(controls);
        let roots: Vec<usize> = (0..nodes.len()).filter(|&i| in_data[i] + in_control[i] == 0).collect();
        if roots.is_empty() && !nodes.is_empty() {
            return Err(Status::invalid_argument("graph has a cycle: no node is ready to start"));
        }
        let mut kinds: Vec<Kind> = nodes.iter().map(|n| n.kind).collect();
        let walk: Vec<WalkNode<'_>> = nodes
            .iter()
            .map(|n| WalkNode {
                name: &n.def.name,
                kind: n.kind,
                def: &n.def,
                outs: n.out_edges.iter().map(|e| e.dst).chain(n.control_out.iter().copied()).collect(),
            })
            .collect();
        let info = control_flow_info::build(&walk, &roots, &mut kinds)?;
        drop(walk);
        let mut frames = Vec::with_capacity(info.frames.len());
        for f in info.frames {
            let mut pending0 = Vec::with_capacity(f.nodes.len());
            let mut slots = 0;
            for (l, &g) in f.nodes.iter().enumerate() {
                let n = &mut nodes[g];
                n.kind = kinds[g];
                n.local = l;
                n.input_base = slots;
                slots += n.num_inputs;
                pending0.push(if n.kind == Kind::Merge { 1 + 2 * in_control[g] } else { in_data[g] + in_control[g] });
            }
            frames.push(FrameLayout {
                name: f.name,
                nodes: f.nodes,
                pending0,
                num_slots: slots,
                num_enters: f.num_enters,
                parallel_iterations: f.parallel_iterations,
            });
        }
        Ok(Executor { nodes, roots, frames })
    }
}
