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
        let here = frame_of[i].expect("reached nodes have a frame");
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
