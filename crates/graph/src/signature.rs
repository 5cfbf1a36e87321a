//! Resolving a `NodeDef` against its op: defaults, attr checks, input and output types.

use ferroflow_core::proto::{attr_value::Value as AV, AttrValue, NodeDef};
use ferroflow_core::{DataType, NodeAttrs, Status};

use crate::op_def::{ArgDef, ArgType, AttrDef, OpDef};
use crate::registry::op_registry;

/// Input and output types of a node; the flag marks reference (`Ref(T)`) arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    /// One entry per data input.
    pub inputs: Vec<(DataType, bool)>,
    /// One entry per output.
    pub outputs: Vec<(DataType, bool)>,
}

/// The op definition of a node, or NotFound naming node and op.
pub fn lookup_op(node: &NodeDef) -> Result<&'static OpDef, Status> {
    op_registry().get(&node.op).ok_or_else(|| {
        Status::not_found(format!("Op type not registered '{}' in ferroflow (node '{}')", node.op, node.name))
    })
}

/// Adds the op's default attr values that the node lacks.
pub fn add_defaults(def: &OpDef, node: &mut NodeDef) {
    for a in &def.attrs {
        if let Some(d) = &a.default {
            node.attr.entry(a.name.clone()).or_insert_with(|| d.clone());
        }
    }
}

fn expand(def: &OpDef, node: &NodeDef, args: &[ArgDef]) -> Result<Vec<(DataType, bool)>, Status> {
    let mut out = Vec::new();
    for a in args {
        let one = |t: &ArgType| -> Result<DataType, Status> {
            match t {
                ArgType::Fixed(d) => Ok(*d),
                ArgType::Attr(name) => node.attr_type(name),
                _ => Err(def.err(&node.name, format!("nested list argument '{}'", a.name))),
            }
        };
        match &a.ty {
            ArgType::Fixed(_) | ArgType::Attr(_) => out.push((one(&a.ty)?, a.is_ref)),
            ArgType::Repeated { number_attr, elem } => {
                let n = node.attr_int(number_attr)?;
                if !(0..=1_000_000).contains(&n) {
                    return Err(def.err(&node.name, format!("attr '{number_attr}' = {n} is out of range")));
                }
                let t = one(elem)?;
                out.extend(std::iter::repeat_n((t, a.is_ref), n as usize));
            }
            ArgType::List(name) => {
                out.extend(node.attr_list_type(name)?.into_iter().map(|t| (t, a.is_ref)));
            }
        }
    }
    Ok(out)
}

/// The flat range of outputs of each output argument of `node`, in order (function bodies
/// name tensors `node:argument:k`). The node's attrs must already include defaults.
pub fn output_arg_ranges(node: &NodeDef) -> Result<Vec<(String, std::ops::Range<usize>)>, Status> {
    let def = lookup_op(node)?;
    let mut at = 0;
    let mut out = Vec::with_capacity(def.outputs.len());
    for a in &def.outputs {
        let n = expand(def, node, std::slice::from_ref(a))?.len();
        out.push((a.name.clone(), at..at + n));
        at += n;
    }
    Ok(out)
}

/// Checks the node's attrs (present, right kind, allowed types) and computes its signature.
/// Call after [`add_defaults`].
pub fn signature_of(def: &OpDef, node: &NodeDef) -> Result<Signature, Status> {
    for a in &def.attrs {
        let Some(v) = node.attr.get(&a.name) else {
            return Err(def.err(&node.name, format!("missing required attr '{}' of type {}", a.name, a.ty)));
        };
        let ok = match (&v.value, a.ty.as_str()) {
            (Some(AV::Type(t)), "type") => {
                let d =
                    DataType::from_i32(*t).map_err(|e| e.context(format!("node '{}' attr '{}'", node.name, a.name)))?;
                if let Some(allowed) = &a.allowed {
                    if !allowed.contains(&d) {
                        let names: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
                        return Err(def.err(
                            &node.name,
                            format!("attr '{}' = {d} is not an allowed type; allowed: {}", a.name, names.join(", ")),
                        ));
                    }
                }
                true
            }
            (Some(AV::I(_)), "int")
            | (Some(AV::F(_)), "float")
            | (Some(AV::B(_)), "bool")
            | (Some(AV::S(_)), "string")
            | (Some(AV::Shape(_)), "shape")
            | (Some(AV::Tensor(_)), "tensor")
            | (Some(AV::Func(_)), "func") => true,
            (Some(AV::List(_)), t) if t.starts_with("list(") => true,
            (None, t) if t.starts_with("list(") => true,
            _ => false,
        };
        if !ok {
            return Err(def.err(&node.name, format!("attr '{}' should be of type {}", a.name, a.ty)));
        }
        check_minimum(def, node, a, v)?;
    }
    Ok(Signature { inputs: expand(def, node, &def.inputs)?, outputs: expand(def, node, &def.outputs)? })
}

/// An `int` attr below its minimum, or a list attr shorter than its minimum, is refused
/// as TensorFlow refuses it (kernels index the first of `N` inputs, `ksize[3]`, ...).
fn check_minimum(def: &OpDef, node: &NodeDef, a: &AttrDef, v: &AttrValue) -> Result<(), Status> {
    let Some(min) = a.minimum else { return Ok(()) };
    let (what, got) = match &v.value {
        Some(AV::I(i)) => ("Value", *i),
        Some(AV::List(l)) => {
            let n = l.s.len() + l.i.len() + l.f.len() + l.b.len() + l.r#type.len() + l.shape.len() + l.tensor.len();
            ("Length", (n + l.func.len()) as i64)
        }
        None if a.ty.starts_with("list(") => ("Length", 0),
        _ => return Ok(()),
    };
    if got < min {
        return Err(
            def.err(&node.name, format!("{what} for attr '{}' of {got} must be at least minimum {min}", a.name))
        );
    }
    Ok(())
}

/// Looks up the op, fills defaults into `node`, validates and returns the signature; also
/// checks the number of data inputs.
pub fn resolve_node(node: &mut NodeDef) -> Result<Signature, Status> {
    let def = lookup_op(node)?;
    add_defaults(def, node);
    let sig = signature_of(def, node)?;
    let data_inputs = node.input.iter().filter(|i| !i.starts_with('^')).count();
    if data_inputs != sig.inputs.len() {
        return Err(def.err(
            &node.name,
            format!("expected {} data inputs, got {data_inputs} ({:?})", sig.inputs.len(), node.input),
        ));
    }
    if let Some(pos) = node.input.iter().position(|i| i.starts_with('^')) {
        if node.input[pos..].iter().any(|i| !i.starts_with('^')) {
            return Err(def.err(&node.name, "data inputs must come before control inputs"));
        }
    }
    Ok(sig)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph_util::test_node as node;
    use ferroflow_core::attr;

    #[test]
    fn attrs_below_their_minimum_are_refused() {
        // Found by the fuzzer: ConcatV2, Pack and ParallelDynamicStitch with N = 0 reached
        // their kernels, which index the first input (a contained panic, INTERNAL).
        let f = attr::ty(DataType::Float);
        for (op, inputs) in [("ConcatV2", vec!["axis"]), ("Pack", vec![]), ("AddN", vec![])] {
            let mut n = node(op, &inputs, &[("N", attr::int(0)), ("T", f.clone())]);
            let e = resolve_node(&mut n).unwrap_err();
            assert!(
                e.message.contains("node 'n' (op ")
                    && e.message.contains("Value for attr 'N' of 0 must be at least minimum"),
                "{e}"
            );
        }
        let mut n = node(
            "MaxPool",
            &["x"],
            &[
                ("ksize", attr::list_int(&[1, 2, 2])),
                ("strides", attr::list_int(&[1, 1, 1, 1])),
                ("padding", attr::string("SAME")),
                ("T", f.clone()),
            ],
        );
        let e = resolve_node(&mut n).unwrap_err();
        assert!(e.message.contains("Length for attr 'ksize' of 3 must be at least minimum 4"), "{e}");
        let mut ok = node("Pack", &["a", "b"], &[("N", attr::int(2)), ("T", f)]);
        assert!(resolve_node(&mut ok).is_ok());
    }
}
