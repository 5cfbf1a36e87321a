//! Gradients of the 3-D ops: `Conv3D` and its two backprop ops, `MaxPool3D`,
//! `MaxPool3DGrad`, `MaxPool3DGradGrad`, `AvgPool3D`, `AvgPool3DGrad` (TensorFlow's
//! `nn_grad.py`). Every gradient op carries the forward op's window attrs.

use ferroflow_core::DataType;

use super::nn_grad::{copy_attrs, grad, input, output};
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

const CONV_ATTRS: [&str; 4] = ["strides", "padding", "data_format", "dilations"];
const POOL_ATTRS: [&str; 4] = ["ksize", "strides", "padding", "data_format"];

/// `op_type(ins…)` with the forward node's attrs `names`.
fn with_attrs(s: &Scope, op_type: &str, op: &GradOp, ins: Vec<Output>, names: &[&str]) -> Output {
    let mut b = s.op(op_type);
    for i in ins {
        b = b.input(i);
    }
    copy_attrs(b, &op.node, names).build().output(0)
}

fn shape(s: &Scope, x: &Output) -> Output {
    ops::shape(s, x.clone(), DataType::Int32)
}

/// Conv3D(x, f): `Conv3DBackpropInputV2(shape(x), f, dy)`, `Conv3DBackpropFilterV2(x, shape(f), dy)`.
pub(super) fn conv3d_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, f, dy) = (input(op, 0)?, input(op, 1)?, grad(op, g, 0)?);
    let dx = with_attrs(s, "Conv3DBackpropInputV2", op, vec![shape(s, &x), f.clone(), dy.clone()], &CONV_ATTRS);
    let df = with_attrs(s, "Conv3DBackpropFilterV2", op, vec![x, shape(s, &f), dy], &CONV_ATTRS);
    Ok(vec![Some(dx), Some(df)])
}

/// Conv3DBackpropInputV2(sizes, f, dy) is linear in `f` and in `dy`:
/// `Conv3DBackpropFilterV2(ddx, shape(f), dy)` and `Conv3D(ddx, f)`.
pub(super) fn conv3d_backprop_input_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (f, dy, ddx) = (input(op, 1)?, input(op, 2)?, grad(op, g, 0)?);
    let df = with_attrs(s, "Conv3DBackpropFilterV2", op, vec![ddx.clone(), shape(s, &f), dy], &CONV_ATTRS);
    let ddy = with_attrs(s, "Conv3D", op, vec![ddx, f], &CONV_ATTRS);
    Ok(vec![None, Some(df), Some(ddy)])
}

/// Conv3DBackpropFilterV2(x, sizes, dy): `Conv3DBackpropInputV2(shape(x), ddf, dy)` and
/// `Conv3D(x, ddf)`.
pub(super) fn conv3d_backprop_filter_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, dy, ddf) = (input(op, 0)?, input(op, 2)?, grad(op, g, 0)?);
    let dx = with_attrs(s, "Conv3DBackpropInputV2", op, vec![shape(s, &x), ddf.clone(), dy], &CONV_ATTRS);
    let ddy = with_attrs(s, "Conv3D", op, vec![x, ddf], &CONV_ATTRS);
    Ok(vec![Some(dx), None, Some(ddy)])
}

/// MaxPool3D: `MaxPool3DGrad(x, y, dy)`.
pub(super) fn max_pool3d_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let ins = vec![input(op, 0)?, output(op, 0)?, grad(op, g, 0)?];
    Ok(vec![Some(with_attrs(s, "MaxPool3DGrad", op, ins, &POOL_ATTRS))])
}

/// MaxPool3DGrad(x, y, dy) is linear in `dy` with adjoint `MaxPool3DGradGrad(x, y, g)`;
/// `x` and `y` only select cells (no gradient).
pub(super) fn max_pool3d_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let ins = vec![input(op, 0)?, input(op, 1)?, grad(op, g, 0)?];
    Ok(vec![None, None, Some(with_attrs(s, "MaxPool3DGradGrad", op, ins, &POOL_ATTRS))])
}

/// MaxPool3DGradGrad(x, y, g) is linear in `g` with adjoint `MaxPool3DGrad(x, y, dy)`.
pub(super) fn max_pool3d_grad_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let ins = vec![input(op, 0)?, input(op, 1)?, grad(op, g, 0)?];
    Ok(vec![None, None, Some(with_attrs(s, "MaxPool3DGrad", op, ins, &POOL_ATTRS))])
}

/// AvgPool3D: `AvgPool3DGrad(shape(x), dy)`.
pub(super) fn avg_pool3d_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let ins = vec![shape(s, &input(op, 0)?), grad(op, g, 0)?];
    Ok(vec![Some(with_attrs(s, "AvgPool3DGrad", op, ins, &POOL_ATTRS))])
}

/// AvgPool3DGrad is linear in `grad` with adjoint AvgPool3D; none for the shape.
pub(super) fn avg_pool3d_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    Ok(vec![None, Some(with_attrs(s, "AvgPool3D", op, vec![grad(op, g, 0)?], &POOL_ATTRS))])
}
