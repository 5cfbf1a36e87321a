//! Gradients of TensorFlow 1.x conditionals (`cond_v1`): a `Switch` sends each branch's
//! gradient back through a `Merge` (the untaken side's gradient is a dead `ZerosLike` of
//! its dead output, so the `Merge` passes the taken side's), and a `Merge` sends its
//! gradient down the branch that produced its value with a `Switch` on the conditional's
//! predicate, as TensorFlow's `_SwitchGrad`/`_MergeGrad` do for a `CondContext`. The
//! predicate is found from the branch outputs' pivots (the `Identity` of the predicate's
//! own `Switch` every branch output of `cond_v1` depends on). Loops (`Enter`, `Exit`,
//! `NextIteration`, `LoopCond`) have no gradient from Rust yet: TensorFlow's client builds
//! its own loop gradients, which run.

use ferroflow_core::Status;

use super::registry::Grads;
use crate::gradients::registry::GradOp;
use crate::graph::parse_tensor_name;
use crate::scope::{Output, Scope};

pub(super) fn switch_grad(s: &Scope, _op: &GradOp, grads: &[Output]) -> Grads {
    let m = s.op("Merge").input_list(vec![grads[0].clone(), grads[1].clone()]).try_build()?;
    Ok(vec![Some(m.output(0)), None])
}

/// For a branch output `o` of a conditional: the predicate and the side (0 false, 1 true)
/// of the pivot it hangs off.
fn branch_of(s: &Scope, o: &Output) -> Option<(Output, usize)> {
    let g = s.graph();
    let node = g.node(&o.node)?;
    node.def.input.iter().filter_map(|i| i.strip_prefix('^')).find_map(|c| {
        let pivot = g.node(c)?;
        if pivot.def.op != "Identity" {
            return None;
        }
        let (sw_name, side) = parse_tensor_name(pivot.def.input.first()?).ok()?;
        let sw = g.node(sw_name)?;
        let data = sw.def.input.first()?;
        if sw.def.op != "Switch" || sw.def.input.get(1) != Some(data) {
            return None;
        }
        Some((g.output_by_name(data).ok()?, side))
    })
}

pub(super) fn merge_grad(s: &Scope, op: &GradOp, grads: &[Output]) -> Grads {
    let sides: Vec<Option<(Output, usize)>> = op.inputs.iter().map(|o| branch_of(s, o)).collect();
    let (pred, _) = sides.iter().flatten().next().cloned().ok_or_else(|| {
        Status::unimplemented(format!(
            "gradient of Merge node '{}': only the Merges of a conditional built by cond_v1 (each input an \
             output of one branch) are differentiated from Rust",
            op.node.name
        ))
    })?;
    if op.inputs.len() != 2 || sides.iter().any(|x| x.as_ref().is_none_or(|(p, _)| *p != pred)) {
        return Err(Status::unimplemented(format!(
            "gradient of Merge node '{}': its inputs are not the two branches of one conditional",
            op.node.name
        )));
    }
    let sw = s.op("Switch").input(grads[0].clone()).input(pred).try_build()?;
    Ok(sides.into_iter().map(|x| x.map(|(_, side)| sw.output(side))).collect())
}

pub(super) fn loop_grad(_s: &Scope, op: &GradOp, _grads: &[Output]) -> Grads {
    Err(Status::unimplemented(format!(
        "no gradient from Rust for the while loop node '{}' (op {}): gradients of while_loop_v1 loops are not \
         built by ferroflow's Rust API yet (TensorFlow's client builds them and they run on ferroflow)",
        op.node.name, op.node.op
    )))
}
