//! The lowerings themselves (see `lower_calls`): `While` into a loop frame, `If` into
//! `Switch`/`Merge`, a function call into its body.

use ferroflow_core::proto::{FunctionDefLibrary, NodeDef};
use ferroflow_core::{attr, DataType, DeviceName, NodeAttrs, Status, Tensor};

use crate::lower_calls::{func_attr, inline, keeper, node, typed};
use crate::lower_while_reads::{hoist_invariant_reads, Frame, LoopVars};

fn split_inputs(call: &NodeDef) -> (Vec<String>, Vec<String>) {
    let (c, d): (Vec<&String>, Vec<&String>) = call.input.iter().partition(|s| s.starts_with('^'));
    (d.into_iter().cloned().collect(), c.into_iter().cloned().collect())
}

/// A `Merge` of two inputs of type `t`.
fn merge2(name: String, dev: &str, inputs: [String; 2], t: DataType) -> NodeDef {
    let mut m = typed(node(name, "Merge", dev, inputs.to_vec()), "T", t);
    m.attr.insert("N".into(), attr::int(2));
    m
}

/// `first`, then a control input on each of `controls`.
fn with_controls(first: String, controls: &[String]) -> Vec<String> {
    let mut inputs = vec![first];
    inputs.extend(controls.iter().map(|c| format!("^{c}")));
    inputs
}

/// INVALID_ARGUMENT unless `who` (an inlined function) returns `want` tensors.
fn expect_returns(who: &str, got: usize, want: usize) -> Result<(), Status> {
    if got == want {
        return Ok(());
    }
    Err(Status::invalid_argument(format!("{who} returns {got} tensors, not {want}")))
}

/// `While`: one `Enter → Merge → Switch(LoopCond) → Identity → body → NextIteration → Merge`
/// chain per loop variable, `Exit` on the Switch's false side, the condition on the Merges.
pub(crate) fn lower_while(lib: &FunctionDefLibrary, call: &NodeDef) -> Result<Vec<NodeDef>, Status> {
    let (xs, controls) = split_inputs(call);
    let types = call.attr_list_type("T")?;
    if xs.is_empty() || xs.len() != types.len() {
        return Err(Status::invalid_argument(format!("{} loop variables for {} types", xs.len(), types.len())));
    }
    let parallel = call.attr_int("parallel_iterations").unwrap_or(10).max(1);
    let caller = DeviceName::parse(&call.device)?;
    let dev = call.device.as_str();
    let p = format!("{}/_lower", call.name);
    let mut out = Vec::new();
    for (i, (x, &t)) in xs.iter().zip(&types).enumerate() {
        let mut inputs = vec![x.clone()];
        inputs.extend(controls.iter().cloned());
        let mut e = typed(node(format!("{p}/Enter_{i}"), "Enter", dev, inputs), "T", t);
        e.attr.insert("frame_name".into(), attr::string(&call.name));
        e.attr.insert("is_constant".into(), attr::bool(false));
        e.attr.insert("parallel_iterations".into(), attr::int(parallel));
        out.push(e);
        out.push(merge2(
            format!("{p}/Merge_{i}"),
            dev,
            [format!("{p}/Enter_{i}"), format!("{p}/NextIteration_{i}")],
            t,
        ));
    }
    let merges: Vec<String> = (0..xs.len()).map(|i| format!("{p}/Merge_{i}")).collect();
    let cond = inline(lib, &func_attr(call, "cond")?, &format!("{p}/cond"), &merges, &caller, &merges[0])?;
    expect_returns("the condition", cond.rets.len(), 1)?;
    out.extend(cond.nodes.iter().cloned());
    out.push(node(format!("{p}/LoopCond"), "LoopCond", dev, with_controls(cond.rets[0].clone(), &cond.control)));
    let mut idents = Vec::with_capacity(xs.len());
    for (i, &t) in types.iter().enumerate() {
        out.push(typed(
            node(format!("{p}/Switch_{i}"), "Switch", dev, vec![merges[i].clone(), format!("{p}/LoopCond")]),
            "T",
            t,
        ));
        out.push(typed(node(format!("{p}/Exit_{i}"), "Exit", dev, vec![format!("{p}/Switch_{i}")]), "T", t));
        out.push(typed(node(format!("{p}/Identity_{i}"), "Identity", dev, vec![format!("{p}/Switch_{i}:1")]), "T", t));
        idents.push(format!("{p}/Identity_{i}"));
    }
    let mut body = inline(lib, &func_attr(call, "body")?, &format!("{p}/body"), &idents, &caller, &idents[0])?;
    if body.rets.len() != types.len() {
        return Err(Status::invalid_argument(format!(
            "the body returns {} tensors for {} loop variables",
            body.rets.len(),
            types.len()
        )));
    }
    let frame = Frame { name: &call.name, parallel_iterations: parallel, device: dev };
    let vars = LoopVars { xs: &xs, controls: &controls, types: &types, idents: &idents, merges: &merges };
    let is_function = |op: &str| lib.function.iter().any(|f| f.signature.as_ref().is_some_and(|s| s.name == op));
    let gone = hoist_invariant_reads(&frame, &vars, &mut body, &cond, &is_function);
    let chain: std::collections::HashSet<String> = (0..xs.len())
        .filter(|&i| gone[i])
        .flat_map(|i| ["Enter", "Merge", "Switch", "Exit", "Identity"].map(|k| format!("{p}/{k}_{i}")))
        .collect();
    out.retain(|n| !chain.contains(&n.name));
    out.extend(body.nodes);
    for (i, (r, &t)) in body.rets.iter().zip(&types).enumerate() {
        if gone[i] {
            continue;
        }
        let inputs = with_controls(r.clone(), &body.control);
        out.push(typed(node(format!("{p}/NextIteration_{i}"), "NextIteration", dev, inputs), "T", t));
    }
    let exits: Vec<String> =
        (0..xs.len()).map(|i| if gone[i] { xs[i].clone() } else { format!("{p}/Exit_{i}") }).collect();
    out.push(keeper(call, exits, &types, &[]));
    Ok(out)
}

/// `If`: each argument switched on the (boolean) condition, the branches inlined on the
/// two sides (nodes without inputs hang off the side's pivot), each result `Merge`d.
pub(crate) fn lower_if(lib: &FunctionDefLibrary, call: &NodeDef) -> Result<Vec<NodeDef>, Status> {
    let (ins, controls) = split_inputs(call);
    let (cond, args) = ins.split_first().ok_or_else(|| Status::invalid_argument("no condition input"))?;
    let tin = call.attr_list_type("Tin")?;
    let tout = call.attr_list_type("Tout")?;
    let caller = DeviceName::parse(&call.device)?;
    let dev = call.device.as_str();
    let p = format!("{}/_lower", call.name);
    let mut out = Vec::new();
    let mut sw_inputs = vec![cond.clone(), cond.clone()];
    sw_inputs.extend(controls.iter().cloned());
    out.push(typed(node(format!("{p}/switch_pred"), "Switch", dev, sw_inputs), "T", DataType::Bool));
    out.push(typed(
        node(format!("{p}/pivot_t"), "Identity", dev, vec![format!("{p}/switch_pred:1")]),
        "T",
        DataType::Bool,
    ));
    out.push(typed(
        node(format!("{p}/pivot_f"), "Identity", dev, vec![format!("{p}/switch_pred")]),
        "T",
        DataType::Bool,
    ));
    let (mut on_t, mut on_f) = (Vec::new(), Vec::new());
    for (j, (a, &t)) in args.iter().zip(&tin).enumerate() {
        let mut inputs = vec![a.clone(), cond.clone()];
        inputs.extend(controls.iter().cloned());
        out.push(typed(node(format!("{p}/Switch_{j}"), "Switch", dev, inputs), "T", t));
        on_f.push(format!("{p}/Switch_{j}"));
        on_t.push(format!("{p}/Switch_{j}:1"));
    }
    let mut sides = Vec::new();
    for (side, branch, args, pivot) in
        [("then", "then_branch", &on_t, "pivot_t"), ("else", "else_branch", &on_f, "pivot_f")]
    {
        let pivot = format!("{p}/{pivot}");
        let b = inline(lib, &func_attr(call, branch)?, &format!("{p}/{side}"), args, &caller, &pivot)?;
        expect_returns(branch, b.rets.len(), tout.len())?;
        out.extend(b.nodes);
        let done = with_controls(format!("^{pivot}"), &b.control);
        let mut results = Vec::new();
        for (o, (r, &t)) in b.rets.iter().zip(&tout).enumerate() {
            let mut inputs = vec![r.clone()];
            inputs.extend(done.iter().cloned());
            out.push(typed(node(format!("{p}/{side}_out_{o}"), "Identity", dev, inputs), "T", t));
            results.push(format!("{p}/{side}_out_{o}"));
        }
        if tout.is_empty() {
            // A token that is live only on the taken side, so the call's name can wait for it.
            let mut k = typed(node(format!("{p}/{side}_done"), "Const", dev, done), "dtype", DataType::Float);
            k.attr.insert("value".into(), attr::tensor(&Tensor::scalar(0f32)));
            out.push(k);
            results.push(format!("{p}/{side}_done"));
        }
        sides.push(results);
    }
    let n = sides[0].len();
    let types: Vec<DataType> = if tout.is_empty() { vec![DataType::Float] } else { tout.clone() };
    let mut merged = Vec::with_capacity(n);
    for (o, &t) in types.iter().enumerate() {
        out.push(merge2(format!("{p}/Merge_{o}"), dev, [sides[0][o].clone(), sides[1][o].clone()], t));
        merged.push(format!("{p}/Merge_{o}"));
    }
    out.push(if tout.is_empty() { keeper(call, vec![], &[], &merged) } else { keeper(call, merged, &tout, &[]) });
    Ok(out)
}

/// `PartitionedCall`/`StatefulPartitionedCall`: the body inlined; the call's control
/// inputs reach it through a `NoOp` pivot (and through the arguments).
pub(crate) fn lower_call(lib: &FunctionDefLibrary, call: &NodeDef) -> Result<Vec<NodeDef>, Status> {
    let (args, controls) = split_inputs(call);
    let tin = call.attr_list_type("Tin")?;
    let tout = call.attr_list_type("Tout")?;
    let caller = DeviceName::parse(&call.device)?;
    let dev = call.device.as_str();
    let p = format!("{}/_lower", call.name);
    let mut out = vec![node(format!("{p}/start"), "NoOp", dev, controls.clone())];
    let mut fed = Vec::with_capacity(args.len());
    for (j, (a, &t)) in args.iter().zip(&tin).enumerate() {
        if controls.is_empty() {
            fed.push(a.clone());
        } else {
            out.push(typed(
                node(format!("{p}/arg_{j}"), "Identity", dev, vec![a.clone(), format!("^{p}/start")]),
                "T",
                t,
            ));
            fed.push(format!("{p}/arg_{j}"));
        }
    }
    let b = inline(lib, &func_attr(call, "f")?, &format!("{p}/body"), &fed, &caller, &format!("{p}/start"))?;
    expect_returns("the function", b.rets.len(), tout.len())?;
    out.extend(b.nodes);
    let mut control = b.control.clone();
    if tout.is_empty() {
        control.push(format!("{p}/start"));
    }
    out.push(keeper(call, b.rets, &tout, &control));
    Ok(out)
}
