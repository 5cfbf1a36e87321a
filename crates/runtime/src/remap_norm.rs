//! The batch-norm rewrites of the remapper ([`crate::remap`]), as TensorFlow's Grappler
//! builds `_FusedBatchNormEx` and `_FusedBatchNormGradEx`:
//!
//! - `FusedBatchNormV3 → Relu|Relu6`, when the activation is the only reader of `y`: the
//!   batch norm becomes `_FusedBatchNormEx` (same name, inputs and other outputs), which
//!   writes the activated `y`, and the activation node becomes an `Identity` of it, so
//!   everything that read the activation (the next layer, the activation's gradient) is
//!   untouched. The un-activated `y` is never written nor read back.
//! - `ReluGrad|Relu6Grad → FusedBatchNormGradV3`, when the batch norm's gradient is the
//!   only reader of the activation's gradient: one `_FusedBatchNormGradEx` (the gradient's
//!   name) that reads the activation's incoming gradient and output, without the `dy`
//!   tensor in between.
//!
//! Results are equal bit for bit to the unfused ops (float32, 4-D NHWC or NCHW).

use std::collections::HashMap;

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::{attr, NodeAttrs};

use crate::remap::{control_inputs, data_inputs, source};

/// A batch norm (or its gradient) the fused kernels compute.
fn fusable(n: &NodeDef) -> bool {
    let float = matches!(n.attr_type("T"), Ok(ferroflow_core::DataType::Float));
    let format = n.attr_string("data_format").unwrap_or_else(|_| "NHWC".into());
    float && matches!(format.as_str(), "NHWC" | "NCHW") && !n.has_attr("num_side_inputs")
}

/// The node and slot of `n`'s `i`-th data input.
fn data_input(n: &NodeDef, i: usize) -> Option<(&str, usize)> {
    data_inputs(n).nth(i).and_then(|i| source(i))
}

/// Who reads each node's outputs: per (node, slot) its data consumers, per node its
/// control consumers.
struct Readers {
    data: HashMap<(usize, usize), Vec<usize>>,
    control: Vec<usize>,
}

impl Readers {
    fn of(gd: &GraphDef, index: &HashMap<&str, usize>) -> Readers {
        let mut r = Readers { data: HashMap::new(), control: vec![0; gd.node.len()] };
        for (ci, n) in gd.node.iter().enumerate() {
            for inp in &n.input {
                if let Some(c) = inp.strip_prefix('^') {
                    if let Some(&s) = index.get(c) {
                        r.control[s] += 1;
                    }
                } else if let Some((s, slot)) = source(inp) {
                    if let Some(&s) = index.get(s) {
                        r.data.entry((s, slot)).or_default().push(ci);
                    }
                }
            }
        }
        r
    }

    /// The single data reader of output `slot` of node `i`, if it has exactly one.
    fn only(&self, i: usize, slot: usize) -> Option<usize> {
        match self.data.get(&(i, slot)).map(Vec::as_slice) {
            Some(&[c]) => Some(c),
            _ => None,
        }
    }
}

/// The `activation_mode` of an activation op (`Relu`, `Relu6`), or of its gradient op.
fn activation(op: &str, gradient: bool) -> Option<&'static str> {
    match (op, gradient) {
        ("Relu", false) | ("ReluGrad", true) => Some("Relu"),
        ("Relu6", false) | ("Relu6Grad", true) => Some("Relu6"),
        _ => None,
    }
}

/// The forward `FusedBatchNormV3` of the gradient `g` whose activation output the activation
/// gradient `a` reads as `y`: the activation `mode` of that batch norm's `y`, of the same `x`,
/// `scale`, `epsilon` and mode (training or not), whose statistics are `g`'s reserve spaces
/// (training: its outputs 3 and 4; inference: its mean and variance inputs). Then `y` is
/// `mode((x - mean) · scale / √(var + ε) + offset)` of `g`'s own inputs, bit for bit.
fn forward_batch_norm(
    gd: &GraphDef,
    index: &HashMap<&str, usize>,
    g: &NodeDef,
    a: &NodeDef,
    mode: &str,
) -> Option<usize> {
    let (act, 0) = data_input(a, 1)? else { return None };
    let act = &gd.node[*index.get(act)?];
    if activation(&act.op, false) != Some(mode) {
        return None;
    }
    let (fname, 0) = data_input(act, 0)? else { return None };
    let fi = *index.get(fname)?;
    let f = &gd.node[fi];
    let same_attr = |k: &str| f.attr.get(k) == g.attr.get(k);
    let training = g.attr_bool("is_training").unwrap_or(true);
    let stats = if training {
        data_input(g, 3) == Some((fname, 3)) && data_input(g, 4) == Some((fname, 4))
    } else {
        data_input(g, 3) == data_input(f, 3) && data_input(g, 4) == data_input(f, 4)
    };
    let ok = f.op == "FusedBatchNormV3"
        && fusable(f)
        && same_attr("epsilon")
        && f.attr_bool("is_training").unwrap_or(true) == training
        && same_attr("data_format")
        && data_input(g, 1) == data_input(f, 0)
        && data_input(g, 2) == data_input(f, 1)
        && stats;
    ok.then_some(fi)
}

/// Rewrites every matching forward and gradient pair; returns how many.
pub(crate) fn fuse_batch_norms(gd: &mut GraphDef) -> usize {
    let index: HashMap<&str, usize> = gd.node.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let readers = Readers::of(gd, &index);
    // (batch norm, activation, mode)
    let mut forward = Vec::new();
    for (bi, b) in gd.node.iter().enumerate() {
        if b.op != "FusedBatchNormV3" || !fusable(b) {
            continue;
        }
        let Some(ai) = readers.only(bi, 0) else { continue };
        let a = &gd.node[ai];
        let Some(mode) = activation(&a.op, false) else { continue };
        if a.device == b.device && a.attr.get("T") == b.attr.get("T") && data_input(a, 0) == Some((b.name.as_str(), 0))
        {
            forward.push((bi, ai, mode));
        }
    }
    // (gradient, activation gradient, mode, the forward batch norm's offset, y from x)
    let mut backward = Vec::new();
    for (gi, g) in gd.node.iter().enumerate() {
        if g.op != "FusedBatchNormGradV3" || !fusable(g) {
            continue;
        }
        let Some((ai, 0)) = data_input(g, 0).and_then(|(n, s)| Some((*index.get(n)?, s))) else { continue };
        let a = &gd.node[ai];
        let Some(mode) = activation(&a.op, true) else { continue };
        if readers.only(ai, 0) != Some(gi)
            || readers.control[ai] != 0
            || a.device != g.device
            || a.attr.get("T") != g.attr.get("T")
        {
            continue;
        }
        if data_inputs(g).count() != 6 || data_inputs(a).count() != 2 {
            continue;
        }
        // `_FusedBatchNormGradEx` takes the forward op's offset: that of the batch norm whose
        // activation `y` is, when it is one (then the kernel may recompute `y` from `x`),
        // else that of the node that made reserve_space_1 (which the kernel does not read).
        let forward_of_y = forward_batch_norm(gd, &index, g, a, mode);
        let y_from_x = forward_of_y.is_some();
        let offset = forward_of_y
            .or_else(|| data_input(g, 3).and_then(|(f, _)| index.get(f).copied()))
            .and_then(|fi| data_inputs(&gd.node[fi]).nth(2));
        if let Some(offset) = offset {
            backward.push((gi, ai, mode, offset.clone(), y_from_x));
        }
    }
    let count = forward.len() + backward.len();
    for (bi, ai, mode) in forward {
        let b = &mut gd.node[bi];
        b.op = "_FusedBatchNormEx".into();
        b.attr.insert("activation_mode".into(), attr::string(mode));
        b.attr.insert("num_side_inputs".into(), attr::int(0));
        let bn = b.name.clone();
        let a = &mut gd.node[ai];
        a.op = "Identity".into();
        a.attr.retain(|k, _| k == "T");
        let controls: Vec<String> = control_inputs(a).cloned().collect();
        a.input = std::iter::once(bn).chain(controls).collect();
    }
    let mut removed = vec![false; gd.node.len()];
    for (gi, ai, mode, offset, y_from_x) in backward {
        let a = gd.node[ai].clone();
        let g = &mut gd.node[gi];
        let (data, controls): (Vec<String>, Vec<String>) = g.input.iter().cloned().partition(|i| !i.starts_with('^'));
        let mut input = vec![data_inputs(&a).next().cloned().unwrap_or_default()];
        input.extend(data.into_iter().skip(1));
        input.push(offset);
        input.extend(data_inputs(&a).nth(1).cloned());
        for c in controls.iter().chain(control_inputs(&a)) {
            if !input.contains(c) {
                input.push(c.clone());
            }
        }
        g.input = input;
        g.op = "_FusedBatchNormGradEx".into();
        g.attr.insert("activation_mode".into(), attr::string(mode));
        g.attr.insert("num_side_inputs".into(), attr::int(0));
        if y_from_x {
            g.attr.insert("_y_from_x".into(), attr::bool(true));
        }
        removed[ai] = true;
    }
    if removed.iter().any(|&r| r) {
        let nodes = std::mem::take(&mut gd.node);
        gd.node = nodes.into_iter().zip(removed).filter(|(_, r)| !r).map(|(n, _)| n).collect();
    }
    count
}
