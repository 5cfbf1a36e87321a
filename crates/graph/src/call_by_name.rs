//! Calls of a function by its name. TensorFlow lets a node's op type be the name of a
//! function of the graph's library (`function.Defun` wraps its functions so, and
//! `tf.nn.ctc_loss` builds its loops from such wrappers); the node's attrs bind the
//! function's attrs. ferroflow runs such a node as the `StatefulPartitionedCall` (or
//! `PartitionedCall`, when no op of the function is stateful) that TensorFlow's own
//! function library runtime would instantiate: same inputs, `Tin`/`Tout` from the
//! function's signature, `f` naming the function with the node's attrs.

use ferroflow_core::proto::{
    attr_value::Value as AV, AttrValue, FunctionDefLibrary, NameAttrList, NodeDef, OpDef as ProtoOpDef,
};
use ferroflow_core::{attr, DataType, NodeAttrs, Status};

use crate::registry::op_registry;

/// The type of argument `a` of function `f` called by `node`: its own type, or the node's
/// attr its `type_attr` names.
fn arg_type(node: &NodeDef, f: &str, a: &ferroflow_core::proto::op_def::ArgDef) -> Result<DataType, Status> {
    if !a.number_attr.is_empty() || !a.type_list_attr.is_empty() {
        return Err(Status::unimplemented(format!(
            "node '{}' calls function '{f}', whose argument '{}' is a list; ferroflow calls functions by name only \
             with single-tensor arguments",
            node.name, a.name
        )));
    }
    if !a.type_attr.is_empty() {
        return node
            .attr_type(&a.type_attr)
            .map_err(|e| e.context(format!("node '{}' calls function '{f}'", node.name)));
    }
    DataType::from_i32(a.r#type).map_err(|e| e.context(format!("function '{f}' argument '{}'", a.name)))
}

/// If `node`'s op is not a registered op but a function of `library`, rewrites it into a
/// call of that function and returns the function's output names (one tensor each);
/// `None` when the node is left as it is.
pub fn call_by_name(node: &mut NodeDef, library: &FunctionDefLibrary) -> Result<Option<Vec<String>>, Status> {
    if op_registry().get(&node.op).is_some() {
        return Ok(None);
    }
    let Some(fdef) = library.function.iter().find(|f| f.signature.as_ref().is_some_and(|s| s.name == node.op)) else {
        return Ok(None);
    };
    let sig: ProtoOpDef = fdef.signature.clone().unwrap_or_default();
    let f = sig.name.clone();
    let tin = sig.input_arg.iter().map(|a| arg_type(node, &f, a)).collect::<Result<Vec<_>, _>>()?;
    let tout = sig.output_arg.iter().map(|a| arg_type(node, &f, a)).collect::<Result<Vec<_>, _>>()?;
    let stateful = sig.is_stateful || fdef.node_def.iter().any(|n| op_registry().get(&n.op).is_none_or(|d| d.stateful));
    let bound = std::mem::take(&mut node.attr);
    node.op = if stateful { "StatefulPartitionedCall" } else { "PartitionedCall" }.to_string();
    node.attr.insert("Tin".into(), attr::list_type(&tin));
    node.attr.insert("Tout".into(), attr::list_type(&tout));
    node.attr.insert("f".into(), AttrValue { value: Some(AV::Func(Box::new(NameAttrList { name: f, attr: bound }))) });
    Ok(Some(sig.output_arg.iter().map(|a| a.name.clone()).collect()))
}
