//! Variable reads hoisted out of a lowered `While` (see `lower_calls`). TensorFlow 2's
//! `while_v2` passes each variable a loop body uses as a loop variable that the body
//! returns unchanged, and reads it inside the body every iteration (tf_keras `LSTM`/`GRU`
//! read their kernels at every time step). When the variable lives on another task (a
//! ps) than the loop, every iteration then waits for a transfer of the whole variable:
//! 50 time steps of an `LSTM(256)` moved 65 MB per training step.
//!
//! When nothing in the body or the condition can write a variable, a read in iteration
//! `k` sees what a read before the loop sees: no write can be ordered between them (an op
//! outside the loop reaches its inside only through the loop's inputs, and its outside
//! only through its results). Such a read becomes one read before the loop, taking the
//! call's control inputs, whose value enters the frame as a constant (`Enter` with
//! `is_constant`, keeping the read's name, so every edge into and out of it stays valid);
//! the value crosses the tasks once per step. A loop variable left without any use then
//! loses its `Merge`/`Switch`/`NextIteration` chain too, and the call's result for it is
//! its input: the variable's task then keeps no control loop for the frame.
//!
//! The conditions, all checked, are conservative: no op in the body or the condition
//! writes any resource or reference (by op name: `Assign*`, `*Apply*`, `*Scatter*`,
//! `Destroy*`, ...), calls a function, or makes a variable handle (which could alias a
//! loop's variable by shared name); every use of the variable inside is a read or an
//! `Identity` of it; the read has no control inputs of its own. One difference remains: a
//! loop that runs zero times still reads the variable once.

use std::collections::{HashMap, HashSet};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, DataType, NodeAttrs};

use crate::lower_calls::Inlined;

/// Ops that only read the resource they take.
const READS: &[&str] = &["ReadVariableOp", "VariableShape", "VarIsInitializedOp", "ResourceGather", "ResourceGatherNd"];

/// Whether op `op` may write a resource or reference, call a function, or reach a
/// variable by name (name patterns of TensorFlow's state ops; conservative).
fn may_write(op: &str, is_function: &dyn Fn(&str) -> bool) -> bool {
    const CALLS: &[&str] = &[
        "PartitionedCall",
        "StatefulPartitionedCall",
        "While",
        "StatelessWhile",
        "If",
        "StatelessIf",
        "Case",
        "StatelessCase",
        "RemoteCall",
        "SymbolicGradient",
        "VarHandleOp",
        "_VarHandlesOp",
        "VariableV2",
        "Variable",
        "TemporaryVariable",
    ];
    const PARTS: &[&str] = &["Assign", "Apply", "Scatter", "Destroy", "Accumulator", "Barrier"];
    CALLS.contains(&op) || PARTS.iter().any(|p| op.contains(p)) || is_function(op)
}

/// `x:0` and `x` name the same tensor.
fn base(t: &str) -> &str {
    t.strip_suffix(":0").unwrap_or(t)
}

/// The loop frame the body runs in.
pub(crate) struct Frame<'a> {
    pub name: &'a str,
    pub parallel_iterations: i64,
    /// The call's device (where the hoisted values enter the frame).
    pub device: &'a str,
}

/// The loop's variables as the lowering sees them.
pub(crate) struct LoopVars<'a> {
    /// Inputs of the call (one per loop variable) and its control inputs.
    pub xs: &'a [String],
    pub controls: &'a [String],
    pub types: &'a [DataType],
    /// Each variable's value inside the body (the `Identity` after its `Switch`), and in
    /// the condition (its `Merge`).
    pub idents: &'a [String],
    pub merges: &'a [String],
}

/// Hoists the reads of loop-invariant variables out of `body` (see the module docs);
/// returns, per loop variable, whether it is no longer used inside the loop (its chain
/// may go, and the call's result for it is its input).
pub(crate) fn hoist_invariant_reads(
    frame: &Frame,
    v: &LoopVars,
    body: &mut Inlined,
    cond: &Inlined,
    is_function: &dyn Fn(&str) -> bool,
) -> Vec<bool> {
    let n = v.xs.len();
    let mut none = vec![false; n];
    if body.nodes.iter().chain(&cond.nodes).any(|d| may_write(&d.op, is_function)) {
        return none;
    }
    // Which variable each tensor is (the body's value of a resource variable, or an
    // Identity of one).
    let mut var_of: HashMap<String, usize> = HashMap::new();
    for i in 0..n {
        if v.types[i] == DataType::Resource {
            var_of.insert(base(&v.idents[i]).to_string(), i);
        }
    }
    loop {
        let before = var_of.len();
        for d in body.nodes.iter().filter(|d| d.op == "Identity") {
            if let Some(&i) = d.input.first().and_then(|s| var_of.get(base(s))) {
                var_of.insert(d.name.clone(), i);
            }
        }
        if var_of.len() == before {
            break;
        }
    }
    let forward_names: HashSet<String> = body
        .nodes
        .iter()
        .filter(|d| d.op == "Identity" && var_of.contains_key(&d.name))
        .map(|d| d.name.clone())
        .collect();
    // A variable is invariant when the body returns it as it came in, and hoistable when
    // every use inside is a read or a forward.
    let mut hoistable: Vec<bool> =
        (0..n).map(|i| v.types[i] == DataType::Resource && var_of.get(base(&body.rets[i])) == Some(&i)).collect();
    let used_by = |d: &NodeDef| -> Vec<usize> {
        d.input.iter().filter_map(|s| var_of.get(base(s.strip_prefix('^').unwrap_or(s))).copied()).collect()
    };
    for d in &body.nodes {
        if READS.contains(&d.op.as_str()) || forward_names.contains(&d.name) {
            continue;
        }
        for i in used_by(d) {
            hoistable[i] = false;
        }
    }
    if !hoistable.iter().any(|&h| h) {
        return none;
    }
    let names: HashSet<String> = body.nodes.iter().map(|d| d.name.clone()).collect();
    let mut hoisted = Vec::new();
    for d in &mut body.nodes {
        let Some(i) = single_read_of(d, &var_of).filter(|&i| hoistable[i]) else { continue };
        let Ok(dtype) = d.attr_type("dtype") else { continue };
        let mut name = format!("{}/hoisted", d.name);
        while names.contains(&name) {
            name.push('_');
        }
        let mut inputs = vec![v.xs[i].clone()];
        inputs.extend(v.controls.iter().cloned());
        hoisted.push(NodeDef {
            name: name.clone(),
            op: "ReadVariableOp".into(),
            device: d.device.clone(),
            input: inputs,
            attr: d.attr.clone(),
        });
        d.op = "Enter".into();
        d.input = vec![name];
        d.device = frame.device.to_string();
        d.attr.clear();
        d.attr.insert("T".into(), attr::ty(dtype));
        d.attr.insert("frame_name".into(), attr::string(frame.name));
        d.attr.insert("is_constant".into(), attr::bool(true));
        d.attr.insert("parallel_iterations".into(), attr::int(frame.parallel_iterations));
    }
    if hoisted.is_empty() {
        return none;
    }
    body.nodes.extend(hoisted);
    // Variables that nothing inside uses any more (their forwards aside) leave the loop.
    let mut used = vec![false; n];
    for d in body.nodes.iter().filter(|d| !forward_names.contains(&d.name)) {
        for i in used_by(d) {
            used[i] = true;
        }
    }
    for c in &body.control {
        if let Some(&i) = var_of.get(base(c)) {
            used[i] = true;
        }
    }
    // The condition sees the variable through its Merge (it only reads: writers are out).
    for s in cond.nodes.iter().flat_map(|d| &d.input) {
        let s = base(s.strip_prefix('^').unwrap_or(s));
        if let Some(i) = v.merges.iter().position(|m| base(m) == s) {
            used[i] = true;
        }
    }
    for i in 0..n {
        none[i] = hoistable[i] && !used[i];
    }
    body.nodes.retain(|d| !(forward_names.contains(&d.name) && none[var_of[&d.name]]));
    none
}

/// The loop variable `d` reads, when `d` is a `ReadVariableOp` of one with no control
/// inputs.
fn single_read_of(d: &NodeDef, var_of: &HashMap<String, usize>) -> Option<usize> {
    if d.op != "ReadVariableOp" || d.input.len() != 1 || d.input[0].starts_with('^') {
        return None;
    }
    var_of.get(base(&d.input[0])).copied()
}

#[cfg(test)]
#[path = "lower_while_reads_tests.rs"]
mod tests;
