//! Lowering of function calls that span tasks: a `While`/`StatelessWhile`, `If`/
//! `StatelessIf` or `PartitionedCall`/`StatefulPartitionedCall` whose function bodies place
//! ops on another task than the call, or that takes resources from more than one task, is
//! replaced, before placement, by its bodies inlined into the graph — a `While` as a
//! TensorFlow 1.x loop frame (`Enter`/`Merge`/`LoopCond`/`Switch`/`NextIteration`/`Exit`,
//! frame name = the node's name), an `If` as `Switch`/`Merge`, a call as its body — as
//! TensorFlow's `LowerFunctionalOpsPass` and function inlining do on a master. The placer
//! then places the body's nodes one by one and the partitioner splits the loop frame
//! across tasks with control loops. Calls that stay on one task keep running as calls
//! (their body on the call's device), which is faster and keeps their device.
//!
//! The lowered node's name is kept by an `IdentityN` of its results (a `NoOp` when it has
//! none), so fetches and control dependencies on it still work; it waits for the bodies'
//! side effects (their control results).

use std::collections::{HashMap, HashSet};

use ferroflow_core::proto::{attr_value::Value as AV, FunctionDef, FunctionDefLibrary, GraphDef, NodeDef};
use ferroflow_core::{attr, DataType, DeviceName, NodeAttrs, Status};
use ferroflow_graph::{output_arg_ranges, resolve_node};

/// How deep nested function bodies are searched for devices.
const MAX_DEPTH: usize = 16;

/// The function a call node's attr `a` names.
pub(crate) fn func_attr(n: &NodeDef, a: &str) -> Result<String, Status> {
    match n.attr_value(a)?.value.as_ref() {
        Some(AV::Func(f)) => Ok(f.name.clone()),
        _ => Err(Status::invalid_argument(format!("node '{}' (op {}): attr '{a}' must name a function", n.name, n.op))),
    }
}

fn find<'l>(lib: &'l FunctionDefLibrary, name: &str) -> Result<&'l FunctionDef, Status> {
    lib.function
        .iter()
        .find(|f| f.signature.as_ref().is_some_and(|s| s.name == name))
        .ok_or_else(|| Status::not_found(format!("function '{name}' is not in the graph's function library")))
}

/// The functions a call node runs, and the types of its data inputs.
type CallParts = (Vec<String>, Vec<DataType>);

/// The [`CallParts`] of node `n`, `None` when it calls no function.
fn call_parts(n: &NodeDef) -> Result<Option<CallParts>, Status> {
    Ok(Some(match n.op.as_str() {
        "While" | "StatelessWhile" => (vec![func_attr(n, "cond")?, func_attr(n, "body")?], n.attr_list_type("T")?),
        "If" | "StatelessIf" => {
            let mut t = vec![n.attr_type("Tcond").unwrap_or(DataType::Bool)];
            t.extend(n.attr_list_type("Tin")?);
            (vec![func_attr(n, "then_branch")?, func_attr(n, "else_branch")?], t)
        }
        "PartitionedCall" | "StatefulPartitionedCall" => (vec![func_attr(n, "f")?], n.attr_list_type("Tin")?),
        _ => return Ok(None),
    }))
}

/// Device requests of the nodes of function `name` and of the functions they call.
fn body_devices(lib: &FunctionDefLibrary, name: &str, depth: usize, out: &mut Vec<DeviceName>) -> Result<(), Status> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    for n in &find(lib, name)?.node_def {
        if !n.device.is_empty() {
            out.push(
                DeviceName::parse(&n.device).map_err(|e| e.context(format!("function '{name}' node '{}'", n.name)))?,
            );
        }
        if let Some((fs, _)) = call_parts(n)? {
            for f in fs {
                body_devices(lib, &f, depth + 1, out)?;
            }
        }
    }
    Ok(())
}

/// Whether call node `i` spans tasks (see the module docs).
fn spans_tasks(g: &GraphDef, index: &HashMap<&str, usize>, lib: &FunctionDefLibrary, i: usize) -> Result<bool, Status> {
    let n = &g.node[i];
    let Some((funcs, types)) = call_parts(n)? else { return Ok(false) };
    let mut specs = vec![DeviceName::parse(&n.device).map_err(|e| e.context(format!("node '{}'", n.name)))?];
    for f in &funcs {
        body_devices(lib, f, 0, &mut specs)?;
    }
    for (k, inp) in n.input.iter().filter(|s| !s.starts_with('^')).enumerate() {
        if types.get(k) != Some(&DataType::Resource) {
            continue;
        }
        let mut src = ferroflow_graph::parse_tensor_name(inp)?.0;
        for _ in 0..g.node.len() {
            let Some(&j) = index.get(src) else { break };
            let p = &g.node[j];
            if p.op == "Identity" {
                if let Some(next) = p.input.first() {
                    src = ferroflow_graph::parse_tensor_name(next)?.0;
                    continue;
                }
            }
            specs.push(DeviceName::parse(&p.device)?);
            break;
        }
    }
    let specs: Vec<&DeviceName> = specs.iter().filter(|d| d.job.is_some() || d.task.is_some()).collect();
    Ok(specs.iter().enumerate().any(|(a, x)| specs[a + 1..].iter().any(|y| !x.compatible(y))))
}

/// A function body inlined into the graph.
pub(crate) struct Inlined {
    pub(crate) nodes: Vec<NodeDef>,
    /// The tensor of each result.
    pub(crate) rets: Vec<String>,
    /// Nodes whose completion is the function's side effects.
    pub(crate) control: Vec<String>,
}

/// Inlines function `fname` under `prefix/` with `args` as its arguments, its nodes placed
/// with `caller` filling what their own device leaves open, and `^pivot` on every node
/// without inputs (so the body runs in the caller's frame and branch).
pub(crate) fn inline(
    lib: &FunctionDefLibrary,
    fname: &str,
    prefix: &str,
    args: &[String],
    caller: &DeviceName,
    pivot: &str,
) -> Result<Inlined, Status> {
    let fdef = find(lib, fname)?;
    let sig = fdef.signature.clone().unwrap_or_default();
    let err = |m: String| Status::invalid_argument(format!("function '{fname}': {m}"));
    if sig.input_arg.len() != args.len() {
        return Err(err(format!("takes {} arguments, the call gives {}", sig.input_arg.len(), args.len())));
    }
    let argmap: HashMap<&str, &str> =
        sig.input_arg.iter().map(|a| a.name.as_str()).zip(args.iter().map(String::as_str)).collect();
    let mut ranges = HashMap::new();
    for n in &fdef.node_def {
        let mut d = n.clone();
        resolve_node(&mut d).map_err(|e| e.context(format!("function '{fname}'")))?;
        ranges.insert(n.name.as_str(), output_arg_ranges(&d)?);
    }
    let tensor = |s: &str| -> Result<String, Status> {
        if let Some(a) = argmap.get(s) {
            return Ok(a.to_string());
        }
        let mut parts = s.splitn(3, ':');
        let node = parts.next().unwrap_or("");
        let outs = ranges.get(node).ok_or_else(|| err(format!("'{s}' names neither an argument nor a node")))?;
        let Some(out_arg) = parts.next() else { return Ok(format!("{prefix}/{node}")) };
        let k: usize =
            parts.next().map_or(Ok(0), |k| k.parse().map_err(|_| err(format!("bad output index in '{s}'"))))?;
        let (_, r) =
            outs.iter().find(|(n, _)| n == out_arg).ok_or_else(|| err(format!("'{s}': no output '{out_arg}'")))?;
        if k >= r.len() {
            return Err(err(format!("'{s}': output '{out_arg}' has {} tensors", r.len())));
        }
        Ok(format!("{prefix}/{node}:{}", r.start + k))
    };
    let mut nodes = Vec::with_capacity(fdef.node_def.len());
    for n in &fdef.node_def {
        let mut d = n.clone();
        d.name = format!("{prefix}/{}", n.name);
        let mut inputs = Vec::with_capacity(n.input.len() + 1);
        for i in &n.input {
            inputs.push(match i.strip_prefix('^') {
                Some(c) if argmap.contains_key(c) => format!("^{}", ferroflow_graph::parse_tensor_name(argmap[c])?.0),
                Some(c) if ranges.contains_key(c) => format!("^{prefix}/{c}"),
                Some(c) => return Err(err(format!("node '{}': control input '^{c}' names no node", n.name))),
                None => tensor(i)?,
            });
        }
        if inputs.is_empty() {
            inputs.push(format!("^{pivot}"));
        }
        d.input = inputs;
        let own =
            DeviceName::parse(&n.device).map_err(|e| e.context(format!("function '{fname}' node '{}'", n.name)))?;
        let dev = own.merged_with_defaults(caller);
        d.device = if dev == DeviceName::default() { String::new() } else { dev.to_string() };
        if let Ok(classes) = d.attr_list_string("_class") {
            let renamed: Vec<String> = classes
                .iter()
                .map(|c| match c.strip_prefix("loc:@") {
                    Some(x) if ranges.contains_key(x) => format!("loc:@{prefix}/{x}"),
                    _ => c.clone(),
                })
                .collect();
            d.attr.insert("_class".into(), attr::list_string(&renamed));
        }
        nodes.push(d);
    }
    let rets = sig
        .output_arg
        .iter()
        .map(|o| {
            fdef.ret
                .get(&o.name)
                .ok_or_else(|| err(format!("result '{}' has no value", o.name)))
                .and_then(|s| tensor(s))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut control: Vec<String> = fdef.control_ret.values().map(|c| format!("{prefix}/{c}")).collect();
    control.sort();
    control.dedup();
    Ok(Inlined { nodes, rets, control })
}

pub(crate) fn node(name: String, op: &str, device: &str, inputs: Vec<String>) -> NodeDef {
    NodeDef { name, op: op.into(), device: device.into(), input: inputs, ..Default::default() }
}

pub(crate) fn typed(mut n: NodeDef, key: &str, t: DataType) -> NodeDef {
    n.attr.insert(key.into(), attr::ty(t));
    n
}

/// The node that keeps a lowered call's name: an `IdentityN` of `outs` (types `types`)
/// after `control`, or a `NoOp` after `control` when there are no results.
pub(crate) fn keeper(call: &NodeDef, outs: Vec<String>, types: &[DataType], control: &[String]) -> NodeDef {
    let mut inputs = outs;
    let empty = inputs.is_empty();
    inputs.extend(control.iter().map(|c| format!("^{c}")));
    let mut k = node(call.name.clone(), if empty { "NoOp" } else { "IdentityN" }, &call.device, inputs);
    if !empty {
        k.attr.insert("T".into(), attr::list_type(types));
    }
    k
}

use crate::lower_calls_ops::{lower_call, lower_if, lower_while};

/// Lowers every call of `graph` that spans tasks (see the module docs); returns how many
/// were lowered. Calls inside inlined bodies are examined in turn.
pub fn lower_spanning_calls(graph: &mut GraphDef) -> Result<usize, Status> {
    let Some(lib) = graph.library.clone() else { return Ok(0) };
    let mut lowered = 0;
    let mut checked: HashSet<String> = HashSet::new();
    loop {
        let index: HashMap<&str, usize> = graph.node.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
        let mut target = None;
        for i in 0..graph.node.len() {
            let n = &graph.node[i];
            let non_bool_if = n.op.ends_with("If") && n.attr_type("Tcond").is_ok_and(|t| t != DataType::Bool);
            if checked.contains(&n.name) || call_parts(n)?.is_none() || non_bool_if {
                continue;
            }
            if spans_tasks(graph, &index, &lib, i)? {
                target = Some(i);
                break;
            }
            checked.insert(n.name.clone());
        }
        let Some(i) = target else { return Ok(lowered) };
        let call = &graph.node[i];
        let new = match call.op.as_str() {
            "While" | "StatelessWhile" => lower_while(&lib, call),
            "If" | "StatelessIf" => lower_if(&lib, call),
            _ => lower_call(&lib, call),
        };
        match new {
            Ok(new) => {
                graph.node.remove(i);
                graph.node.extend(new);
                lowered += 1;
            }
            Err(e) => {
                // The call keeps running as a call (its body on one device), as before.
                tracing::debug!("node '{}' (op {}) is not lowered: {e}", call.name, call.op);
                checked.insert(call.name.clone());
            }
        }
        if lowered > 10_000 {
            return Err(Status::invalid_argument("lowering function calls did not end (a recursive function?)"));
        }
    }
}

#[cfg(test)]
#[path = "lower_calls_tests.rs"]
mod tests;
