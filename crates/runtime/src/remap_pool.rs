//! The max-pool rewrite, part of the remapper ([`crate::remap`]): `MaxPool` whose
//! gradient `MaxPoolGrad` reads the same input becomes `_MaxPoolWithIndex`, which also
//! outputs where each window's maximum was, and the gradient becomes
//! `_MaxPoolGradWithIndex`, which reads that index instead of the pooled input and output.
//! The backward pass then never reads the (large, long cold) pooled input again. A
//! `ReluGrad` that is the gradient's only consumer and reads the same pooled input is
//! folded in too (`relu = true`), as is its pass over that input. Results are equal bit for
//! bit; the nodes keep their names, so fetches and everything downstream are untouched.

use std::collections::{HashMap, HashSet};

use ferroflow_core::proto::{AttrValue, GraphDef, NodeDef};
use ferroflow_core::{attr, NodeAttrs};

use crate::remap::{control_inputs, data_inputs, source};

/// Largest window whose positions the index byte holds (the kernel's limit).
const MAX_WINDOW: i64 = 127;

/// The attrs both pooling nodes must agree on, and the rewritten nodes carry.
const POOL_ATTRS: [&str; 4] = ["T", "ksize", "strides", "padding"];

/// The node and slot of `n`'s `i`-th data input.
fn data_input(n: &NodeDef, i: usize) -> Option<(&str, usize)> {
    data_inputs(n).nth(i).and_then(|i| source(i))
}

/// The (rows, cols) window or strides of a pooling node, when they are 4 values with 1 for
/// batch and depth.
fn spatial(n: &NodeDef, name: &str) -> Option<(i64, i64)> {
    match n.attr_list_int(name).ok()?.as_slice() {
        &[1, r, c, 1] if r > 0 && c > 0 => Some((r, c)),
        _ => None,
    }
}

/// A pooling node the indexed kernels compute: float or double, NHWC, SAME or VALID, a
/// window of at most [`MAX_WINDOW`] elements.
fn indexable(n: &NodeDef) -> bool {
    let float = matches!(n.attr_type("T"), Ok(ferroflow_core::DataType::Float | ferroflow_core::DataType::Double));
    let nhwc = n.attr_string("data_format").map(|f| f == "NHWC").unwrap_or(true);
    let padding = matches!(n.attr_string("padding").as_deref(), Ok("SAME" | "VALID"));
    let explicit = n.attr_list_int("explicit_paddings").map(|p| !p.is_empty()).unwrap_or(false);
    let window = spatial(n, "ksize").is_some_and(|(r, c)| r * c <= MAX_WINDOW) && spatial(n, "strides").is_some();
    float && nhwc && padding && !explicit && window
}

/// Windows that never overlap (each input element in at most one).
fn disjoint(n: &NodeDef) -> bool {
    matches!((spatial(n, "ksize"), spatial(n, "strides")), (Some((kr, kc)), Some((sr, sc))) if sr >= kr && sc >= kc)
}

fn same_attrs(a: &NodeDef, b: &NodeDef) -> bool {
    POOL_ATTRS.iter().all(|k| a.attr.get(*k) == b.attr.get(*k))
}

/// The rewritten node's attrs: the pooling's, and the fixed NHWC layout.
fn attrs_of(n: &NodeDef) -> HashMap<String, AttrValue> {
    let mut a: HashMap<String, AttrValue> =
        POOL_ATTRS.iter().filter_map(|k| n.attr.get(*k).map(|v| (k.to_string(), v.clone()))).collect();
    a.insert("data_format".into(), attr::string("NHWC"));
    a
}

/// One `MaxPoolGrad` to rewrite: its node, its `MaxPool`, and the `ReluGrad` folded in.
struct Site {
    grad: usize,
    pool: usize,
    relu: Option<usize>,
}

/// Rewrites every matching `MaxPool` / `MaxPoolGrad` (/ `ReluGrad`); returns how many
/// gradients were rewritten.
pub(crate) fn index_max_pools(gd: &mut GraphDef) -> usize {
    let index: HashMap<&str, usize> = gd.node.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    // Data and control uses of each node, and its last data consumer.
    let mut uses = vec![(0usize, 0usize, None::<usize>); gd.node.len()];
    for (ci, n) in gd.node.iter().enumerate() {
        for inp in &n.input {
            if let Some(c) = inp.strip_prefix('^') {
                if let Some(&s) = index.get(c) {
                    uses[s].1 += 1;
                }
            } else if let Some(&s) = source(inp).and_then(|(s, _)| index.get(s)) {
                uses[s].0 += 1;
                uses[s].2 = Some(ci);
            }
        }
    }
    let mut sites = Vec::new();
    for (gi, g) in gd.node.iter().enumerate() {
        if g.op != "MaxPoolGrad" || !indexable(g) {
            continue;
        }
        let (Some(x), Some((pname, 0))) = (data_input(g, 0), data_input(g, 1)) else { continue };
        let Some(&pi) = index.get(pname) else { continue };
        let p = &gd.node[pi];
        if p.op != "MaxPool"
            || p.device != g.device
            || !indexable(p)
            || !same_attrs(p, g)
            || data_input(p, 0) != Some(x)
        {
            continue;
        }
        let relu = match uses[gi] {
            (1, 0, Some(ri)) => Some(ri).filter(|&ri| {
                let r = &gd.node[ri];
                r.op == "ReluGrad"
                    && r.device == g.device
                    && r.attr.get("T") == g.attr.get("T")
                    && data_input(r, 0) == Some((g.name.as_str(), 0))
                    && data_input(r, 1) == Some(x)
                    && disjoint(g)
            }),
            _ => None,
        };
        sites.push(Site { grad: gi, pool: pi, relu });
    }
    if sites.is_empty() {
        return 0;
    }
    let pools: HashSet<usize> = sites.iter().map(|s| s.pool).collect();
    let mut removed = HashSet::new();
    let mut replaced: HashMap<usize, NodeDef> = HashMap::new();
    for s in &sites {
        let (g, p) = (&gd.node[s.grad], &gd.node[s.pool]);
        let last = s.relu.map_or(g, |r| &gd.node[r]);
        let mut attr = attrs_of(g);
        attr.insert("relu".into(), attr::bool(s.relu.is_some()));
        let mut input: Vec<String> = data_inputs(g).cloned().collect();
        input[1] = format!("{}:1", p.name);
        input.truncate(3);
        for c in control_inputs(g).chain(s.relu.into_iter().flat_map(|r| control_inputs(&gd.node[r]))) {
            if !input.contains(c) {
                input.push(c.clone());
            }
        }
        let node = NodeDef {
            name: last.name.clone(),
            op: "_MaxPoolGradWithIndex".into(),
            device: last.device.clone(),
            input,
            attr,
        };
        match s.relu {
            Some(r) => {
                removed.insert(s.grad);
                replaced.insert(r, node);
            }
            None => {
                replaced.insert(s.grad, node);
            }
        }
    }
    for &pi in &pools {
        let p = &gd.node[pi];
        let node = NodeDef {
            name: p.name.clone(),
            op: "_MaxPoolWithIndex".into(),
            device: p.device.clone(),
            input: p.input.clone(),
            attr: attrs_of(p),
        };
        replaced.insert(pi, node);
    }
    let nodes = std::mem::take(&mut gd.node);
    gd.node = nodes
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !removed.contains(i))
        .map(|(i, n)| replaced.remove(&i).unwrap_or(n))
        .collect();
    sites.len()
}
