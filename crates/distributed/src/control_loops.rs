//! Control loops for while loops whose body spans partitions (TensorFlow's `AddControlFlow`
//! in `graph_partition.cc`).
//!
//! A `_Recv` has no data input, so on its own it would run once, in the root frame. When a
//! tensor crosses partitions inside a loop frame, the receiving partition needs something
//! that runs once per iteration of that frame to drive the `_Recv`: a *control loop* on the
//! receiving device, `Enter → Merge → Switch(pred = the frame's LoopCond) → NextIteration →
//! Merge`, whose `Merge` fires in every iteration for as long as the loop's predicate (sent
//! from wherever `LoopCond` runs) is true. Every `_Recv` of a tensor in that frame gets a
//! control input from this `Merge`, so it runs in the right frame instance and iteration,
//! and its rendezvous key carries them (`frame_id:iter`).
//!
//! One control loop is added per (frame, receiving partition). The `Enter` of a top-level
//! frame's control loop is fed by a `Const` on that device; a nested frame's by the `Merge`
//! of its enclosing frame's control loop on the same device (added as well if missing), so
//! the inner frame is entered once per outer iteration there too. Frames that stay on one
//! partition get nothing, and graphs without `Enter` are returned as they are.

use std::collections::HashMap;

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::{attr, DataType, Status, Tensor};
use ferroflow_runtime::GraphFrames;

use ferroflow_graph::graph_util::{parse_input, NameGen};

/// What the partitioner needs to drive `_Recv`s inside loop frames.
pub(crate) struct ControlLoops {
    /// The graph with the control loops' nodes appended (original nodes keep their index).
    pub graph: GraphDef,
    /// Per original node: the frame its outputs are in (0: the root).
    output_frame: Vec<usize>,
    /// (frame, receiving partition) → the control loop's `Merge`.
    merges: HashMap<(usize, String), String>,
}

impl ControlLoops {
    /// The control input a `_Recv` of an output of node `src` into partition `loc` needs:
    /// `Some(merge)` when `src`'s outputs are in a loop frame.
    pub fn recv_control(&self, src: usize, loc: &str) -> Result<Option<&str>, Status> {
        let f = self.output_frame.get(src).copied().unwrap_or(0);
        if f == 0 {
            return Ok(None);
        }
        self.merges.get(&(f, loc.to_string())).map(|m| Some(m.as_str())).ok_or_else(|| {
            Status::internal(format!(
                "no control loop for frame {f} on partition {loc} (edge from '{}')",
                self.graph.node.get(src).map_or("?", |n| n.name.as_str())
            ))
        })
    }
}

struct Builder<'a> {
    graph: &'a GraphDef,
    frames: &'a GraphFrames,
    names: NameGen,
    added: Vec<NodeDef>,
    merges: HashMap<(usize, String), String>,
}

impl Builder<'_> {
    fn node(&mut self, prefix: &str, op: &str, device: &str, inputs: Vec<String>) -> usize {
        let name = self.names.name(&format!("_cloop{prefix}"));
        let mut n = NodeDef { name, op: op.into(), device: device.into(), input: inputs, ..Default::default() };
        if op != "Const" {
            n.attr.insert("T".into(), attr::ty(DataType::Float));
        }
        self.added.push(n);
        self.added.len() - 1
    }

    /// Makes sure the control loop of `frame` (and of every enclosing frame) exists on
    /// partition `loc`, on device `device`, named after the receiving node `dst`.
    fn ensure(&mut self, frame: usize, loc: &str, device: &str, dst: &str) -> Result<(), Status> {
        // The Enter of the control loop made in the previous round, still without input.
        let mut child_enter: Option<usize> = None;
        let mut cur = frame;
        loop {
            if cur == 0 {
                if let Some(e) = child_enter {
                    let c = self.node(dst, "Const", device, vec![]);
                    let n = &mut self.added[c];
                    n.attr.insert("dtype".into(), attr::ty(DataType::Float));
                    n.attr.insert("value".into(), attr::tensor(&Tensor::scalar(0f32)));
                    let cname = n.name.clone();
                    self.added[e].input = vec![cname];
                }
                return Ok(());
            }
            let key = (cur, loc.to_string());
            if let Some(m) = self.merges.get(&key) {
                if let Some(e) = child_enter {
                    self.added[e].input = vec![m.clone()];
                }
                return Ok(());
            }
            let f = &self.frames.frames[cur];
            let cond = f.loop_cond.ok_or_else(|| {
                Status::invalid_argument(format!(
                    "A cross-device loop must have a pivot predicate: frame '{}' has no LoopCond node",
                    f.name
                ))
            })?;
            let cond = self.graph.node[cond].name.clone();
            let (frame_name, parallel, parent) = (f.name.clone(), f.parallel_iterations, f.parent.unwrap_or(0));
            let enter = self.node(dst, "Enter", device, vec![]);
            {
                let n = &mut self.added[enter];
                n.attr.insert("frame_name".into(), attr::string(&frame_name));
                n.attr.insert("is_constant".into(), attr::bool(false));
                n.attr.insert("parallel_iterations".into(), attr::int(parallel as i64));
            }
            let enter_name = self.added[enter].name.clone();
            let merge = self.node(dst, "Merge", device, vec![]);
            self.added[merge].attr.insert("N".into(), attr::int(2));
            let merge_name = self.added[merge].name.clone();
            let switch = self.node(dst, "Switch", device, vec![merge_name.clone(), cond]);
            let switch_name = self.added[switch].name.clone();
            let next = self.node(dst, "NextIteration", device, vec![format!("{switch_name}:1")]);
            let next_name = self.added[next].name.clone();
            self.added[merge].input = vec![enter_name, next_name];
            if let Some(e) = child_enter {
                self.added[e].input = vec![merge_name.clone()];
            }
            self.merges.insert(key, merge_name);
            child_enter = Some(enter);
            cur = parent;
        }
    }
}

/// Adds the control loops the partitioning of `graph` into `loc` (per node: its
/// partition) needs; `None` when no loop frame spans partitions.
pub(crate) fn add(graph: &GraphDef, loc: &[String]) -> Result<Option<ControlLoops>, Status> {
    if !graph.node.iter().any(|n| n.op == "Enter" || n.op == "RefEnter") {
        return Ok(None);
    }
    let frames = ferroflow_runtime::graph_frames(graph)?;
    let index: HashMap<&str, usize> = graph.node.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let mut b = Builder {
        graph,
        frames: &frames,
        names: NameGen::new(graph.node.iter().map(|n| n.name.as_str())),
        added: Vec::new(),
        merges: HashMap::new(),
    };
    for (di, node) in graph.node.iter().enumerate() {
        for s in &node.input {
            let Some(&si) = index.get(parse_input(node, s)?.node()) else { continue };
            if loc[si] == loc[di] {
                continue;
            }
            let f = frames.output_frame[si];
            if f == 0 || frames.input_frame[di] != f {
                continue;
            }
            b.ensure(f, &loc[di], &node.device, &node.name)?;
        }
    }
    if b.added.is_empty() {
        return Ok(None);
    }
    let added = std::mem::take(&mut b.added);
    let merges = std::mem::take(&mut b.merges);
    let mut g = graph.clone();
    g.node.extend(added);
    Ok(Some(ControlLoops { graph: g, output_frame: frames.output_frame, merges }))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use ferroflow_core::proto::GraphDef;
    use ferroflow_core::{DataType, NodeAttrs};
    use ferroflow_graph::{ops, while_loop_v1, Scope};

    use crate::test_graphs::{PS, W0};
    use crate::{partition, partition_graph, PartitionOptions, SplitBy};

    /// A nested loop on the worker whose inner body adds on the ps, placed and split by task.
    fn nested_parts() -> (GraphDef, std::collections::BTreeMap<String, GraphDef>) {
        let s = Scope::new_root();
        let wk = s.with_device("/job:worker/task:0");
        let n = ops::placeholder(&wk, DataType::Int32, Some(&[]));
        let out = while_loop_v1(
            &wk,
            &[ops::constant(&wk, 0i32), ops::constant(&wk, 0.0f32)],
            &[n],
            |s, v, inv| ops::less(s, v[0].clone(), inv[0].clone()),
            |s, v, _| {
                let inner = while_loop_v1(
                    s,
                    &[ops::constant(s, 0i32), ops::constant(s, 0.0f32)],
                    &[v[0].clone()],
                    |s, w, inv| ops::less(s, w[0].clone(), inv[0].clone()),
                    |s, w, _| {
                        let ps = s.with_device("/job:ps/task:0");
                        vec![
                            ops::add(s, w[0].clone(), ops::constant(s, 1i32)),
                            ops::add(&ps, w[1].clone(), w[1].clone()),
                        ]
                    },
                    4,
                )
                .unwrap();
                vec![ops::add(s, v[0].clone(), ops::constant(s, 1i32)), inner[1].clone()]
            },
            7,
        )
        .unwrap();
        let _ = ops::identity(&wk, out[1].clone());
        let mut g = s.graph().to_graph_def();
        ferroflow_runtime::placer::place(&mut g, &[PS.to_string(), W0.to_string()], W0).unwrap();
        let inc: HashMap<String, u64> = [(PS.to_string(), 1), (W0.to_string(), 2)].into_iter().collect();
        let opts = PartitionOptions { incarnations: &inc, split_by: SplitBy::Task };
        let parts = partition(&g, &opts).unwrap();
        assert_eq!(partition_graph(g.clone(), &opts).unwrap(), parts, "moving the nodes changes nothing");
        (g, parts)
    }

    #[test]
    fn nested_frames_get_stacked_control_loops_on_each_receiving_task() {
        let (g, parts) = nested_parts();
        let ps = &parts["/job:ps/replica:0/task:0"];
        let wk = &parts["/job:worker/replica:0/task:0"];
        // The worker receives the ps's sums back inside both frames, so it has control loops
        // too, whose Switches read its own LoopConds.
        let wk_switches: Vec<_> = wk.node.iter().filter(|n| n.name.starts_with("_cloop") && n.op == "Switch").collect();
        assert_eq!(wk_switches.len(), 2);
        for sw in wk_switches {
            let pred = wk.node.iter().find(|n| n.name == sw.input[1]).unwrap();
            assert_eq!(pred.op, "LoopCond");
        }
        let by_name: HashMap<&str, &ferroflow_core::proto::NodeDef> =
            ps.node.iter().map(|n| (n.name.as_str(), n)).collect();
        let cl: Vec<&ferroflow_core::proto::NodeDef> =
            ps.node.iter().filter(|n| n.name.starts_with("_cloop")).collect();
        let count = |op: &str| cl.iter().filter(|n| n.op == op).count();
        // Outer and inner frame: Enter, Merge, Switch, NextIteration each, and the outer's Const.
        assert_eq!(
            (count("Enter"), count("Merge"), count("Switch"), count("NextIteration"), count("Const")),
            (2, 2, 2, 2, 1)
        );
        let frames: Vec<String> =
            cl.iter().filter(|n| n.op == "Enter").map(|n| n.attr_string("frame_name").unwrap()).collect();
        let outer = g.node.iter().find(|n| n.op == "Enter" && n.attr_int("parallel_iterations").unwrap() == 7).unwrap();
        let inner = g.node.iter().find(|n| n.op == "Enter" && n.attr_int("parallel_iterations").unwrap() == 4).unwrap();
        let (of, inf) = (outer.attr_string("frame_name").unwrap(), inner.attr_string("frame_name").unwrap());
        assert!(frames.contains(&of) && frames.contains(&inf), "{frames:?}");
        for e in cl.iter().filter(|n| n.op == "Enter") {
            let src = by_name[e.input[0].as_str()];
            if e.attr_string("frame_name").unwrap() == of {
                assert_eq!(src.op, "Const", "the outer control loop starts from a Const");
                assert_eq!(e.attr_int("parallel_iterations").unwrap(), 7);
            } else {
                assert_eq!(src.op, "Merge", "the inner one from the outer's Merge");
                assert_eq!(e.attr_int("parallel_iterations").unwrap(), 4);
            }
            assert_eq!(e.device, PS);
        }
        // Each control Switch takes its frame's LoopCond, received from the worker, and every
        // receive on the ps inside a frame waits for its frame's control Merge.
        for sw in cl.iter().filter(|n| n.op == "Switch") {
            let pred = by_name[sw.input[1].as_str()];
            assert_eq!(pred.op, "_Recv");
            assert!(pred.attr_string("tensor_name").unwrap().contains("LoopCond"), "{pred:?}");
        }
        let recvs: Vec<_> = ps.node.iter().filter(|n| n.op == "_Recv").collect();
        assert!(!recvs.is_empty());
        for r in recvs {
            let ctl: Vec<&str> = r.input.iter().filter_map(|i| i.strip_prefix('^')).collect();
            assert_eq!(ctl.len(), 1, "{r:?}");
            assert_eq!(by_name[ctl[0]].op, "Merge");
            assert_eq!(
                r.attr_type("tensor_type").unwrap() == DataType::Bool,
                r.attr_string("tensor_name").unwrap().contains("LoopCond")
            );
        }
    }

    #[test]
    fn a_frame_on_one_task_is_left_alone() {
        let s = Scope::new_root();
        let wk = s.with_device("/job:worker/task:0");
        let ps = s.with_device("/job:ps/task:0");
        let n = ops::constant(&ps, 3i32);
        let out = while_loop_v1(
            &wk,
            &[ops::constant(&wk, 0i32)],
            &[n],
            |s, v, inv| ops::less(s, v[0].clone(), inv[0].clone()),
            |s, v, _| vec![ops::add(s, v[0].clone(), ops::constant(s, 1i32))],
            10,
        )
        .unwrap();
        let _ = ops::identity(&ps, out[0].clone());
        let mut g = s.graph().to_graph_def();
        ferroflow_runtime::placer::place(&mut g, &[PS.to_string(), W0.to_string()], W0).unwrap();
        let inc: HashMap<String, u64> = [(PS.to_string(), 1), (W0.to_string(), 2)].into_iter().collect();
        let parts = partition(&g, &PartitionOptions { incarnations: &inc, split_by: SplitBy::Task }).unwrap();
        let all: Vec<&str> = parts.values().flat_map(|p| p.node.iter().map(|n| n.name.as_str())).collect();
        assert!(!all.iter().any(|n| n.starts_with("_cloop")), "{all:?}");
        assert_eq!(parts.len(), 2, "the invariant comes from the ps and the result goes back to it");
    }
}
