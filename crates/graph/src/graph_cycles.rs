//! Cycles in a GraphDef: TensorFlow refuses a graph whose edges (data and control) form a
//! cycle anywhere outside a while loop's back edges (the outputs of `NextIteration`). A
//! single task's executor finds such a cycle when it starts, but once a graph is split
//! across tasks the `_Send`/`_Recv` pairs break every cycle that spans two of them, and the
//! step would wait for itself until its deadline; so the whole graph is checked before it
//! is partitioned.

use std::collections::HashMap;

use ferroflow_core::proto::GraphDef;
use ferroflow_core::Status;

use crate::graph_util::parse_input;

/// How many of a cycle's nodes an error names.
const NAMED: usize = 5;

/// INVALID_ARGUMENT naming the nodes of a cycle (and how many nodes cannot run) unless the
/// graph is acyclic apart from loop back edges. Inputs naming no node are left to the
/// checks that report them.
pub fn check_acyclic(graph: &GraphDef) -> Result<(), Status> {
    let nodes = &graph.node;
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let back_edge = |i: usize| matches!(nodes[i].op.as_str(), "NextIteration" | "RefNextIteration");
    let mut outs: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut indegree = vec![0usize; nodes.len()];
    for (d, n) in nodes.iter().enumerate() {
        for s in &n.input {
            let Some(&src) = index.get(parse_input(n, s)?.node()) else { continue };
            if !back_edge(src) {
                outs[src].push(d);
                indegree[d] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..nodes.len()).filter(|&i| indegree[i] == 0).collect();
    let mut done = 0;
    while let Some(i) = ready.pop() {
        done += 1;
        for &d in &outs[i] {
            indegree[d] -= 1;
            if indegree[d] == 0 {
                ready.push(d);
            }
        }
    }
    if done == nodes.len() {
        return Ok(());
    }
    // Name nodes on the cycle itself: walk back along unfinished inputs until a node
    // repeats (what is left also holds nodes merely downstream of the cycle).
    let mut preds: Vec<Option<usize>> = vec![None; nodes.len()];
    for (s, o) in outs.iter().enumerate() {
        for &d in o {
            if indegree[s] > 0 && indegree[d] > 0 {
                preds[d] = Some(s);
            }
        }
    }
    let start = (0..nodes.len()).find(|&i| indegree[i] > 0 && preds[i].is_some()).unwrap_or(0);
    let mut seen = vec![false; nodes.len()];
    let mut at = start;
    while !seen[at] {
        seen[at] = true;
        at = preds[at].unwrap_or(at);
    }
    let mut cycle = vec![at];
    let mut p = preds[at].unwrap_or(at);
    while p != at && cycle.len() < nodes.len() {
        cycle.push(p);
        p = preds[p].unwrap_or(at);
    }
    cycle.reverse();
    let named: Vec<String> = cycle
        .iter()
        .take(NAMED)
        .map(|&i| format!("'{}' (op {}, device '{}')", nodes[i].name, nodes[i].op, nodes[i].device))
        .collect();
    let more = if cycle.len() > NAMED { format!(" and {} more", cycle.len() - NAMED) } else { String::new() };
    Err(Status::invalid_argument(format!(
        "Graph is invalid, contains a cycle: {} nodes in a cycle: {}{more}; {} nodes cannot run",
        cycle.len(),
        named.join(" -> "),
        nodes.len() - done
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph_util::node_def;
    use ferroflow_core::proto::NodeDef;
    use ferroflow_core::Code;

    #[test]
    fn cycles_are_named_and_loops_are_not_cycles() {
        let ok = GraphDef {
            node: vec![
                node_def("a", "Const", &[]),
                node_def("b", "Neg", &["a"]),
                node_def("c", "AddV2", &["a", "b:0", "^b"]),
            ],
            ..Default::default()
        };
        check_acyclic(&ok).unwrap();
        // A while loop's back edge through NextIteration is no cycle.
        let looped = GraphDef {
            node: vec![
                node_def("enter", "Enter", &["x"]),
                node_def("x", "Const", &[]),
                node_def("merge", "Merge", &["enter", "next"]),
                node_def("body", "Identity", &["merge"]),
                node_def("next", "NextIteration", &["body"]),
            ],
            ..Default::default()
        };
        check_acyclic(&looped).unwrap();
        // A two-node cycle through a control edge, with a node downstream of it.
        let bad = GraphDef {
            node: vec![
                node_def("x", "Const", &[]),
                node_def("p", "AddV2", &["x", "^q"]),
                node_def("q", "Neg", &["p"]),
                node_def("r", "Neg", &["q"]),
            ],
            ..Default::default()
        };
        let e = check_acyclic(&bad).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("2 nodes in a cycle"), "{e}");
        assert!(e.message.contains("'p' (op AddV2") && e.message.contains("'q' (op Neg"), "{e}");
        assert!(!e.message.contains("'r'") && e.message.contains("3 nodes cannot run"), "{e}");
        // A self loop, and a long cycle named by its first nodes and a count.
        let e =
            check_acyclic(&GraphDef { node: vec![node_def("s", "Neg", &["s"])], ..Default::default() }).unwrap_err();
        assert!(e.message.contains("1 nodes in a cycle: 's'"), "{e}");
        let n = 40;
        let ring: Vec<NodeDef> =
            (0..n).map(|i| node_def(&format!("n{i}"), "Neg", &[format!("n{}", (i + n - 1) % n).as_str()])).collect();
        let e = check_acyclic(&GraphDef { node: ring, ..Default::default() }).unwrap_err();
        assert!(e.message.contains("40 nodes in a cycle") && e.message.contains("and 35 more"), "{e}");
        assert!(e.message.len() < 600, "the text stays short: {e}");
    }
}
