//! Gradient functions of the nn ops (TensorFlow's `nn_grad.py`): bias, rectifiers, softmax
//! and the softmax cross-entropies here; matrix products in `nn_grad_matmul.rs`,
//! convolution and pooling in `nn_grad_conv.rs`.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops::{self, SliceMasks};
use crate::scope::{OpBuilder, Operation, Output, Scope};

/// Copies the named attrs of the forward node (those it has) onto a gradient op.
pub(super) fn copy_attrs(mut b: OpBuilder, node: &NodeDef, names: &[&str]) -> OpBuilder {
    for &n in names {
        if let Ok(v) = node.attr_value(n) {
            b = b.attr(n, v.clone());
        }
    }
    b
}

/// The gradient op `op_type` of the forward op `op`: its inputs the gradient of output 0,
/// then the forward inputs numbered `inputs`; the forward attrs `attrs` copied.
pub(super) fn grad_op(
    s: &Scope,
    op_type: &str,
    op: &GradOp,
    g: &[Output],
    inputs: &[usize],
    attrs: &[&str],
) -> Result<Operation, Status> {
    let mut b = s.op(op_type).input(grad(op, g, 0)?);
    for &i in inputs {
        b = b.input(input(op, i)?);
    }
    Ok(copy_attrs(b, &op.node, attrs).build())
}

/// Input `i` of the forward op (an internal error if the op has fewer inputs).
pub(super) fn input(op: &GradOp, i: usize) -> Result<Output, Status> {
    op.inputs
        .get(i)
        .cloned()
        .ok_or_else(|| Status::internal(format!("{} node '{}' has no input {i}", op.node.op, op.node.name)))
}

/// Output `i` of the forward op.
pub(super) fn output(op: &GradOp, i: usize) -> Result<Output, Status> {
    op.outputs
        .get(i)
        .cloned()
        .ok_or_else(|| Status::internal(format!("{} node '{}' has no output {i}", op.node.op, op.node.name)))
}

/// Gradient `i` of the slice handed to a gradient function.
pub(super) fn grad(op: &GradOp, g: &[Output], i: usize) -> Result<Output, Status> {
    g.get(i)
        .cloned()
        .ok_or_else(|| Status::internal(format!("gradient {i} of {} node '{}' is missing", op.node.op, op.node.name)))
}

/// An int32 constant vector.
pub(super) fn i32s(s: &Scope, v: &[i32]) -> Output {
    ops::constant(s, Tensor::vec(v.to_vec()))
}

/// Whether `g` is the all-zeros placeholder gradient the backprop walk makes for an output
/// nothing depends on (TensorFlow's `_is_zeros_tensor`).
fn is_zeros(s: &Scope, g: &Output) -> bool {
    s.graph().operation(&g.node).is_some_and(|o| o.op_type == "ZerosLike")
}

/// `x[begin:end]` of a 1-D tensor (`None` = open end), like Python slicing.
pub(super) fn slice_1d(s: &Scope, x: Output, begin: Option<i32>, end: Option<i32>) -> Output {
    let masks = SliceMasks { begin: i64::from(begin.is_none()), end: i64::from(end.is_none()), ..Default::default() };
    let (b, e, st) = (i32s(s, &[begin.unwrap_or(0)]), i32s(s, &[end.unwrap_or(0)]), i32s(s, &[1]));
    ops::strided_slice(s, x, b, e, st, masks)
}

/// BiasAdd: the value gradient passes through; the bias gradient sums over all but the
/// channel dim (`BiasAddGrad` with the same data_format).
pub(super) fn bias_add_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let dy = grad(op, g, 0)?;
    let db = copy_attrs(s.op("BiasAddGrad").input(dy.clone()), &op.node, &["data_format"]).build().output(0);
    Ok(vec![Some(dy), Some(db)])
}

/// BiasAddGrad: tiles the [C] gradient back over the shape of `out_backprop`.
pub(super) fn bias_add_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let dy = grad(op, g, 0)?;
    let nchw = op.node.has_attr("data_format") && op.node.attr_string("data_format")? == "NCHW";
    let shape = ops::shape(s, input(op, 0)?, DataType::Int32);
    let bias_shape = ops::shape(s, dy.clone(), DataType::Int32);
    let axis = ops::constant(s, 0i32);
    let (expanded, mults) = if nchw {
        let head = slice_1d(s, shape.clone(), None, Some(1));
        let tail = slice_1d(s, shape, Some(2), None);
        let expanded = ops::concat(
            s,
            vec![ops::ones_like(s, head.clone()), bias_shape, ops::ones_like(s, tail.clone())],
            axis.clone(),
        );
        (expanded, ops::concat(s, vec![head, i32s(s, &[1]), tail], axis))
    } else {
        let head = slice_1d(s, shape, None, Some(-1));
        let expanded = ops::concat(s, vec![ops::ones_like(s, head.clone()), bias_shape], axis.clone());
        (expanded, ops::concat(s, vec![head, i32s(s, &[1])], axis))
    };
    Ok(vec![Some(ops::tile(s, ops::reshape(s, dy, expanded), mults))])
}

/// Gradient functions of activations: `[grad_op(dy, v)]`, where `v` is the forward op's
/// `input` 0 or its `output` 0, as its gradient op takes.
macro_rules! activation_grads {
    ($($(#[$doc:meta])* $f:ident => $grad_op:ident($arg:ident);)*) => {$(
        $(#[$doc])*
        pub(super) fn $f(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
            Ok(vec![Some(ops::$grad_op(s, grad(op, g, 0)?, $arg(op, 0)?))])
        }
    )*};
}
pub(super) use activation_grads;

activation_grads! {
    /// Relu: `ReluGrad(dy, relu(x))` (from the output, as TensorFlow does).
    relu_grad => relu_grad(output);
    /// Relu6: `Relu6Grad(dy, relu6(x))`.
    relu6_grad => relu6_grad(output);
    /// Elu: `EluGrad(dy, elu(x))`.
    elu_grad => elu_grad(output);
}

/// ReluGrad(gradients, features) is linear in `gradients` with the same mask; its
/// derivative in `features` is zero almost everywhere (TensorFlow returns zeros).
pub(super) fn relu_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 1)?;
    Ok(vec![Some(ops::relu_grad(s, grad(op, g, 0)?, x.clone())), Some(ops::zeros_like(s, x))])
}

/// Relu6Grad: like ReluGrad with the (0, 6) mask.
pub(super) fn relu6_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let x = input(op, 1)?;
    Ok(vec![Some(ops::relu6_grad(s, grad(op, g, 0)?, x.clone())), Some(ops::zeros_like(s, x))])
}

/// EluGrad(gradients, outputs) = outputs < 0 ? gradients * (outputs + 1) : gradients:
/// d/dgradients is EluGrad(ddx, outputs), d/doutputs is `ddx * gradients` where outputs < 0.
pub(super) fn elu_grad_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let ddx = grad(op, g, 0)?;
    let elu_x = input(op, 1)?;
    let zero = ops::zeros(s, &[], elu_x.dtype);
    let neg = ops::less(s, elu_x.clone(), zero);
    let d_out = ops::select_v2(s, neg, ops::mul(s, ddx.clone(), input(op, 0)?), ops::zeros_like(s, elu_x.clone()));
    Ok(vec![Some(ops::elu_grad(s, ddx, elu_x)), Some(d_out)])
}

/// Softmax: `(dy - sum(dy * y, -1, keepdims)) * y`.
pub(super) fn softmax_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let dy = grad(op, g, 0)?;
    let y = output(op, 0)?;
    let sum = ops::sum(s, ops::mul(s, dy.clone(), y.clone()), ops::constant(s, -1i32), true);
    Ok(vec![Some(ops::mul(s, ops::sub(s, dy, sum), y))])
}

/// LogSoftmax: `dy - sum(dy, -1, keepdims) * exp(y)`.
pub(super) fn log_softmax_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let dy = grad(op, g, 0)?;
    let softmax = ops::exp(s, output(op, 0)?);
    let sum = ops::sum(s, dy.clone(), ops::constant(s, -1i32), true);
    Ok(vec![Some(ops::sub(s, dy, ops::mul(s, sum, softmax)))])
}

/// `vec[:, None] * mat` (TensorFlow's `_BroadcastMul`).
pub(super) fn broadcast_mul(s: &Scope, vec: Output, mat: Output) -> Output {
    ops::mul(s, ops::expand_dims(s, vec, ops::constant(s, -1i32)), mat)
}

/// The logits gradient shared by both cross-entropies: `dloss[:, None] * backprop`, plus,
/// when the backprop output itself has a gradient `gg`, the softmax Jacobian applied to it:
/// `(gg - squeeze(gg[:, None, :] @ softmax[:, :, None], 1)) * softmax`.
fn xent_logits_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Result<Output, Status> {
    let grad_loss = grad(op, g, 0)?;
    let grad_grad = grad(op, g, 1)?;
    let mut dlogits = broadcast_mul(s, grad_loss, output(op, 1)?);
    if !is_zeros(s, &grad_grad) {
        let softmax = ops::softmax(s, input(op, 0)?);
        let prod = ops::batch_mat_mul_v2(
            s,
            ops::expand_dims(s, grad_grad.clone(), ops::constant(s, 1i32)),
            ops::expand_dims(s, softmax.clone(), ops::constant(s, 2i32)),
            false,
            false,
        );
        let centered = ops::sub(s, grad_grad, ops::squeeze(s, prod, &[1]));
        dlogits = ops::add(s, dlogits, ops::mul(s, centered, softmax));
    }
    Ok(dlogits)
}

/// SoftmaxCrossEntropyWithLogits: logits as in [`xent_logits_grad`]; labels get
/// `dloss[:, None] * -log_softmax(logits)` (TensorFlow ignores the backprop output's
/// gradient for the labels).
pub(super) fn xent_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let dlogits = xent_logits_grad(s, op, g)?;
    let neg_log_softmax = ops::neg(s, ops::log_softmax(s, input(op, 0)?));
    let dlabels = broadcast_mul(s, grad(op, g, 0)?, neg_log_softmax);
    Ok(vec![Some(dlogits), Some(dlabels)])
}

/// SparseSoftmaxCrossEntropyWithLogits: logits as in [`xent_logits_grad`]; none for the
/// integer labels. (TensorFlow 1.x wrapped the backprop in PreventGradient; current
/// TensorFlow differentiates it to second order, as here.)
pub(super) fn sparse_xent_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    Ok(vec![Some(xent_logits_grad(s, op, g)?), None])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradients::gradients;

    fn ph(s: &Scope, dims: &[i64]) -> Output {
        ops::placeholder(s, DataType::Double, Some(dims))
    }

    fn op_type(s: &Scope, o: &Output) -> String {
        s.graph().operation(&o.node).unwrap().op_type
    }

    fn node(s: &Scope, o: &Output) -> NodeDef {
        s.graph().node(&o.node).unwrap().def
    }

    #[test]
    fn relu_family_uses_the_output() {
        let s = Scope::new_root();
        let x = ph(&s, &[2, 3]);
        for (y, want) in [
            (ops::relu(&s, x.clone()), "ReluGrad"),
            (ops::relu6(&s, x.clone()), "Relu6Grad"),
            (ops::elu(&s, x.clone()), "EluGrad"),
        ] {
            let g =
                gradients(&s, std::slice::from_ref(&y), std::slice::from_ref(&x), None).unwrap()[0].clone().unwrap();
            assert_eq!(op_type(&s, &g), want);
            let n = node(&s, &g);
            assert_eq!(n.input[1], y.input_string(), "{want} must read the forward output");
        }
    }

    #[test]
    fn bias_add_keeps_data_format() {
        let s = Scope::new_root();
        let x = ph(&s, &[2, 3, 4, 5]);
        let b = ph(&s, &[3]);
        let y = ops::bias_add_with_format(&s, x.clone(), b.clone(), "NCHW");
        let g = gradients(&s, &[y], &[x.clone(), b], None).unwrap();
        let gx = g[0].clone().unwrap();
        let gb = g[1].clone().unwrap();
        assert_eq!(op_type(&s, &gb), "BiasAddGrad");
        assert_eq!(node(&s, &gb).attr_string("data_format").unwrap(), "NCHW");
        assert_eq!(s.graph().shape_of(&gb), Some(vec![3]));
        assert_eq!(s.graph().shape_of(&gx), Some(vec![2, 3, 4, 5]));
        // Grad of BiasAddGrad tiles back to the value's shape.
        let db = ops::bias_add_grad(&s, x.clone());
        let gg = gradients(&s, &[db], &[x], None).unwrap()[0].clone().unwrap();
        assert_eq!(op_type(&s, &gg), "Tile");
        s.status().unwrap();
    }

    #[test]
    fn softmax_grads_have_logits_shape() {
        let s = Scope::new_root();
        let x = ph(&s, &[-1, 7]);
        for y in [ops::softmax(&s, x.clone()), ops::log_softmax(&s, x.clone())] {
            let g = gradients(&s, &[y], std::slice::from_ref(&x), None).unwrap()[0].clone().unwrap();
            assert_eq!(s.graph().shape_of(&g), Some(vec![-1, 7]));
        }
        s.status().unwrap();
    }

    #[test]
    fn sparse_xent_has_no_label_gradient_and_skips_zero_second_order() {
        let s = Scope::new_root();
        let logits = ph(&s, &[4, 5]);
        let labels = ops::placeholder(&s, DataType::Int32, Some(&[4]));
        let (loss, _) = ops::sparse_softmax_cross_entropy_with_logits(&s, logits.clone(), labels.clone());
        let g = gradients(&s, &[loss], &[logits, labels], None).unwrap();
        assert!(g[1].is_none());
        let gl = g[0].clone().unwrap();
        assert_eq!(op_type(&s, &gl), "Mul");
        assert_eq!(s.graph().shape_of(&gl), Some(vec![4, 5]));
        // Only the loss was differentiated: no Softmax / BatchMatMulV2 in the gradient.
        let names: Vec<String> = s.graph().nodes().iter().map(|n| n.def.op.clone()).collect();
        assert!(!names.iter().any(|n| n == "BatchMatMulV2"), "{names:?}");
    }

    #[test]
    fn dense_xent_second_order_path() {
        let s = Scope::new_root();
        let logits = ph(&s, &[4, 5]);
        let labels = ph(&s, &[4, 5]);
        let (_, backprop) = ops::softmax_cross_entropy_with_logits(&s, logits.clone(), labels.clone());
        let g = gradients(&s, &[backprop], &[logits, labels], None).unwrap();
        let gl = g[0].clone().unwrap();
        assert_eq!(op_type(&s, &gl), "Add");
        assert_eq!(s.graph().shape_of(&gl), Some(vec![4, 5]));
        assert_eq!(s.graph().shape_of(&g[1].clone().unwrap()), Some(vec![4, 5]));
        s.status().unwrap();
    }
}
