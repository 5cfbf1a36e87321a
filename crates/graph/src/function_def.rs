//! Functions defined from Rust: a body built on a fresh graph from its arguments becomes a
//! `FunctionDef` in a graph's library, callable by name from the ops that take a function
//! attr (`MapDataset`'s `f`, `FilterDataset`'s `predicate`, `If`, `While`, …).

use std::collections::HashMap;

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::proto::op_def::ArgDef;
use ferroflow_core::proto::{AttrValue, FunctionDef, FunctionDefLibrary, NameAttrList, OpDef as OpDefProto};
use ferroflow_core::{DataType, Status};

use crate::graph::{parse_tensor_name, Graph};
use crate::ops::placeholder_named;
use crate::scope::{Output, Scope};
use crate::signature::output_arg_ranges;

/// A function of a graph's library.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Its name in the library.
    pub name: String,
    /// Argument types.
    pub arg_types: Vec<DataType>,
    /// Result types.
    pub ret_types: Vec<DataType>,
}

impl Function {
    /// The attr value naming this function.
    pub fn attr(&self) -> AttrValue {
        AttrValue { value: Some(AV::Func(Box::new(NameAttrList { name: self.name.clone(), attr: HashMap::new() }))) }
    }
}

/// Defines function `name` in `graph`'s library: `body` builds its results from its
/// arguments (of `arg_types`) on a scope of a fresh graph. Every node the body adds
/// becomes part of the function; stateful nodes run even when no result depends on them.
pub fn define_function(
    graph: &Graph,
    name: &str,
    arg_types: &[DataType],
    body: impl FnOnce(&Scope, &[Output]) -> Result<Vec<Output>, Status>,
) -> Result<Function, Status> {
    let s = Scope::new_root();
    let args: Vec<Output> =
        arg_types.iter().enumerate().map(|(i, &t)| placeholder_named(&s, &format!("arg{i}"), t, None)).collect();
    let rets = body(&s, &args)?;
    s.status()?;
    let g = s.graph().to_graph_def();
    let arg_names: HashMap<String, String> = (0..args.len()).map(|i| (format!("arg{i}"), format!("arg{i}"))).collect();
    // `node:k` → `node:out_arg:j`, arguments by name.
    let mut ranges = HashMap::new();
    for n in &g.node {
        if !arg_names.contains_key(&n.name) {
            ranges.insert(n.name.clone(), output_arg_ranges(n)?);
        }
    }
    let convert = |t: &str| -> Result<String, Status> {
        let (node, k) = parse_tensor_name(t)?;
        if arg_names.contains_key(node) {
            return Ok(node.to_string());
        }
        let r =
            ranges.get(node).ok_or_else(|| Status::invalid_argument(format!("function '{name}': no node '{node}'")))?;
        let (arg, range) = r
            .iter()
            .find(|(_, r)| r.contains(&k))
            .ok_or_else(|| Status::invalid_argument(format!("function '{name}': '{node}' has no output {k}")))?;
        Ok(format!("{node}:{arg}:{}", k - range.start))
    };
    let mut nodes = Vec::new();
    for n in g.node.iter().filter(|n| !arg_names.contains_key(&n.name)) {
        let mut d = n.clone();
        d.input = n
            .input
            .iter()
            .map(|i| if i.starts_with('^') { Ok(i.clone()) } else { convert(i) })
            .collect::<Result<_, _>>()?;
        nodes.push(d);
    }
    let arg = |n: String, t: DataType| ArgDef { name: n, r#type: t.as_i32(), ..Default::default() };
    let mut ret = HashMap::new();
    for (i, r) in rets.iter().enumerate() {
        ret.insert(format!("ret{i}"), convert(&r.name())?);
    }
    let f = FunctionDef {
        signature: Some(OpDefProto {
            name: name.to_string(),
            input_arg: arg_types.iter().enumerate().map(|(i, &t)| arg(format!("arg{i}"), t)).collect(),
            output_arg: rets.iter().enumerate().map(|(i, r)| arg(format!("ret{i}"), r.dtype)).collect(),
            ..Default::default()
        }),
        node_def: nodes,
        ret,
        ..Default::default()
    };
    graph.add_functions(&FunctionDefLibrary { function: vec![f], ..Default::default() })?;
    Ok(Function {
        name: name.to_string(),
        arg_types: arg_types.to_vec(),
        ret_types: rets.iter().map(|r| r.dtype).collect(),
    })
}
