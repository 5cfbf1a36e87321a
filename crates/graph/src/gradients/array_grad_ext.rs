//! Gradient functions of the extended array ops (TensorFlow's `array_grad.py`,
//! `manip_grad.py`, `math_grad.py` scans, `nn_grad.py` TopK, `clip_ops.py` and
//! `linalg_grad.py` Einsum), and the ops of the family TensorFlow marks not
//! differentiable. Registered from `table.rs` through [`register`].

use ferroflow_core::{DataType, NodeAttrs, Status};

use super::array_grad::{grad0, input, int, rank_of, shape_of, Grads};
use super::registry::GradRegistry;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

/// Registers this file's gradient functions and non-differentiable ops.
pub(super) fn register(r: &mut GradRegistry) {
    r.no_gradient(&["All", "Any", "BroadcastArgs", "LowerBound", "UpperBound", "Bucketize", "LinSpace", "Empty"]);
    r.add("Split", split_grad);
    r.add("SplitV", split_v_grad);
    r.add("Cumsum", cumsum_grad);
    r.add("Cumprod", cumprod_grad);
    r.add("CumulativeLogsumexp", cumulative_logsumexp_grad);
    r.add("ReverseV2", |s, op, g| Ok(vec![Some(ops::reverse_v2(s, grad0(op, g)?, input(op, 1)?.clone())), None]));
    r.add("Roll", roll_grad);
    r.add("TopKV2", top_k_grad);
    r.add("MirrorPad", |s, op, g| mirror_grad(s, op, g, ops::mirror_pad_grad));
    r.add("MirrorPadGrad", |s, op, g| mirror_grad(s, op, g, ops::mirror_pad));
    r.add("GatherNd", gather_nd_grad);
    r.add("ScatterNd", |s, op, g| Ok(vec![None, Some(ops::gather_nd(s, grad0(op, g)?, input(op, 0)?.clone())), None]));
    r.add("TensorScatterUpdate", tensor_scatter_update_grad);
    r.add("TensorScatterAdd", |s, op, g| tensor_scatter_add_sub_grad(s, op, g, false));
    r.add("TensorScatterSub", |s, op, g| tensor_scatter_add_sub_grad(s, op, g, true));
    r.add("MatrixBandPart", |s, op, g| {
        let b = ops::matrix_band_part(s, grad0(op, g)?, input(op, 1)?.clone(), input(op, 2)?.clone());
        Ok(vec![Some(b), None, None])
    });
    r.add("Diag", |s, op, g| Ok(vec![Some(ops::diag_part(s, grad0(op, g)?))]));
    r.add("DiagPart", |s, op, g| Ok(vec![Some(ops::diag(s, grad0(op, g)?))]));
    r.add("EnsureShape", |_, op, g| Ok(vec![Some(grad0(op, g)?)]));
    r.add("ClipByValue", clip_by_value_grad);
    r.add("Einsum", super::array_grad_einsum::einsum_grad);
    r.add("MatrixDiagV3", matrix_diag_grad);
    r.add("MatrixDiagPartV3", matrix_diag_part_grad);
    r.add("MatrixSetDiagV3", matrix_set_diag_grad);
    r.add("MatrixDiagV2", matrix_diag_grad);
    r.add("MatrixDiagPartV2", matrix_diag_part_grad);
    r.add("MatrixSetDiagV2", matrix_set_diag_grad);
    r.add("MatrixDiag", |s, op, g| {
        let grad = grad0(op, g)?;
        let k = ops::constant(s, 0i32);
        Ok(vec![Some(ops::matrix_diag_part_v3(s, grad.clone(), k, zero_of(s, &grad), "RIGHT_LEFT"))])
    });
    r.add("MatrixDiagPart", |s, op, g| {
        let zeros = ops::zeros_like(s, input(op, 0)?.clone());
        Ok(vec![Some(ops::matrix_set_diag_v3(s, zeros, grad0(op, g)?, ops::constant(s, 0i32), "RIGHT_LEFT"))])
    });
    r.add("MatrixSetDiag", |s, op, g| {
        let grad = grad0(op, g)?;
        let k = ops::constant(s, 0i32);
        let zeros = ops::zeros_like(s, input(op, 1)?.clone());
        let cleared = ops::matrix_set_diag_v3(s, grad.clone(), zeros, k.clone(), "RIGHT_LEFT");
        let part = ops::matrix_diag_part_v3(s, grad.clone(), k, zero_of(s, &grad), "RIGHT_LEFT");
        Ok(vec![Some(cleared), Some(part)])
    });
}

/// Split: the output gradients concatenated along `split_dim` (input 0).
fn split_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    Ok(vec![None, Some(ops::concat(s, g.to_vec(), input(op, 0)?.clone()))])
}

/// SplitV: the output gradients concatenated along `split_dim` (input 2).
fn split_v_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    Ok(vec![Some(ops::concat(s, g.to_vec(), input(op, 2)?.clone())), None, None])
}

fn scan_attrs(op: &GradOp) -> Result<(bool, bool), Status> {
    Ok((op.node.attr_bool("exclusive")?, op.node.attr_bool("reverse")?))
}

/// Cumsum: the gradient summed in the other direction.
fn cumsum_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (ex, rev) = scan_attrs(op)?;
    Ok(vec![Some(ops::cumsum(s, grad0(op, g)?, input(op, 1)?.clone(), ex, !rev)), None])
}

/// Cumprod: `cumsum(cumprod(x) * g, reversed) / x` (0 where x is 0), as TensorFlow's.
fn cumprod_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (ex, rev) = scan_attrs(op)?;
    let (x, axis) = (input(op, 0)?.clone(), input(op, 1)?.clone());
    let prod = ops::cumprod(s, x.clone(), axis.clone(), ex, rev);
    let out = ops::cumsum(s, ops::mul(s, prod, grad0(op, g)?), axis, ex, !rev);
    Ok(vec![Some(ops::div_no_nan(s, out, x)), None])
}

/// The lowest finite value of a float dtype, as a scalar constant.
fn dtype_min(s: &Scope, dt: DataType) -> Output {
    match dt {
        DataType::Double => ops::constant(s, f64::MIN),
        _ => ops::constant(s, f32::MIN),
    }
}

/// CumulativeLogsumexp: the positive and negative parts of the gradient in log space,
/// scanned in the other direction (TensorFlow's formulation).
fn cumulative_logsumexp_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (ex, rev) = scan_attrs(op)?;
    let (x, axis) = (input(op, 0)?.clone(), input(op, 1)?.clone());
    let out = op.outputs[0].clone();
    let grad = grad0(op, g)?;
    let zero = ops::zeros_like(s, grad.clone());
    let min = dtype_min(s, grad.dtype);
    let part = |mask: Output, v: Output| {
        let lg = ops::select_v2(s, mask, ops::log(s, v), min.clone());
        let c = ops::cumulative_logsumexp(s, ops::sub(s, lg, out.clone()), axis.clone(), ex, !rev);
        ops::exp(s, ops::add_v2(s, c, x.clone()))
    };
    let pos = part(ops::greater(s, grad.clone(), zero.clone()), grad.clone());
    let neg = part(ops::less(s, grad.clone(), zero), ops::neg(s, grad));
    Ok(vec![Some(ops::sub(s, pos, neg)), None])
}

/// Roll: the gradient rolled back by `-shift`.
fn roll_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let back = ops::neg(s, input(op, 1)?.clone());
    Ok(vec![Some(ops::roll(s, grad0(op, g)?, back, input(op, 2)?.clone())), None, None])
}

/// TopKV2: the values' gradient scattered to the selected positions of each row
/// (`ScatterNd` over flat indices, as TensorFlow's).
fn top_k_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let idx = op.outputs.get(1).cloned().ok_or_else(|| Status::internal("TopKV2 has no indices output"))?;
    let idx = if idx.dtype == DataType::Int64 { idx } else { ops::cast(s, idx, DataType::Int64) };
    let in_shape = shape_of(s, x, DataType::Int64);
    let last = ops::sub(s, rank_of(s, x), int(s, 1));
    let n = ops::gather_v2(s, in_shape.clone(), last, int(s, 0));
    // The indices' rows have k entries (k = the indices' last dimension, not the input's).
    let idx_shape = ops::shape(s, idx.clone(), DataType::Int64);
    let k = ops::gather_v2(s, idx_shape, ops::sub(s, rank_of(s, &idx), int(s, 1)), int(s, 0));
    let ind_2d = ops::reshape(s, idx.clone(), ops::stack(s, vec![ops::constant(s, -1i64), k], 0));
    let ind_2d_shape = ops::shape(s, ind_2d.clone(), DataType::Int64);
    let outer = ops::gather_v2(s, ind_2d_shape, int(s, 0), int(s, 0));
    let starts = ops::range(s, ops::constant(s, 0i64), ops::mul(s, outer, n.clone()), n);
    let flat =
        ops::reshape(s, ops::add_v2(s, ind_2d, ops::expand_dims(s, starts, int(s, -1))), ops::constant(s, vec![-1i64]));
    let total = ops::prod(s, in_shape.clone(), int(s, 0), true);
    let values = ops::reshape(s, grad0(op, g)?, ops::constant(s, vec![-1i64]));
    let scattered = ops::scatter_nd(s, ops::expand_dims(s, flat, int(s, -1)), values, total);
    Ok(vec![Some(ops::reshape(s, scattered, in_shape)), None])
}

fn mirror_grad(s: &Scope, op: &GradOp, g: &[Output], f: fn(&Scope, Output, Output, &str) -> Output) -> Grads {
    let mode = op.node.attr_string("mode")?;
    Ok(vec![Some(f(s, grad0(op, g)?, input(op, 1)?.clone(), &mode)), None])
}

/// GatherNd: the gradient scattered (summed) back into a zero tensor of the params' shape.
fn gather_nd_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (params, indices) = (input(op, 0)?, input(op, 1)?.clone());
    let shape = shape_of(s, params, indices.dtype);
    Ok(vec![Some(ops::scatter_nd(s, indices, grad0(op, g)?, shape)), None])
}

/// TensorScatterUpdate: the tensor's gradient with the updated slices zeroed; the updates'
/// gradient gathered from those slices.
fn tensor_scatter_update_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (indices, updates) = (input(op, 1)?.clone(), input(op, 2)?.clone());
    let grad = grad0(op, g)?;
    let zeros = ops::zeros_like(s, updates);
    let tensor_grad =
        ops::tensor_scatter(s, "TensorScatterUpdate", ops::identity(s, grad.clone()), indices.clone(), zeros);
    Ok(vec![Some(tensor_grad), None, Some(ops::gather_nd(s, grad, indices))])
}

/// TensorScatterAdd/Sub: the gradient passes to the tensor; the updates get its slices
/// (negated for Sub).
fn tensor_scatter_add_sub_grad(s: &Scope, op: &GradOp, g: &[Output], negate: bool) -> Grads {
    let grad = grad0(op, g)?;
    let up = ops::gather_nd(s, grad.clone(), input(op, 1)?.clone());
    Ok(vec![Some(grad), None, Some(if negate { ops::neg(s, up) } else { up })])
}

/// ClipByValue: the gradient where `x` is inside the bounds; the rest summed into the
/// bound that clipped it (reduced to the bound's shape).
fn clip_by_value_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, y, z) = (input(op, 0)?.clone(), input(op, 1)?.clone(), input(op, 2)?.clone());
    let grad = grad0(op, g)?;
    let (sx, sy, sz) =
        (shape_of(s, &x, DataType::Int32), shape_of(s, &y, DataType::Int32), shape_of(s, &z, DataType::Int32));
    let zeros = ops::zeros_like(s, grad.clone());
    let xy = ops::less(s, x.clone(), y);
    let xz = ops::greater(s, x, z);
    let (_, ry) = ops::broadcast_gradient_args(s, sx.clone(), sy.clone());
    let (_, rz) = ops::broadcast_gradient_args(s, sx, sz.clone());
    let xgrad = ops::select_v2(s, ops::logical_or(s, xy.clone(), xz.clone()), zeros.clone(), grad.clone());
    let ygrad = ops::select_v2(s, xy, grad.clone(), zeros.clone());
    let zgrad = ops::select_v2(s, xz, grad, zeros);
    let gy = ops::reshape(s, ops::sum(s, ygrad, ry, false), sy);
    let gz = ops::reshape(s, ops::sum(s, zgrad, rz, false), sz);
    Ok(vec![Some(xgrad), Some(gy), Some(gz)])
}

/// The zero scalar of `x`'s dtype (the padding of the gradient's diagonal parts).
fn zero_of(s: &Scope, x: &Output) -> Output {
    ops::cast(s, ops::constant(s, 0i32), x.dtype)
}

/// The op's `align`; V2 ops have none and align as LEFT_LEFT.
fn diag_align(op: &GradOp) -> String {
    op.node.attr_string("align").unwrap_or_else(|_| "LEFT_LEFT".to_string())
}

/// MatrixDiagV3 (and V2): the gradient's diagonals `k`.
fn matrix_diag_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let grad = grad0(op, g)?;
    let align = diag_align(op);
    let part = ops::matrix_diag_part_v3(s, grad.clone(), input(op, 1)?.clone(), zero_of(s, &grad), &align);
    Ok(vec![Some(part), None, None, None, None])
}

/// MatrixDiagPartV3 (and V2): the gradient placed on the diagonals `k` of a zero matrix.
fn matrix_diag_part_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 0)?;
    let align = diag_align(op);
    let zeros = ops::zeros_like(s, x.clone());
    Ok(vec![Some(ops::matrix_set_diag_v3(s, zeros, grad0(op, g)?, input(op, 1)?.clone(), &align)), None, None])
}

/// MatrixSetDiagV3 (and V2): the gradient with the set diagonals zeroed for the input; the
/// gradient's diagonals for the new diagonal.
fn matrix_set_diag_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let grad = grad0(op, g)?;
    let (diag, k) = (input(op, 1)?.clone(), input(op, 2)?.clone());
    let align = diag_align(op);
    let cleared = ops::matrix_set_diag_v3(s, grad.clone(), ops::zeros_like(s, diag), k.clone(), &align);
    let part = ops::matrix_diag_part_v3(s, grad.clone(), k, zero_of(s, &grad), &align);
    Ok(vec![Some(cleared), Some(part), None])
}
