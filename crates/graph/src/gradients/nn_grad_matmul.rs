//! Gradients of `MatMul` and `BatchMatMulV2` (TensorFlow's `math_grad.py` formulas).

use ferroflow_core::{attr, DataType, NodeAttrs};

use super::nn_grad::{grad, input, slice_1d};
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops::{self, op_output};
use crate::scope::{Output, Scope};

/// Which operand of the forward product a gradient product is for (sets TensorFlow's
/// `grad_a`/`grad_b` hint attrs).
#[derive(Clone, Copy)]
enum For {
    A,
    B,
}

/// The product `op_type` of `a` and `b` with its transpose (or adjoint) attrs `names[0..2]`
/// set to `adj` and its gradient-hint attrs `names[2..4]` to `f`.
fn product(s: &Scope, op_type: &str, names: [&str; 4], [a, b]: [Output; 2], adj: [bool; 2], f: For) -> Output {
    let values = [adj[0], adj[1], matches!(f, For::A), matches!(f, For::B)];
    op_output(s, op_type, [a, b], names.into_iter().zip(values.map(attr::bool)))
}

fn mm(s: &Scope, a: Output, b: Output, ta: bool, tb: bool, f: For) -> Output {
    product(s, "MatMul", ["transpose_a", "transpose_b", "grad_a", "grad_b"], [a, b], [ta, tb], f)
}

/// `(dA, dB)` for `C = op(A) · op(B)` with the transposes `(ta, tb)` and the gradient `dc`
/// of `C`, the products made by `prod`: the four cases of TensorFlow's `_MatMulGrad`.
fn product_grads(
    [a, b, dc]: [Output; 3],
    (ta, tb): (bool, bool),
    prod: impl Fn(Output, Output, bool, bool, For) -> Output,
) -> (Output, Output) {
    match (ta, tb) {
        (false, false) => (prod(dc.clone(), b, false, true, For::A), prod(a, dc, true, false, For::B)),
        (false, true) => (prod(dc.clone(), b, false, false, For::A), prod(dc, a, true, false, For::B)),
        (true, false) => (prod(b, dc.clone(), false, true, For::A), prod(a, dc, false, false, For::B)),
        (true, true) => (prod(b, dc.clone(), true, true, For::A), prod(dc, a, true, true, For::B)),
    }
}

/// MatMul: for `C = op(A) · op(B)` the four transpose cases of TensorFlow's `_MatMulGrad`.
pub(super) fn matmul_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (ta, tb) = (op.node.attr_bool("transpose_a")?, op.node.attr_bool("transpose_b")?);
    let (a, b, dc) = (input(op, 0)?, input(op, 1)?, grad(op, g, 0)?);
    let (da, db) = product_grads([a, b, dc], (ta, tb), |x, y, p, q, f| mm(s, x, y, p, q, f));
    Ok(vec![Some(da), Some(db)])
}

/// `tf.linalg.matmul(a, b, adjoint_a, adjoint_b)`: `MatMul` when both operands are known to
/// be matrices, else `BatchMatMulV2`.
fn matmul(s: &Scope, a: Output, b: Output, adj_a: bool, adj_b: bool, f: For) -> Output {
    let rank2 = |o: &Output| s.graph().shape_of(o).is_some_and(|d| d.len() == 2);
    if rank2(&a) && rank2(&b) {
        return mm(s, a, b, adj_a, adj_b, f);
    }
    product(s, "BatchMatMulV2", ["adj_x", "adj_y", "grad_x", "grad_y"], [a, b], [adj_a, adj_b], f)
}

/// BatchMatMulV2: the MatMul formulas on the (broadcast) batch, then each gradient summed
/// over the batch dims its operand was broadcast along and reshaped to the operand's shape
/// (skipped when the static shapes show no batch broadcasting).
pub(super) fn batch_matmul_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (adj_x, adj_y) = (op.node.attr_bool("adj_x")?, op.node.attr_bool("adj_y")?);
    let (x, y, dz) = (input(op, 0)?, input(op, 1)?, grad(op, g, 0)?);
    let (dx, dy) = product_grads([x.clone(), y.clone(), dz], (adj_x, adj_y), |a, b, p, q, f| matmul(s, a, b, p, q, f));
    let (sx, sy) = (s.graph().shape_of(&x), s.graph().shape_of(&y));
    let may_have_batch = sx.as_ref().is_none_or(|d| d.len() > 2) || sy.as_ref().is_none_or(|d| d.len() > 2);
    let batch_known_equal = match (&sx, &sy) {
        (Some(a), Some(b)) if a.len() >= 2 && b.len() >= 2 => {
            let (ba, bb) = (&a[..a.len() - 2], &b[..b.len() - 2]);
            ba.iter().chain(bb).all(|&d| d >= 0) && ba == bb
        }
        _ => false,
    };
    if !may_have_batch || batch_known_equal {
        return Ok(vec![Some(dx), Some(dy)]);
    }
    let shape_x = ops::shape(s, x, DataType::Int32);
    let shape_y = ops::shape(s, y, DataType::Int32);
    let (rx, ry) = ops::broadcast_gradient_args(
        s,
        slice_1d(s, shape_x.clone(), None, Some(-2)),
        slice_1d(s, shape_y.clone(), None, Some(-2)),
    );
    let dx = ops::reshape(s, ops::sum(s, dx, rx, false), shape_x);
    let dy = ops::reshape(s, ops::sum(s, dy, ry, false), shape_y);
    Ok(vec![Some(dx), Some(dy)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradients::gradients;

    fn ph(s: &Scope, dims: Option<&[i64]>) -> Output {
        ops::placeholder(s, DataType::Double, dims)
    }

    fn def(s: &Scope, o: &Output) -> ferroflow_core::proto::NodeDef {
        s.graph().node(&o.node).unwrap().def
    }

    #[test]
    fn matmul_grads_use_tf_transposes() {
        // (transpose_a, transpose_b) -> (grad_a: (ta, tb), grad_b: (ta, tb)), as in TensorFlow.
        let cases = [
            ((false, false), (false, true), (true, false)),
            ((false, true), (false, false), (true, false)),
            ((true, false), (false, true), (false, false)),
            ((true, true), (true, true), (true, true)),
        ];
        for ((ta, tb), wa, wb) in cases {
            let s = Scope::new_root();
            let a = ph(&s, Some(if ta { &[3, 2] } else { &[2, 3] }));
            let b = ph(&s, Some(if tb { &[4, 3] } else { &[3, 4] }));
            let c = ops::mat_mul(&s, a.clone(), b.clone(), ta, tb);
            let g = gradients(&s, &[c], &[a.clone(), b.clone()], None).unwrap();
            let (ga, gb) = (g[0].clone().unwrap(), g[1].clone().unwrap());
            for (o, want, flag, x) in [(&ga, wa, "grad_a", &a), (&gb, wb, "grad_b", &b)] {
                let n = def(&s, o);
                assert_eq!(n.op, "MatMul");
                let got = (n.attr_bool("transpose_a").unwrap(), n.attr_bool("transpose_b").unwrap());
                assert_eq!(got, want, "case {ta} {tb} {flag}");
                assert!(n.attr_bool(flag).unwrap());
                assert_eq!(s.graph().shape_of(o), s.graph().shape_of(x));
            }
            s.status().unwrap();
        }
    }

    #[test]
    fn batch_matmul_reduces_only_when_broadcasting() {
        let s = Scope::new_root();
        let x = ph(&s, Some(&[5, 2, 3]));
        let y = ph(&s, Some(&[5, 3, 4]));
        let z = ops::batch_mat_mul_v2(&s, x.clone(), y.clone(), false, false);
        let g = gradients(&s, &[z], &[x.clone(), y.clone()], None).unwrap();
        assert_eq!(def(&s, g[0].as_ref().unwrap()).op, "BatchMatMulV2");
        assert_eq!(s.graph().shape_of(g[1].as_ref().unwrap()), Some(vec![5, 3, 4]));

        let x = ph(&s, Some(&[5, 1, 2, 3]));
        let y = ph(&s, Some(&[4, 3]));
        let z = ops::batch_mat_mul_v2(&s, x.clone(), y.clone(), false, true);
        let g = gradients(&s, &[z], &[x.clone(), y.clone()], None).unwrap();
        assert_eq!(def(&s, g[0].as_ref().unwrap()).op, "Reshape");
        assert_eq!(def(&s, g[1].as_ref().unwrap()).op, "Reshape");

        // Plain matrices go through MatMul.
        let (a, b) = (ph(&s, Some(&[2, 3])), ph(&s, Some(&[3, 4])));
        let z = ops::batch_mat_mul_v2(&s, a.clone(), b.clone(), false, false);
        let g = gradients(&s, &[z], &[a, b], None).unwrap();
        assert_eq!(def(&s, g[0].as_ref().unwrap()).op, "MatMul");

        // Unknown rank: the dynamic reduction.
        let (a, b) = (ph(&s, None), ph(&s, None));
        let z = ops::batch_mat_mul_v2(&s, a.clone(), b.clone(), true, true);
        let g = gradients(&s, &[z], &[a, b], None).unwrap();
        assert_eq!(def(&s, g[0].as_ref().unwrap()).op, "Reshape");
        s.status().unwrap();
    }
}
