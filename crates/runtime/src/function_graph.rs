//! A function of a library as a graph: its `FunctionDef` body with each argument a
//! `Placeholder` to feed, its results as tensor names to fetch and its side effects as
//! targets. Function calls (`PartitionedCall`, `If`, `While`, …) run it under an executor
//! of their own; a remote eager context runs a component function of a multi-device
//! function as a graph of its own, so its `_Send`/`_Recv` nodes meet their peers'.

use std::collections::{HashMap, HashSet};

use ferroflow_core::proto::{attr_value::Value as AV, op_def::ArgDef, FunctionDefLibrary, GraphDef, NodeDef};
use ferroflow_core::{attr, DataType, Status};
use ferroflow_graph::{lookup_op, output_arg_ranges, resolve_node, unique_names};

/// A function's body as a graph.
pub struct FunctionGraph {
    /// The body: one `Placeholder` per argument, then the function's nodes (no devices).
    pub graph: GraphDef,
    /// The tensor fed for each argument (`<placeholder>:0`).
    pub feeds: Vec<String>,
    /// The distinct tensors the results are.
    pub fetches: Vec<String>,
    /// For each result, its position in `fetches` (two results may be one tensor).
    pub ret_fetch: Vec<usize>,
    /// Nodes that run even when no result depends on them (control results, stateful nodes).
    pub targets: Vec<String>,
    /// Argument types.
    pub arg_types: Vec<DataType>,
    /// Result types.
    pub ret_types: Vec<DataType>,
}

fn concrete_type(fname: &str, what: &str, a: &ArgDef) -> Result<DataType, Status> {
    if !a.type_attr.is_empty() || !a.number_attr.is_empty() || !a.type_list_attr.is_empty() {
        return Err(Status::unimplemented(format!(
            "function '{fname}': {what} '{}' has a polymorphic type; ferroflow runs only functions whose \
             arguments and results have fixed types",
            a.name
        )));
    }
    if a.is_ref {
        return Err(Status::invalid_argument(format!("function '{fname}': {what} '{}' is a reference", a.name)));
    }
    DataType::from_i32(a.r#type).map_err(|e| e.context(format!("function '{fname}': {what} '{}'", a.name)))
}

/// Function `name` of `library` as a graph.
pub fn function_graph(name: &str, library: Option<&FunctionDefLibrary>) -> Result<FunctionGraph, Status> {
    let fdef = library
        .and_then(|l| l.function.iter().find(|f| f.signature.as_ref().is_some_and(|s| s.name == name)))
        .ok_or_else(|| Status::not_found(format!("function '{name}' is not in the graph's function library")))?;
    let sig = fdef.signature.clone().unwrap_or_default();
    let err = |msg: String| Status::invalid_argument(format!("function '{name}': {msg}"));
    let arg_types = sig.input_arg.iter().map(|a| concrete_type(name, "argument", a)).collect::<Result<Vec<_>, _>>()?;
    let ret_types = sig.output_arg.iter().map(|a| concrete_type(name, "result", a)).collect::<Result<Vec<_>, _>>()?;

    // Body nodes with defaults filled, and the output range of each of their arguments.
    let mut body: Vec<NodeDef> = Vec::with_capacity(fdef.node_def.len());
    let mut ranges: HashMap<String, Vec<(String, std::ops::Range<usize>)>> = HashMap::new();
    for n in &fdef.node_def {
        if n.attr.values().any(|v| matches!(v.value, Some(AV::Placeholder(_)))) {
            return Err(Status::unimplemented(format!(
                "function '{name}': node '{}' has an attr bound at call time; ferroflow runs only functions \
                 without attr placeholders",
                n.name
            )));
        }
        let mut d = n.clone();
        // A function called by name: its outputs keep the function's result names.
        let called = match library {
            Some(l) => ferroflow_graph::call_by_name(&mut d, l).map_err(|e| e.context(format!("function '{name}'")))?,
            None => None,
        };
        resolve_node(&mut d).map_err(|e| e.context(format!("function '{name}'")))?;
        d.device.clear();
        let outs = match called {
            Some(names) => names.into_iter().enumerate().map(|(i, n)| (n, i..i + 1)).collect(),
            None => output_arg_ranges(&d)?,
        };
        if ranges.insert(d.name.clone(), outs).is_some() {
            return Err(err(format!("two nodes are named '{}'", d.name)));
        }
        body.push(d);
    }
    // Arguments become Placeholders (fed at each call) under fresh names.
    let mut args: HashMap<String, String> = HashMap::new();
    let mut nodes = Vec::with_capacity(body.len() + sig.input_arg.len());
    for (i, a) in sig.input_arg.iter().enumerate() {
        if ranges.contains_key(&a.name) {
            return Err(err(format!("argument '{}' has the name of a node", a.name)));
        }
        let mut p = format!("_arg_{}_{i}", a.name);
        while ranges.contains_key(&p) {
            p.push('_');
        }
        if args.insert(a.name.clone(), p.clone()).is_some() {
            return Err(err(format!("two arguments are named '{}'", a.name)));
        }
        let mut n = NodeDef { name: p, op: "Placeholder".into(), ..Default::default() };
        n.attr.insert("dtype".into(), attr::ty(arg_types[i]));
        nodes.push(n);
    }
    // `arg`, `node:out_arg:k` (or `node:out_arg`, `node`) → a graph tensor name.
    let tensor = |s: &str| -> Result<String, Status> {
        if let Some(p) = args.get(s) {
            return Ok(format!("{p}:0"));
        }
        let mut parts = s.splitn(3, ':');
        let node = parts.next().unwrap_or("");
        let Some(outs) = ranges.get(node) else {
            return Err(err(format!("'{s}' names neither an argument nor a node")));
        };
        let Some(out_arg) = parts.next() else { return Ok(format!("{node}:0")) };
        let k: usize = match parts.next() {
            Some(k) => k.parse().map_err(|_| err(format!("bad output index in '{s}'")))?,
            None => 0,
        };
        let (_, r) = outs
            .iter()
            .find(|(n, _)| n == out_arg)
            .ok_or_else(|| err(format!("'{s}': node '{node}' has no output named '{out_arg}'")))?;
        if k >= r.len() {
            return Err(err(format!("'{s}': output '{out_arg}' of '{node}' has {} tensors", r.len())));
        }
        Ok(format!("{node}:{}", r.start + k))
    };
    for mut d in body {
        let ctx = |e: Status| e.context(format!("node '{}'", d.name));
        let mut inputs = Vec::with_capacity(d.input.len());
        for i in &d.input {
            inputs.push(match i.strip_prefix('^') {
                Some(c) if args.contains_key(c) => format!("^{}", args[c]),
                Some(c) if ranges.contains_key(c) => i.clone(),
                Some(c) => return Err(ctx(err(format!("control input '^{c}' names no node")))),
                None => tensor(i).map_err(ctx)?,
            });
        }
        d.input = inputs;
        nodes.push(d);
    }
    let results = sig.output_arg.iter().map(|o| {
        let src = fdef.ret.get(&o.name).ok_or_else(|| err(format!("result '{}' has no value", o.name)))?;
        tensor(src)
    });
    let (fetches, ret_fetch) = unique_names(results.collect::<Result<Vec<_>, _>>()?);
    // Side effects run even when no result depends on them.
    let mut targets: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let mut control_rets: Vec<&String> = fdef.control_ret.values().collect();
    control_rets.sort();
    for c in control_rets {
        if !ranges.contains_key(c) {
            return Err(err(format!("control result '{c}' names no node")));
        }
        if seen.insert(c.clone()) {
            targets.push(c.clone());
        }
    }
    for n in &fdef.node_def {
        if lookup_op(n).is_ok_and(|d| d.stateful) && seen.insert(n.name.clone()) {
            targets.push(n.name.clone());
        }
    }
    let feeds: Vec<String> = sig.input_arg.iter().map(|a| format!("{}:0", args[&a.name])).collect();
    let gd = GraphDef { node: nodes, ..Default::default() };
    Ok(FunctionGraph { graph: gd, feeds, fetches, ret_fetch, targets, arg_types, ret_types })
}
