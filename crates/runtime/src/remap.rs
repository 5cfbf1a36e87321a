//! Operator fusion before a graph runs, as TensorFlow's Grappler remapper does on CPU:
//! `MatMul → BiasAdd [→ Relu]` becomes one `_FusedMatMul` and `Conv2D → BiasAdd [→ Relu]`
//! one `_FusedConv2D`, when the intermediate tensors feed nothing else (no other
//! consumer, no fetch — fetches are `_Send`/`_Retval` nodes by now — and no control edge).
//! The fused node takes the last node's name, so everything downstream (a `ReluGrad`, a
//! fetch of the activation) is untouched; the graph the user built is never changed, only
//! the copy prepared to run. `MaxPool` and its gradient are rewritten too
//! ([`crate::remap_pool`]), and batch norms fused with their activations
//! ([`crate::remap_norm`]). Off with `RewriterConfig.remapping = OFF`, TensorFlow's switch.

use std::collections::HashMap;

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::{attr, NodeAttrs};
use ferroflow_graph::parse_tensor_name;

/// Dtypes the fused kernels compute.
fn fusable_type(n: &NodeDef) -> bool {
    matches!(n.attr_type("T"), Ok(ferroflow_core::DataType::Float | ferroflow_core::DataType::Double))
}

fn nhwc(n: &NodeDef) -> bool {
    n.attr_string("data_format").map(|f| f == "NHWC").unwrap_or(true)
}

/// Uses of each node: data consumers of each (node, slot), and control consumers.
#[derive(Default)]
struct Uses {
    data: usize,
    control: usize,
}

pub(crate) fn data_inputs(n: &NodeDef) -> impl Iterator<Item = &String> {
    n.input.iter().filter(|i| !i.starts_with('^'))
}

pub(crate) fn control_inputs(n: &NodeDef) -> impl Iterator<Item = &String> {
    n.input.iter().filter(|i| i.starts_with('^'))
}

/// The node and slot an input names (`None` for a control input or a malformed name,
/// which the executor reports later).
pub(crate) fn source(input: &str) -> Option<(&str, usize)> {
    if input.starts_with('^') {
        return None;
    }
    parse_tensor_name(input).ok()
}

/// Returns `gd` with every fusable chain fused and max pool indexed, and how many rewrites.
pub fn fuse_ops(gd: &GraphDef) -> (GraphDef, usize) {
    let mut out = gd.clone();
    let n = fuse_ops_in_place(&mut out);
    (out, n)
}

/// [`fuse_ops`] on the graph itself (no copy of the nodes it leaves alone); returns how
/// many chains were fused and max-pool gradients rewritten.
pub fn fuse_ops_in_place(gd: &mut GraphDef) -> usize {
    // The pool rewrite first: it may fold the `ReluGrad` a batch norm's gradient would.
    let chains = fuse_chains(gd);
    let pools = crate::remap_pool::index_max_pools(gd);
    chains + pools + crate::remap_norm::fuse_batch_norms(gd)
}

/// Fuses the product + BiasAdd (+ Relu) chains; returns how many.
fn fuse_chains(gd: &mut GraphDef) -> usize {
    let index: HashMap<&str, usize> = gd.node.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let mut uses: Vec<Uses> = gd.node.iter().map(|_| Uses::default()).collect();
    // The single data consumer of each node when it has exactly one.
    let mut consumer: Vec<Option<usize>> = vec![None; gd.node.len()];
    for (ci, n) in gd.node.iter().enumerate() {
        for inp in &n.input {
            if let Some(c) = inp.strip_prefix('^') {
                if let Some(&s) = index.get(c) {
                    uses[s].control += 1;
                }
            } else if let Some((s, _)) = source(inp) {
                if let Some(&s) = index.get(s) {
                    uses[s].data += 1;
                    consumer[s] = Some(ci);
                }
            }
        }
    }
    let only_consumer =
        |i: usize| -> Option<usize> { (uses[i].data == 1 && uses[i].control == 0).then_some(consumer[i]).flatten() };
    // (product, bias_add, relu?) chains.
    let mut chains: Vec<(usize, usize, Option<usize>)> = Vec::new();
    for (bi, b) in gd.node.iter().enumerate() {
        if b.op != "BiasAdd" || !fusable_type(b) || !nhwc(b) {
            continue;
        }
        let Some((p_name, 0)) = b.input.first().and_then(|i| source(i)) else { continue };
        let Some(&pi) = index.get(p_name) else { continue };
        let p = &gd.node[pi];
        let product_ok = match p.op.as_str() {
            "MatMul" => true,
            "Conv2D" => nhwc(p),
            _ => false,
        };
        if !product_ok
            || p.device != b.device
            || p.attr_type("T").ok() != b.attr_type("T").ok()
            || only_consumer(pi) != Some(bi)
        {
            continue;
        }
        let relu = only_consumer(bi).filter(|&ri| {
            let r = &gd.node[ri];
            r.op == "Relu"
                && r.device == b.device
                && r.attr_type("T").ok() == b.attr_type("T").ok()
                && data_inputs(r).next().and_then(|i| source(i)) == Some((b.name.as_str(), 0))
        });
        chains.push((pi, bi, relu));
    }
    if chains.is_empty() {
        return 0;
    }
    let mut removed = vec![false; gd.node.len()];
    let mut replaced: HashMap<usize, NodeDef> = HashMap::new();
    for &(pi, bi, ri) in &chains {
        let (p, b) = (&gd.node[pi], &gd.node[bi]);
        let last = ri.map_or(b, |r| &gd.node[r]);
        let mut fused = NodeDef {
            name: last.name.clone(),
            op: if p.op == "MatMul" { "_FusedMatMul" } else { "_FusedConv2D" }.to_string(),
            device: last.device.clone(),
            attr: p.attr.clone(),
            ..Default::default()
        };
        fused.attr.remove("_output_shapes");
        fused.attr.remove("_class");
        let mut ops = vec!["BiasAdd"];
        if ri.is_some() {
            ops.push("Relu");
        }
        fused.attr.insert("fused_ops".into(), attr::list_string(&ops));
        fused.attr.insert("num_args".into(), attr::int(1));
        fused.attr.insert("epsilon".into(), attr::float(0.0));
        fused.input = data_inputs(p).take(2).cloned().collect();
        fused.input.extend(data_inputs(b).nth(1).cloned());
        for n in [Some(p), Some(b), ri.map(|r| &gd.node[r])].into_iter().flatten() {
            for c in control_inputs(n) {
                if !fused.input.contains(c) {
                    fused.input.push(c.clone());
                }
            }
        }
        removed[pi] = true;
        match ri {
            Some(r) => {
                removed[bi] = true;
                replaced.insert(r, fused);
            }
            None => {
                replaced.insert(bi, fused);
            }
        }
    }
    let nodes = std::mem::take(&mut gd.node);
    gd.node = nodes
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !removed[*i])
        .map(|(i, n)| replaced.remove(&i).unwrap_or(n))
        .collect();
    chains.len()
}

/// Whether a session's `GraphOptions` leave the remapper on (TensorFlow's default).
pub fn remapping_enabled(opts: Option<&ferroflow_core::proto::GraphOptions>) -> bool {
    const OFF: i32 = 2;
    opts.and_then(|g| g.rewrite_options.as_ref()).is_none_or(|r| r.remapping != OFF)
}
