//! Gradients of the block moves (SpaceToBatchND and BatchToSpaceND, their 4-D forms,
//! SpaceToDepth and DepthToSpace: each is the other's inverse), ReverseSequence (itself),
//! LRN (LRNGrad) and Cross; InTopK's are none (TensorFlow's `array_grad.py`,
//! `nn_grad.py` and `math_grad.py`).

use ferroflow_core::NodeAttrs;

use super::array_grad::{grad0, input, ints, Grads};
use super::registry::GradRegistry;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

pub(super) fn register(r: &mut GradRegistry) {
    r.no_gradient(&["InTopK", "InTopKV2"]);
    r.add("SpaceToBatchND", |s, op, g| {
        let dx = ops::batch_to_space_nd(s, grad0(op, g)?, input(op, 1)?.clone(), input(op, 2)?.clone());
        Ok(vec![Some(dx), None, None])
    });
    r.add("BatchToSpaceND", |s, op, g| {
        let dx = ops::space_to_batch_nd(s, grad0(op, g)?, input(op, 1)?.clone(), input(op, 2)?.clone());
        Ok(vec![Some(dx), None, None])
    });
    r.add("SpaceToBatch", |s, op, g| {
        let dx = ops::batch_to_space_nd(s, grad0(op, g)?, square_block(s, op)?, input(op, 1)?.clone());
        Ok(vec![Some(dx), None])
    });
    r.add("BatchToSpace", |s, op, g| {
        let dx = ops::space_to_batch_nd(s, grad0(op, g)?, square_block(s, op)?, input(op, 1)?.clone());
        Ok(vec![Some(dx), None])
    });
    r.add("SpaceToDepth", |s, op, g| {
        Ok(vec![Some(ops::depth_to_space(s, grad0(op, g)?, op.node.attr_int("block_size")?))])
    });
    r.add("DepthToSpace", |s, op, g| {
        Ok(vec![Some(ops::space_to_depth(s, grad0(op, g)?, op.node.attr_int("block_size")?))])
    });
    r.add("ReverseSequence", |s, op, g| {
        let (seq, batch) = (op.node.attr_int("seq_dim")?, op.node.attr_int("batch_dim")?);
        Ok(vec![Some(ops::reverse_sequence(s, grad0(op, g)?, input(op, 1)?.clone(), seq, batch)), None])
    });
    r.add("LRN", lrn_grad);
    r.add("Cross", |s, op, g| {
        let (a, b, g) = (input(op, 0)?.clone(), input(op, 1)?.clone(), grad0(op, g)?);
        Ok(vec![Some(ops::cross(s, b, g.clone())), Some(ops::cross(s, g, a))])
    });
}

/// The `[block_size, block_size]` block of SpaceToBatch and BatchToSpace.
fn square_block(s: &Scope, op: &GradOp) -> Result<Output, ferroflow_core::Status> {
    let b = op.node.attr_int("block_size")? as i32;
    Ok(ints(s, &[b, b]))
}

fn lrn_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let n = &op.node;
    let dx = ops::lrn_grad(
        s,
        grad0(op, g)?,
        input(op, 0)?.clone(),
        op.outputs[0].clone(),
        n.attr_int("depth_radius")?,
        n.attr_float("bias")?,
        n.attr_float("alpha")?,
        n.attr_float("beta")?,
    );
    Ok(vec![Some(dx)])
}
