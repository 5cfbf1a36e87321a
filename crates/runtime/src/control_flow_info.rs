//! The static side of TensorFlow 1.x control flow: which frame (while-loop context) each
//! node of a graph runs in. Frames are found as TensorFlow does: walking the edges from
//! the nodes without inputs (in the root frame), an `Enter`'s outputs are in the frame its
//! `frame_name` names (a child of the `Enter`'s own frame), an `Exit`'s outputs in the
//! parent of the `Exit`'s frame, and every other node's outputs in its own frame. A node
//! reached in two frames is an error, as is a node that no walk reaches (a cycle that no
//! `Enter` leads into).

use std::collections::HashMap;

use ferroflow_core::{NodeAttrs, Status};

/// What the executor must do specially for a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Runs its kernel when every input is live; dead when any input is dead.
    Normal,
    /// `Merge`/`RefMerge`: runs on the first live input.
    Merge,
    /// `Enter`/`RefEnter`: its output starts (or feeds) the child frame `child`.
    Enter { child: usize, constant: bool },
    /// `Exit`/`RefExit`: its output goes to the parent frame.
    Exit,
    /// `NextIteration`/`RefNextIteration`: its output goes to the next iteration.
    NextIteration,
    /// `_Send`/`_HostSend`: runs even when dead, sending the deadness on.
    Send,
    /// `_Recv`/`_HostRecv`: runs even when dead; its output may arrive dead.
    Recv,
    /// `ControlTrigger`: runs, live, even when its inputs are dead.
    ControlTrigger,
}

impl Kind {
    /// The kind of an op (`child` and `constant` filled in later for `Enter`).
    pub(crate) fn of_op(op: &str) -> Kind {
        match op {
            "Merge" | "RefMerge" => Kind::Merge,
            "Enter" | "RefEnter" => Kind::Enter { child: 0, constant: false },
            "Exit" | "RefExit" => Kind::Exit,
            "NextIteration" | "RefNextIteration" => Kind::NextIteration,
            "_Send" | "_HostSend" => Kind::Send,
            "_Recv" | "_HostRecv" => Kind::Recv,
            "ControlTrigger" => Kind::ControlTrigger,
            _ => Kind::Normal,
        }
    }
}

/// One while-loop context of the graph (frame 0 is the root).
#[derive(Debug)]
pub(crate) struct StaticFrame {
    /// TensorFlow's frame name (empty for the root).
    pub name: String,
    /// The enclosing frame.
    pub parent: Option<usize>,
    /// Number of `Enter` nodes into this frame (its inputs).
    pub num_enters: usize,
    /// `parallel_iterations` of the first `Enter` into it.
    pub parallel_iterations: usize,
    /// The frame's nodes (indices into the graph).
    pub nodes: Vec<usize>,
}

/// The frames of a graph (each listing its nodes).
pub(crate) struct FrameInfo {
    pub frames: Vec<StaticFrame>,
}

/// A node's view for the walk: op kind, `Enter` attrs, out-edges (data and control).
pub(crate) struct WalkNode<'a> {
    pub name: &'a str,
    pub kind: Kind,
    pub def: &'a ferroflow_core::proto::NodeDef,
    pub outs: Vec<usize>,
}

/// TensorFlow's graph validation: apart from a loop's back edges (the outputs of
/// `NextIteration`), the graph must be acyclic; a cycle is an InvalidArgument naming some
/// of its nodes.
fn check_acyclic(nodes: &[WalkNode<'_>]) -> Result<(), Status> {
    fn outs<'n>(n: &'n WalkNode<'_>) -> &'n [usize] {
        if n.kind == Kind::NextIteration {
            &[]
        } else {
            &n.outs
        }
    }
    let mut indegree = vec![0usize; nodes.len()];
    for n in nodes {
        for &d in outs(n) {
            indegree[d] += 1;
        }
    }
    let mut stack: Vec<usize> = (0..nodes.len()).filter(|&i| indegree[i] == 0).collect();
    let mut seen = 0;
    while let Some(i) = stack.pop() {
        seen += 1;
        for &d in outs(&nodes[i]) {
            indegree[d] -= 1;
            if indegree[d] == 0 {
                stack.push(d);
            }
        }
    }
    if seen == nodes.len() {
        return Ok(());
    }
    let left: Vec<String> =
        (0..nodes.len()).filter(|&i| indegree[i] > 0).map(|i| format!("'{}'", nodes[i].name)).collect();
    Err(Status::invalid_argument(format!(
        "Graph is invalid, contains a cycle with {} nodes, including: {}",
        left.len(),
        left.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
    )))
}

/// Checks the graph for cycles outside loops, then assigns frames; fills in each
/// `Enter`'s `child` frame and `constant` flag in `kinds`.
pub(crate) fn build(nodes: &[WalkNode<'_>], roots: &[usize], kinds: &mut [Kind]) -> Result<FrameInfo, Status> {
    check_acyclic(nodes)?;
    let mut frames = vec![StaticFrame {
        name: String::new(),
        parent: None,
        num_enters: 0,
        parallel_iterations: 1,
        nodes: Vec::new(),
    }];
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut frame_of: Vec<Option<usize>> = vec![None; nodes.len()];
    let mut stack: Vec<usize> = Vec::new();
    for &r in roots {
        frame_of[r] = Some(0);
        stack.push(r);
    }
    // Enters are counted once each, when first reached.
    while let Some(i) = stack.pop() {
        let n = &nodes[i];
        let here = frame_of[i]
            .ok_or_else(|| Status::internal(format!("node '{}' was reached without a control-flow frame", n.name)))?;
        let out_frame = match n.kind {
            Kind::Enter { .. } => {
                let name = n.def.attr_string("frame_name").map_err(|e| e.context(format!("node '{}'", n.name)))?;
                let constant = n.def.attr_bool("is_constant").unwrap_or(false);
                let parallel = n.def.attr_int("parallel_iterations").unwrap_or(10);
                if parallel <= 0 {
                    return Err(Status::invalid_argument(format!(
                        "node '{}' (op Enter): parallel_iterations must be positive, got {parallel}",
                        n.name
                    )));
                }
                let child = match by_name.get(&name) {
                    Some(&c) => {
                        if frames[c].parent != Some(here) {
                            return Err(Status::invalid_argument(format!(
                                "node '{}' enters frame '{name}' from frame '{}', but other Enter nodes enter it \
                                 from frame '{}'",
                                n.name,
                                frames[here].name,
                                frames[c].parent.map(|p| frames[p].name.as_str()).unwrap_or("")
                            )));
                        }
                        c
                    }
                    None => {
                        frames.push(StaticFrame {
                            name: name.clone(),
                            parent: Some(here),
                            num_enters: 0,
                            parallel_iterations: parallel as usize,
                            nodes: Vec::new(),
                        });
                        by_name.insert(name, frames.len() - 1);
                        frames.len() - 1
                    }
                };
                frames[child].num_enters += 1;
                kinds[i] = Kind::Enter { child, constant };
                child
            }
            Kind::Exit => frames[here].parent.ok_or_else(|| {
                Status::invalid_argument(format!("node '{}' (op Exit) is not inside a while loop frame", n.name))
            })?,
            Kind::NextIteration if frames[here].parent.is_none() => {
                return Err(Status::invalid_argument(format!(
                    "node '{}' (op NextIteration) is not inside a while loop frame (no Enter leads to it)",
                    n.name
                )))
            }
            _ => here,
        };
        for &d in &n.outs {
            match frame_of[d] {
                None => {
                    frame_of[d] = Some(out_frame);
                    stack.push(d);
                }
                Some(f) if f != out_frame => {
                    return Err(Status::invalid_argument(format!(
                        "node '{}' has inputs from different frames: '{}' is in frame '{}', another input in \
                         frame '{}'",
                        nodes[d].name, n.name, frames[out_frame].name, frames[f].name
                    )));
                }
                Some(_) => {}
            }
        }
    }
    for (i, f) in frame_of.iter().enumerate() {
        let f = f.ok_or_else(|| {
            Status::invalid_argument(format!(
                "graph has a cycle: node '{}' is never ready (a loop must be entered through an Enter node)",
                nodes[i].name
            ))
        })?;
        frames[f].nodes.push(i);
    }
    Ok(FrameInfo { frames })
}

/// A while-loop frame of a GraphDef, as [`graph_frames`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSummary {
    /// TensorFlow's frame name (`frame_name` of its `Enter` nodes; empty for the root).
    pub name: String,
    /// The enclosing frame (`None` for the root, frame 0).
    pub parent: Option<usize>,
    /// `parallel_iterations` of the first `Enter` into it.
    pub parallel_iterations: usize,
    /// The frame's `LoopCond` node (its pivot), if it has one.
    pub loop_cond: Option<usize>,
}

/// The frames of a GraphDef and of each of its nodes (what TensorFlow's partitioner needs
/// to add control loops for frames that span devices).
#[derive(Clone, Debug)]
pub struct GraphFrames {
    /// Frame 0 is the root.
    pub frames: Vec<FrameSummary>,
    /// Per node (graph order): the frame its inputs come from (for an `Enter`, the frame
    /// it enters from).
    pub input_frame: Vec<usize>,
    /// Per node: the frame its outputs go to (an `Enter`'s child frame, an `Exit`'s parent).
    pub output_frame: Vec<usize>,
}

/// Finds the frames of `gd` as the executor does (same errors for a malformed loop).
pub fn graph_frames(gd: &ferroflow_core::proto::GraphDef) -> Result<GraphFrames, Status> {
    let mut index = HashMap::with_capacity(gd.node.len());
    for (i, n) in gd.node.iter().enumerate() {
        if index.insert(n.name.as_str(), i).is_some() {
            return Err(Status::invalid_argument(format!("duplicate node name '{}'", n.name)));
        }
    }
    let mut walk: Vec<WalkNode<'_>> = gd
        .node
        .iter()
        .map(|n| WalkNode { name: &n.name, kind: Kind::of_op(&n.op), def: n, outs: Vec::new() })
        .collect();
    let mut has_input = vec![false; gd.node.len()];
    for (d, n) in gd.node.iter().enumerate() {
        for inp in &n.input {
            let src = inp.strip_prefix('^').unwrap_or(inp);
            let src = src.rsplit_once(':').filter(|(_, k)| k.parse::<usize>().is_ok()).map_or(src, |(s, _)| s);
            let &s = index.get(src).ok_or_else(|| {
                Status::invalid_argument(format!("node '{}': input '{inp}' is not in the graph", n.name))
            })?;
            walk[s].outs.push(d);
            has_input[d] = true;
        }
    }
    let roots: Vec<usize> = (0..gd.node.len()).filter(|&i| !has_input[i]).collect();
    let mut kinds: Vec<Kind> = walk.iter().map(|w| w.kind).collect();
    let info = build(&walk, &roots, &mut kinds)?;
    let mut input_frame = vec![0usize; gd.node.len()];
    let mut frames: Vec<FrameSummary> = Vec::with_capacity(info.frames.len());
    for (f, sf) in info.frames.iter().enumerate() {
        for &i in &sf.nodes {
            input_frame[i] = f;
        }
        let loop_cond = sf.nodes.iter().copied().find(|&i| gd.node[i].op == "LoopCond");
        frames.push(FrameSummary {
            name: sf.name.clone(),
            parent: sf.parent,
            parallel_iterations: sf.parallel_iterations,
            loop_cond,
        });
    }
    let output_frame = (0..gd.node.len())
        .map(|i| match kinds[i] {
            Kind::Enter { child, .. } => child,
            Kind::Exit => frames[input_frame[i]].parent.unwrap_or(0),
            _ => input_frame[i],
        })
        .collect();
    Ok(GraphFrames { frames, input_frame, output_frame })
}
