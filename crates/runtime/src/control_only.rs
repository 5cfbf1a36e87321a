//! Nodes computed only to be waited on become `NoOp`s, as TensorFlow's Grappler dependency
//! optimizer does: a stateless node whose outputs no node reads (every consumer holds only a
//! control edge on it) still orders its consumers after its inputs, but its value is never
//! used. The typical case is `tf.gradients`' `tuple`: the input gradient of a model's first
//! convolution (`Conv2DBackpropInput` of the image) feeds only the `group_deps` NoOp of its
//! gradient tuple, so TensorFlow never computes it; neither does ferroflow now.
//!
//! The node keeps its name, device and inputs (data inputs become control inputs), so every
//! ordering the graph states still holds. Left alone: stateful ops, ops with a reference
//! input, control-flow ops (Switch, Merge, Enter, Exit, NextIteration, LoopCond,
//! ControlTrigger), `Assert`/`CheckNumerics` (their point is the error), `Const`/`Identity`
//! (cheap; Identity after a Switch anchors deadness), placeholders and `_Send`/`_Recv`/
//! `_Arg`/`_Retval`, ops ferroflow does not know, nodes fed from a Switch, and the names
//! the caller preserves (a session's targets). Off with `RewriterConfig.dependency_optimization
//! = OFF`, TensorFlow's switch.

use std::collections::{HashMap, HashSet};

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_graph::{op_registry, parse_tensor_name};

/// Ops never converted, beyond the stateful ones.
const KEEP: &[&str] = &[
    "NoOp",
    "Const",
    "Identity",
    "Assert",
    "CheckNumerics",
    "ControlTrigger",
    "Switch",
    "RefSwitch",
    "Merge",
    "RefMerge",
    "Enter",
    "RefEnter",
    "Exit",
    "RefExit",
    "NextIteration",
    "RefNextIteration",
    "LoopCond",
    "Placeholder",
    "PlaceholderV2",
    "PlaceholderWithDefault",
    "_Send",
    "_Recv",
    "_HostSend",
    "_HostRecv",
    "_Arg",
    "_Retval",
];

fn node_name(input: &str) -> &str {
    let s = input.strip_prefix('^').unwrap_or(input);
    parse_tensor_name(s).map(|(n, _)| n).unwrap_or(s)
}

fn convertible(n: &NodeDef, by_name: &HashMap<&str, usize>, gd: &GraphDef) -> bool {
    if KEEP.contains(&n.op.as_str()) || n.op.starts_with('_') {
        return false;
    }
    let Some(def) = op_registry().get(&n.op) else { return false };
    if def.stateful || def.outputs.is_empty() || def.inputs.iter().any(|a| a.is_ref) {
        return false;
    }
    // A control edge from a Switch would carry the branch's deadness differently from a
    // data edge: leave nodes fed by one alone.
    !n.input
        .iter()
        .any(|i| by_name.get(node_name(i)).is_some_and(|&p| matches!(gd.node[p].op.as_str(), "Switch" | "RefSwitch")))
}

/// Converts every node of `gd` whose outputs feed only control edges (and no name in
/// `preserve`) to a `NoOp`, repeating until none is left; returns how many.
pub fn convert_control_only(gd: &mut GraphDef, preserve: &[String]) -> usize {
    let preserve: HashSet<&str> = preserve.iter().map(|p| node_name(p)).collect();
    let mut converted = 0;
    loop {
        let by_name: HashMap<&str, usize> = gd.node.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
        let mut data_uses = vec![0usize; gd.node.len()];
        let mut control_uses = vec![0usize; gd.node.len()];
        for n in &gd.node {
            for i in &n.input {
                if let Some(&p) = by_name.get(node_name(i)) {
                    if i.starts_with('^') {
                        control_uses[p] += 1;
                    } else {
                        data_uses[p] += 1;
                    }
                }
            }
        }
        let pick: Vec<usize> = (0..gd.node.len())
            .filter(|&i| {
                data_uses[i] == 0
                    && control_uses[i] > 0
                    && !preserve.contains(gd.node[i].name.as_str())
                    && convertible(&gd.node[i], &by_name, gd)
            })
            .collect();
        if pick.is_empty() {
            return converted;
        }
        for &i in &pick {
            let n = &mut gd.node[i];
            let mut seen = HashSet::new();
            let inputs: Vec<String> =
                n.input.iter().map(|i| format!("^{}", node_name(i))).filter(|i| seen.insert(i.clone())).collect();
            n.op = "NoOp".to_string();
            n.input = inputs;
            n.attr.clear();
        }
        converted += pick.len();
    }
}

/// Whether a session's `GraphOptions` leave the dependency optimizer on (TensorFlow's default).
pub fn dependency_optimization_enabled(opts: Option<&ferroflow_core::proto::GraphOptions>) -> bool {
    const OFF: i32 = 2;
    opts.and_then(|g| g.rewrite_options.as_ref()).is_none_or(|r| r.dependency_optimization != OFF)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_graph::graph_util::node_def as nd;

    fn graph(nodes: Vec<NodeDef>) -> GraphDef {
        GraphDef { node: nodes, ..Default::default() }
    }

    #[test]
    fn gradient_tuple_member_read_by_no_one_becomes_noop() {
        let mut gd = graph(vec![
            nd("x", "Placeholder", &[]),
            nd("y", "Placeholder", &[]),
            nd("unused_grad", "Mul", &["x", "y"]),
            nd("used_grad", "Mul", &["x:0", "x"]),
            nd("group_deps", "NoOp", &["^unused_grad", "^used_grad"]),
            nd("dep", "Identity", &["used_grad", "^group_deps"]),
        ]);
        assert_eq!(convert_control_only(&mut gd, &[]), 1);
        let n = &gd.node[2];
        assert_eq!(n.op, "NoOp");
        assert_eq!(n.input, vec!["^x", "^y"]);
        assert_eq!(gd.node[3].op, "Mul");
    }

    #[test]
    fn chains_convert_and_preserved_or_stateful_nodes_stay() {
        let mut gd = graph(vec![
            nd("x", "Placeholder", &[]),
            nd("a", "Neg", &["x"]),
            nd("b", "Square", &["a"]),
            nd("r", "RandomUniform", &["x"]),
            nd("t", "Neg", &["x"]),
            nd("check", "CheckNumerics", &["x"]),
            nd("sink", "NoOp", &["^b", "^r", "^t", "^check"]),
        ]);
        assert_eq!(convert_control_only(&mut gd, &["t".to_string()]), 2);
        let ops: Vec<&str> = gd.node.iter().map(|n| n.op.as_str()).collect();
        assert_eq!(ops, ["Placeholder", "NoOp", "NoOp", "RandomUniform", "Neg", "CheckNumerics", "NoOp"]);
    }

    #[test]
    fn nodes_fed_by_switch_and_fetched_nodes_stay() {
        let mut gd = graph(vec![
            nd("x", "Placeholder", &[]),
            nd("p", "Placeholder", &[]),
            nd("sw", "Switch", &["x", "p"]),
            nd("f", "Neg", &["sw:1"]),
            nd("g", "Neg", &["x"]),
            nd("send", "_Send", &["g"]),
            nd("sink", "NoOp", &["^f", "^g"]),
        ]);
        assert_eq!(convert_control_only(&mut gd, &[]), 0);
    }
}
