//! The backpropagation walk.

use std::collections::{HashMap, HashSet, VecDeque};

use ferroflow_core::{DataType, Status};

use crate::gradients::registry::{grad_registry, GradOp};
use crate::graph::{parse_tensor_name, NodeEntry};
use crate::scope::{Output, Scope};

/// Options of [`gradients_with_options`].
#[derive(Clone, Debug, Default)]
pub struct GradOptions {
    /// Tensors treated as constants (gradients do not flow through them).
    pub stop_gradients: Vec<Output>,
    /// TensorFlow's `gate_gradients=GATE_OP` (the default of `Optimizer.minimize`): the
    /// gradients of an op's inputs are released together, once all of them are computed.
    /// With ref variables, whose reads alias the variable, this keeps an update of one
    /// input (a weight) from running before the gradient of another input has read it.
    pub gate_gradients: bool,
}

/// The gradients of `sum(ys)` with respect to each of `xs` (`None` where an x does not
/// affect any y). `grad_ys` (default: ones) weights each y. Gradient ops go under the
/// `gradients` name scope.
///
/// ```
/// use ferroflow_graph::{gradients, ops, Scope};
/// let s = Scope::new_root();
/// let x = ops::constant(&s, 3.0f32);
/// let y = ops::identity(&s, x.clone());
/// let g = gradients(&s, &[y], &[x], None).unwrap();
/// assert!(g[0].is_some());
/// ```
pub fn gradients(
    scope: &Scope,
    ys: &[Output],
    xs: &[Output],
    grad_ys: Option<&[Output]>,
) -> Result<Vec<Option<Output>>, Status> {
    gradients_with_options(scope, ys, xs, grad_ys, &GradOptions::default())
}

fn is_float(d: DataType) -> bool {
    d.is_float()
}

/// [`gradients`] with options.
pub fn gradients_with_options(
    scope: &Scope,
    ys: &[Output],
    xs: &[Output],
    grad_ys: Option<&[Output]>,
    opts: &GradOptions,
) -> Result<Vec<Option<Output>>, Status> {
    let graph = scope.graph().clone();
    graph.status()?;
    if let Some(g) = grad_ys {
        if g.len() != ys.len() {
            return Err(Status::invalid_argument(format!("{} grad_ys for {} ys", g.len(), ys.len())));
        }
    }
    let nodes: Vec<NodeEntry> = graph.nodes();
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.def.name.as_str(), i)).collect();
    let find = |o: &Output| -> Result<usize, Status> {
        index
            .get(o.node.as_str())
            .copied()
            .ok_or_else(|| Status::not_found(format!("tensor '{o}' is not in the graph")))
    };
    // Data inputs of every node as (src node, src slot).
    let inputs: Vec<Vec<(usize, usize)>> = nodes
        .iter()
        .map(|n| {
            n.def
                .input
                .iter()
                .filter(|i| !i.starts_with('^'))
                .filter_map(|i| parse_tensor_name(i).ok().and_then(|(s, k)| index.get(s).map(|&j| (j, k))))
                .collect()
        })
        .collect();
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (d, ins) in inputs.iter().enumerate() {
        for &(s, _) in ins {
            consumers[s].push(d);
        }
    }
    let stop_nodes: HashSet<usize> = opts.stop_gradients.iter().filter_map(|o| find(o).ok()).collect();
    // Forward reach from xs.
    let x_nodes: Vec<usize> = xs.iter().map(find).collect::<Result<_, _>>()?;
    let y_nodes: Vec<usize> = ys.iter().map(find).collect::<Result<_, _>>()?;
    let mut reached = vec![false; nodes.len()];
    let mut q: VecDeque<usize> = x_nodes.iter().copied().collect();
    while let Some(n) = q.pop_front() {
        if reached[n] {
            continue;
        }
        reached[n] = true;
        for &c in &consumers[n] {
            q.push_back(c);
        }
    }
    // Backward from ys within reached: the ops between xs and ys.
    let mut between = vec![false; nodes.len()];
    let mut q: VecDeque<usize> = y_nodes.iter().copied().filter(|&y| reached[y]).collect();
    while let Some(n) = q.pop_front() {
        if between[n] {
            continue;
        }
        between[n] = true;
        for &(s, _) in &inputs[n] {
            if reached[s] {
                q.push_back(s);
            }
        }
    }
    // Pending = number of data edges from this node into other between-nodes.
    let mut pending = vec![0usize; nodes.len()];
    for (d, ins) in inputs.iter().enumerate() {
        if !between[d] {
            continue;
        }
        for &(s, _) in ins {
            if between[s] {
                pending[s] += 1;
            }
        }
    }
    let gs = scope.sub("gradients");
    // Accumulated gradients per (node, slot).
    let mut acc: HashMap<(usize, usize), Vec<Output>> = HashMap::new();
    for (i, y) in ys.iter().enumerate() {
        let yn = y_nodes[i];
        let g = match grad_ys {
            Some(g) => g[i].clone(),
            None => gs.op("OnesLike").name(&format!("grad_ys_{i}")).input(y.clone()).build().output(0),
        };
        acc.entry((yn, y.index)).or_default().push(g);
    }
    let x_set: HashSet<usize> = x_nodes.iter().copied().collect();
    let mut ready: VecDeque<usize> = (0..nodes.len()).filter(|&n| between[n] && pending[n] == 0).collect();
    let mut done = vec![false; nodes.len()];
    while let Some(n) = ready.pop_front() {
        if done[n] {
            continue;
        }
        done[n] = true;
        let entry = &nodes[n];
        let op_grad = grad_registry().get(&entry.def.op);
        let stop = stop_nodes.contains(&n) || (x_set.contains(&n) && !has_between_inputs(&inputs[n], &between));
        let mut propagate = !stop;
        let f = match op_grad {
            Some(Some(f)) => Some(f),
            Some(None) => {
                propagate = false;
                None
            }
            None => None,
        };
        let num_out = entry.sig.outputs.len();
        let has_any = (0..num_out).any(|k| acc.contains_key(&(n, k)));
        if propagate && has_any && inputs[n].iter().any(|&(s, _)| between[s]) {
            let Some(f) = f else {
                return Err(Status::unimplemented(format!(
                    "no gradient is defined for op {} (node '{}'); ferroflow does not differentiate it yet",
                    entry.def.op, entry.def.name
                )));
            };
            let op_scope = gs.sub(&format!("{}_grad", entry.def.name));
            let outputs: Vec<Output> = (0..num_out)
                .map(|k| Output { node: entry.def.name.clone(), index: k, dtype: entry.sig.outputs[k].0 })
                .collect();
            let mut out_grads = Vec::with_capacity(num_out);
            for (k, o) in outputs.iter().enumerate() {
                out_grads.push(match acc.get(&(n, k)) {
                    Some(v) => sum_grads(&op_scope, v),
                    None => op_scope.op("ZerosLike").input(o.clone()).build().output(0),
                });
            }
            let op_inputs: Vec<Output> = inputs[n]
                .iter()
                .map(|&(s, k)| Output { node: nodes[s].def.name.clone(), index: k, dtype: nodes[s].sig.outputs[k].0 })
                .collect();
            let gop = GradOp { node: entry.def.clone(), inputs: op_inputs, outputs };
            let in_grads = f(&op_scope, &gop, &out_grads)
                .map_err(|e| e.context(format!("gradient of node '{}'", entry.def.name)))?;
            graph.status().map_err(|e| e.context(format!("building the gradient of node '{}'", entry.def.name)))?;
            if in_grads.len() != inputs[n].len() {
                return Err(Status::internal(format!(
                    "gradient of {} returned {} gradients for {} inputs",
                    entry.def.op,
                    in_grads.len(),
                    inputs[n].len()
                )));
            }
            let in_grads = if opts.gate_gradients { gate(&op_scope, in_grads, &graph)? } else { in_grads };
            for (j, g) in in_grads.into_iter().enumerate() {
                let (s, k) = inputs[n][j];
                if let Some(g) = g {
                    let t = nodes[s].sig.outputs[k].0;
                    if between[s] && (is_float(t) || t == DataType::Resource) {
                        acc.entry((s, k)).or_default().push(g);
                    }
                }
            }
        }
        for &(s, _) in &inputs[n] {
            if between[s] {
                pending[s] -= 1;
                if pending[s] == 0 {
                    ready.push_back(s);
                }
            }
        }
    }
    let mut out = Vec::with_capacity(xs.len());
    for (i, x) in xs.iter().enumerate() {
        out.push(acc.get(&(x_nodes[i], x.index)).map(|v| sum_grads(&gs, v)));
    }
    graph.status()?;
    Ok(out)
}

/// TensorFlow's `tuple`: when an op has several input gradients, a `NoOp` waits for all of
/// them and each dense gradient is passed on through an `Identity` that waits for the
/// `NoOp` (a sparse gradient, an IndexedSlices, keeps its form and is only waited for).
fn gate(s: &Scope, grads: Vec<Option<Output>>, graph: &crate::Graph) -> Result<Vec<Option<Output>>, Status> {
    let present: Vec<&Output> = grads.iter().flatten().collect();
    if present.len() < 2 {
        return Ok(grads);
    }
    let mut b = s.op("NoOp").name("tuple/group_deps");
    for g in &present {
        b = b.control_input(g.node.as_str());
    }
    let gate = b.try_build()?;
    grads
        .into_iter()
        .map(|g| match g {
            Some(g) if crate::indexed_slices(graph, &g).is_none() => s
                .colocate_with(g.node.as_str())
                .op("Identity")
                .name("tuple/control_dependency")
                .input(g)
                .control_input(gate.name.as_str())
                .try_build()
                .map(|op| Some(op.output(0))),
            other => Ok(other),
        })
        .collect()
}

fn has_between_inputs(ins: &[(usize, usize)], between: &[bool]) -> bool {
    ins.iter().any(|&(s, _)| between[s])
}

fn sum_grads(s: &Scope, v: &[Output]) -> Output {
    if v.len() == 1 {
        v[0].clone()
    } else {
        s.op("AddN").input_list(v.to_vec()).build().output(0)
    }
}
