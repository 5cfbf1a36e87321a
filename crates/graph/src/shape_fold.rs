//! `Shape`, `Size` and `Rank` of a tensor whose shape follows from constants alone are
//! folded into constants before a step is planned, as TensorFlow's graph optimizer
//! materializes shapes. The tensor itself is then not computed unless something else needs
//! it: `Size` of a `[65536,1] + [1,65536]` broadcast answers 4294967296 without
//! allocating 16 GiB.
//!
//! Only tensors made by side-effect-free ops from constants are folded (no variable, no
//! feed, no placeholder, no random or stateful op, nothing inside a while loop), so the
//! fold never changes a result: their shapes are exactly what running them would give.

use std::collections::{HashMap, HashSet};

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::{attr, DataType, Tensor};

use crate::graph_util::{parse_input, Input};
use crate::ops::COMPARISON_AND_LOGIC_OPS;
use crate::Graph;

/// Ops whose output shape depends only on their inputs' shapes and constant values, and
/// that have no side effects (with [`COMPARISON_AND_LOGIC_OPS`]).
const PURE: &[&str] = &[
    "Const",
    "Identity",
    "Snapshot",
    "StopGradient",
    "Cast",
    "AddV2",
    "Add",
    "Sub",
    "Mul",
    "RealDiv",
    "Div",
    "DivNoNan",
    "FloorDiv",
    "FloorMod",
    "Maximum",
    "Minimum",
    "Pow",
    "SquaredDifference",
    "Select",
    "SelectV2",
    "BroadcastTo",
    "Tile",
    "Fill",
    "ZerosLike",
    "OnesLike",
    "Neg",
    "Abs",
    "Exp",
    "Log",
    "Sqrt",
    "Rsqrt",
    "Square",
    "Tanh",
    "Sigmoid",
    "Relu",
    "Sign",
    "Floor",
    "Ceil",
    "Reshape",
    "ExpandDims",
    "Squeeze",
    "Transpose",
    "ConcatV2",
    "Pack",
    "MatMul",
    "BatchMatMulV2",
    "Range",
];

/// Ops folded when their input's shape is known.
const SHAPE_OPS: &[&str] = &["Shape", "Size", "Rank"];

/// `graph` with foldable `Shape`/`Size`/`Rank` nodes replaced by constants, or None when
/// there is none. `fed` holds the names of nodes the step feeds (their values, and so their
/// shapes, come from the client).
pub(crate) fn fold_static_shapes(graph: &GraphDef, fed: &HashSet<&str>) -> Option<GraphDef> {
    if !graph.node.iter().any(|n| SHAPE_OPS.contains(&n.op.as_str())) {
        return None;
    }
    let index: HashMap<&str, usize> = graph.node.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let mut pure: HashMap<usize, bool> = HashMap::new();
    let mut candidates = Vec::new();
    for (i, n) in graph.node.iter().enumerate() {
        if !SHAPE_OPS.contains(&n.op.as_str()) || fed.contains(n.name.as_str()) {
            continue;
        }
        let Some(src) = n.input.first().filter(|s| !s.starts_with('^')) else { continue };
        let Ok(Input::Data(src, _)) = parse_input(n, src) else { continue };
        let Some(&si) = index.get(src) else { continue };
        if is_pure(graph, &index, fed, si, &mut pure) {
            candidates.push(i);
        }
    }
    if candidates.is_empty() {
        return None;
    }
    // Shapes from the candidates' inputs and everything they are made from (without control
    // inputs: only shapes matter here).
    let sub = GraphDef {
        node: graph
            .node
            .iter()
            .enumerate()
            .filter(|(i, _)| pure.get(i) == Some(&true))
            .map(|(_, n)| NodeDef {
                input: n.input.iter().filter(|s| !s.starts_with('^')).cloned().collect(),
                ..n.clone()
            })
            .collect(),
        ..Default::default()
    };
    let shapes = Graph::import(&sub).ok()?;
    let mut out = graph.clone();
    let mut folded = 0;
    for i in candidates {
        let n = &graph.node[i];
        let Ok(Input::Data(src, slot)) = parse_input(n, &n.input[0]) else { continue };
        let Some(dims) = shapes.node(src).and_then(|e| e.shapes.get(slot).cloned().flatten()) else { continue };
        if dims.iter().any(|&d| d < 0) {
            continue;
        }
        let Some(value) = shape_value(n, &dims) else { continue };
        let mut node =
            NodeDef { name: n.name.clone(), op: "Const".into(), device: n.device.clone(), ..Default::default() };
        node.input = n.input.iter().filter(|s| s.starts_with('^')).cloned().collect();
        node.attr.insert("dtype".into(), attr::ty(value.dtype()));
        node.attr.insert("value".into(), attr::tensor(&value));
        out.node[i] = node;
        folded += 1;
    }
    (folded > 0).then_some(out)
}

/// Whether node `i` is made by [`PURE`] ops from constants alone (no feed on the way).
fn is_pure(
    graph: &GraphDef,
    index: &HashMap<&str, usize>,
    fed: &HashSet<&str>,
    i: usize,
    memo: &mut HashMap<usize, bool>,
) -> bool {
    // Depth-first without recursion (graphs may be deep): a node is decided once all its
    // data inputs are.
    let mut stack = vec![(i, false)];
    let mut in_progress = HashSet::new();
    while let Some((j, expanded)) = stack.pop() {
        if memo.contains_key(&j) {
            continue;
        }
        if !expanded && !in_progress.insert(j) {
            // Met again below itself: a cycle, which no step can run.
            memo.insert(j, false);
            continue;
        }
        let n = &graph.node[j];
        let op = n.op.as_str();
        if !(PURE.contains(&op) || COMPARISON_AND_LOGIC_OPS.contains(&op)) || fed.contains(n.name.as_str()) {
            memo.insert(j, false);
            continue;
        }
        let mut inputs = Vec::new();
        for s in n.input.iter().filter(|s| !s.starts_with('^')) {
            match parse_input(n, s).ok().and_then(|p| index.get(p.node()).copied()) {
                Some(k) => inputs.push(k),
                None => {
                    memo.insert(j, false);
                    break;
                }
            }
        }
        if memo.contains_key(&j) {
            continue;
        }
        if expanded {
            let ok = inputs.iter().all(|k| memo.get(k) == Some(&true));
            memo.insert(j, ok);
        } else {
            stack.push((j, true));
            stack.extend(inputs.into_iter().filter(|k| !memo.contains_key(k)).map(|k| (k, false)));
        }
    }
    memo.get(&i) == Some(&true)
}

/// The value of `Shape`/`Size`/`Rank` node `n` for an input of shape `dims`, in the node's
/// `out_type` (None when it does not fit: the kernel reports that at run time).
fn shape_value(n: &NodeDef, dims: &[i64]) -> Option<Tensor> {
    let out = n.attr.get("out_type").and_then(attr_type).unwrap_or(DataType::Int32);
    let int = |v: Vec<i64>, shape: Vec<usize>| -> Option<Tensor> {
        match out {
            DataType::Int64 => Tensor::new(shape, v).ok(),
            DataType::Int32 => {
                let v: Option<Vec<i32>> = v.into_iter().map(|x| i32::try_from(x).ok()).collect();
                Tensor::new(shape, v?).ok()
            }
            _ => None,
        }
    };
    match n.op.as_str() {
        "Shape" => int(dims.to_vec(), vec![dims.len()]),
        "Size" => int(vec![dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d))?], vec![]),
        "Rank" => Tensor::new(Vec::<usize>::new(), vec![dims.len() as i32]).ok(),
        _ => None,
    }
}

fn attr_type(a: &ferroflow_core::proto::AttrValue) -> Option<DataType> {
    match a.value {
        Some(ferroflow_core::proto::attr_value::Value::Type(t)) => DataType::from_i32(t).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ops, rewrite_for_client, Scope};

    const DEV: &str = "/job:localhost/replica:0/task:0/device:CPU:0";

    fn op_of<'a>(g: &'a GraphDef, name: &str) -> &'a str {
        g.node.iter().find(|n| n.name == name).map_or("", |n| n.op.as_str())
    }

    fn value(g: &GraphDef, name: &str) -> Tensor {
        let n = g.node.iter().find(|n| n.name == name).unwrap();
        match &n.attr["value"].value {
            Some(ferroflow_core::proto::attr_value::Value::Tensor(t)) => Tensor::from_proto(t).unwrap(),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn the_shape_of_a_huge_broadcast_is_answered_without_it() {
        let s = Scope::new_root();
        let one = ops::constant(&s, 1.0f32);
        let a = ops::fill(&s, ops::constant(&s, Tensor::vec(vec![65536i32, 1])), one.clone());
        let b = ops::fill(&s, ops::constant(&s, Tensor::vec(vec![1i32, 65536])), one);
        let c = ops::add_v2(&s, a, b);
        let size = ops::size(&s, c.clone(), DataType::Int64);
        let size32 = ops::size(&s, c.clone(), DataType::Int32);
        let shape = ops::shape(&s, c.clone(), DataType::Int32);
        let rank = ops::rank(&s, c.clone());
        let gd = s.graph().to_graph_def();
        let fetches = [size.name(), shape.name(), rank.name()];
        let cg = rewrite_for_client(&gd, &[] as &[String], &fetches, &[], DEV, 1).unwrap();
        // Nothing of the broadcast is left to run.
        assert_eq!(op_of(&cg.graph, &c.node), "", "the broadcast is pruned");
        assert!(cg.graph.node.iter().all(|n| n.op != "Fill" && n.op != "AddV2"));
        assert_eq!(value(&cg.graph, &size.node).as_slice::<i64>().unwrap(), vec![1i64 << 32]);
        assert_eq!(value(&cg.graph, &shape.node).as_slice::<i32>().unwrap(), vec![65536, 65536]);
        assert_eq!(value(&cg.graph, &rank.node).as_slice::<i32>().unwrap(), vec![2]);
        // A Size that does not fit its int32 is left to the kernel (which reports it).
        let cg = rewrite_for_client(&gd, &[] as &[String], &[size32.name()], &[], DEV, 1).unwrap();
        assert_eq!(op_of(&cg.graph, &size32.node), "Size");
    }

    #[test]
    fn feeds_placeholders_variables_and_random_ops_are_not_folded() {
        let s = Scope::new_root();
        let p = ops::placeholder(&s, DataType::Float, Some(&[2, 3]));
        let k = ops::constant(&s, Tensor::vec(vec![1.0f32, 2.0, 3.0]));
        let from_placeholder = ops::shape(&s, ops::add_v2(&s, p, k.clone()), DataType::Int32);
        let r = ops::random_uniform(&s, ops::constant(&s, Tensor::vec(vec![3i32])), DataType::Float, 1, 2);
        let from_random = ops::shape(&s, ops::add_v2(&s, r, k.clone()), DataType::Int32);
        let fed_add = ops::add_v2(&s, k.clone(), k.clone());
        let from_fed = ops::shape(&s, fed_add.clone(), DataType::Int32);
        let from_const = ops::shape(&s, ops::add_v2(&s, k.clone(), k), DataType::Int32);
        let gd = s.graph().to_graph_def();
        let fetches = [from_placeholder.name(), from_random.name(), from_fed.name(), from_const.name()];
        let cg = rewrite_for_client(&gd, &[fed_add.name()], &fetches, &[], DEV, 1).unwrap();
        for (o, want) in
            [(&from_placeholder, "Shape"), (&from_random, "Shape"), (&from_fed, "Shape"), (&from_const, "Const")]
        {
            assert_eq!(op_of(&cg.graph, &o.node), want, "{}", o.name());
        }
    }

    #[test]
    fn a_cycle_of_pure_ops_is_not_pure() {
        let mut a = NodeDef { name: "a".into(), op: "Identity".into(), input: vec!["b".into()], ..Default::default() };
        a.attr.insert("T".into(), attr::ty(DataType::Float));
        let mut b = a.clone();
        b.name = "b".into();
        b.input = vec!["a".into()];
        let mut sh = NodeDef { name: "s".into(), op: "Shape".into(), input: vec!["a".into()], ..Default::default() };
        sh.attr.insert("T".into(), attr::ty(DataType::Float));
        let g = GraphDef { node: vec![a, b, sh], ..Default::default() };
        assert!(fold_static_shapes(&g, &HashSet::new()).is_none());
    }
}
