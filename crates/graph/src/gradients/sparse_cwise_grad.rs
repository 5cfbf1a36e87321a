//! Gradients of `SparseDenseCwiseMul` and `SparseDenseCwiseDiv` (TensorFlow's
//! `sparse_grad.py`): each value's dense partner is found by dividing its index by the
//! broadcast factor of every dimension; the values get `grad * dense` (`grad / dense`), the
//! dense side `grad * values` (`-grad * values / dense^2`) summed into its own shape. No
//! gradient for the indices or the shape; `SparseDenseCwiseAdd` has none in TensorFlow.

use ferroflow_core::DataType;

use super::nn_grad::{grad, input};
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

fn mul_or_div_grad(s: &Scope, op: &GradOp, g: &[Output], mul: bool) -> Grads {
    let (indices, values, x_shape, y, dy) =
        (input(op, 0)?, input(op, 1)?, input(op, 2)?, input(op, 3)?, grad(op, g, 0)?);
    let i64s = |v: &[i64]| ops::constant(s, ferroflow_core::Tensor::vec(v.to_vec()));
    let y_shape = ops::shape(s, y.clone(), DataType::Int64);
    // The dims the dense side lacks, as ones in front of its shape.
    let added =
        ops::sub(s, ops::size(s, x_shape.clone(), DataType::Int64), ops::size(s, y_shape.clone(), DataType::Int64));
    let added_vec = ops::expand_dims(s, added, ops::constant(s, 0i32));
    let ones = ops::fill(s, added_vec.clone(), ops::constant(s, 1i64));
    let augmented = ops::concat(s, vec![ones, y_shape.clone()], ops::constant(s, 0i32));
    let scaling = ops::floor_div(s, x_shape, augmented);
    let scaled = ops::floor_div(s, indices, scaling);
    let begin = ops::concat(s, vec![i64s(&[0]), added_vec], ops::constant(s, 0i32));
    let scaled = ops::slice(s, scaled, begin, i64s(&[-1, -1]));
    let dense_vals = ops::gather_nd(s, y.clone(), scaled.clone());
    let (dx, dy_vals) = if mul {
        (ops::mul(s, dy.clone(), dense_vals), ops::mul(s, dy, values))
    } else {
        let dx = ops::real_div(s, dy.clone(), dense_vals.clone());
        let ratio = ops::real_div(s, ops::neg(s, values), ops::square(s, dense_vals));
        (dx, ops::mul(s, dy, ratio))
    };
    let dense = ops::sparse_tensor_dense_add(s, scaled, dy_vals, y_shape, ops::zeros_like(s, y));
    Ok(vec![None, Some(dx), None, Some(dense)])
}

pub(super) fn sparse_dense_cwise_mul_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    mul_or_div_grad(s, op, g, true)
}

pub(super) fn sparse_dense_cwise_div_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    mul_or_div_grad(s, op, g, false)
}
