//! Helpers of the math ops' gradients (TensorFlow's `math_grad.py`), shared by
//! `math_grad_{binary,unary,reduce}.rs`: constants of a dtype, static shapes, and the
//! reduction of broadcast gradients. The ops' registrations are in `table.rs`.

use ferroflow_core::{DataType, Status, Tensor};

use crate::ops;
use crate::scope::{Output, Scope};

/// A scalar `Const` of `dtype` holding `v` (an error is recorded for non-numeric dtypes).
pub(super) fn scalar(s: &Scope, dtype: DataType, v: f64) -> Output {
    let t = match dtype {
        DataType::Float => Tensor::scalar(v as f32),
        DataType::Double => Tensor::scalar(v),
        DataType::Int32 => Tensor::scalar(v as i32),
        DataType::Int64 => Tensor::scalar(v as i64),
        DataType::UInt8 => Tensor::scalar(v as u8),
        d => {
            s.graph().record_error(Status::invalid_argument(format!("gradient: no {d} constant for {v}")));
            Tensor::scalar(v)
        }
    };
    ops::constant(s, t)
}

/// An int32 vector `Const`.
pub(super) fn int32_vec(s: &Scope, v: &[i64]) -> Output {
    ops::constant(s, v.iter().map(|&d| d as i32).collect::<Vec<i32>>())
}

/// The static shape of `o` when every dim is known.
pub(super) fn full_shape(s: &Scope, o: &Output) -> Option<Vec<i64>> {
    s.graph().shape_of(o).filter(|d| d.iter().all(|&v| v >= 0))
}

/// The shape of `o` as an int32 vector: a `Const` when statically known, else `Shape`.
pub(super) fn shape_of(s: &Scope, o: &Output) -> Output {
    match full_shape(s, o) {
        Some(d) => int32_vec(s, &d),
        None => ops::shape(s, o.clone(), DataType::Int32),
    }
}

/// The integer values of `o` if it is a `Const`.
pub(super) fn const_ints(s: &Scope, o: &Output) -> Option<Vec<i64>> {
    if o.index != 0 {
        return None;
    }
    let t = s.graph().const_value(&o.node)?;
    if let Ok(v) = t.as_slice::<i32>() {
        return Some(v.iter().map(|&x| x as i64).collect());
    }
    t.as_slice::<i64>().ok().map(|v| v.to_vec())
}

/// `x / y` for the gradient's dtype: `RealDiv` for floats (TensorFlow's `truediv`).
pub(super) fn divide(s: &Scope, x: Output, y: Output) -> Output {
    if x.dtype.is_float() {
        ops::real_div(s, x, y)
    } else {
        ops::div(s, x, y)
    }
}

/// Axes a broadcast operand's gradient must be summed over.
pub(super) enum Axes {
    /// Known at graph-construction time.
    Static(Vec<i64>),
    /// Computed by `BroadcastGradientArgs`.
    Dynamic(Output),
}

/// How to reduce the gradient of one operand of a broadcasting op back to its shape
/// (TensorFlow's `SmartBroadcastGradientArgs` triple).
pub(super) struct Reduction {
    operand: Output,
    axes: Axes,
    must_reduce: bool,
}

/// Reduction axes of `x` and `y` inferred from static shapes, when the broadcast is decided
/// at graph-construction time (`_InferGradientReductionAxes`).
fn infer_reduction_axes(xs: &[i64], ys: &[i64]) -> Option<(Vec<i64>, Vec<i64>)> {
    let n = xs.len().max(ys.len());
    let dim = |d: &[i64], a: usize| if a < n - d.len() { 1 } else { d[a - (n - d.len())] };
    let (mut xa, mut ya) = (Vec::new(), Vec::new());
    for a in 0..n {
        let (x, y) = (dim(xs, a), dim(ys, a));
        if x == 1 && y != 1 {
            xa.push(a as i64);
        } else if y == 1 && x != 1 {
            ya.push(a as i64);
        } else if x < 0 || y < 0 {
            return None;
        }
    }
    Some((xa, ya))
}

/// `SmartBroadcastGradientArgs`: static reduction axes when the shapes decide them, else
/// `BroadcastGradientArgs` of the run-time shapes.
pub(super) fn smart_broadcast_gradient_args(s: &Scope, x: &Output, y: &Output) -> (Reduction, Reduction) {
    let g = s.graph();
    if let (Some(xs), Some(ys)) = (g.shape_of(x), g.shape_of(y)) {
        if let Some((xa, ya)) = infer_reduction_axes(&xs, &ys) {
            let xr = !xa.is_empty() || xs.len() < ys.len();
            let yr = !ya.is_empty() || ys.len() < xs.len();
            return (
                Reduction { operand: x.clone(), axes: Axes::Static(xa), must_reduce: xr },
                Reduction { operand: y.clone(), axes: Axes::Static(ya), must_reduce: yr },
            );
        }
    }
    let (rx, ry) = ops::broadcast_gradient_args(s, shape_of(s, x), shape_of(s, y));
    (
        Reduction { operand: x.clone(), axes: Axes::Dynamic(rx), must_reduce: true },
        Reduction { operand: y.clone(), axes: Axes::Dynamic(ry), must_reduce: true },
    )
}

/// `_ReduceGradientArg`: sums `grad` over the broadcast axes (keeping dims) and reshapes
/// it to the operand's shape.
pub(super) fn reduce_gradient_arg(s: &Scope, grad: Option<Output>, r: &Reduction) -> Option<Output> {
    let grad = grad?;
    if !r.must_reduce {
        return Some(grad);
    }
    let summed = match &r.axes {
        Axes::Static(a) if a.is_empty() => grad,
        Axes::Static(a) => ops::sum(s, grad, int32_vec(s, a), true),
        Axes::Dynamic(a) => ops::sum(s, grad, a.clone(), true),
    };
    Some(ops::reshape(s, summed, shape_of(s, &r.operand)))
}

/// `_ReduceGradientArgs`: reduces the gradients of both operands of a broadcasting op.
pub(super) fn reduce_gradient_args(
    s: &Scope,
    x: &Output,
    y: &Output,
    gx: Option<Output>,
    gy: Option<Output>,
) -> (Option<Output>, Option<Output>) {
    if gx.is_none() && gy.is_none() {
        return (None, None);
    }
    let (bx, by) = smart_broadcast_gradient_args(s, x, y);
    (reduce_gradient_arg(s, gx, &bx), reduce_gradient_arg(s, gy, &by))
}

#[cfg(test)]
mod tests {
    use ferroflow_core::DataType;

    use super::*;
    use crate::gradients::{grad_registry, gradients};
    use crate::ops::placeholder;

    #[test]
    fn not_differentiable_ops_are_marked() {
        for op in ["Greater", "Equal", "LogicalNot", "ArgMax", "BroadcastGradientArgs", "Floor", "Round", "FloorDiv"] {
            assert!(matches!(grad_registry().get(op), Some(None)), "{op}");
        }
        for op in ["Add", "Sum", "Prod", "Sign", "FloorMod", "Cast", "SelectV2", "TanhGrad", "RsqrtGrad"] {
            assert!(matches!(grad_registry().get(op), Some(Some(_))), "{op}");
        }
    }

    #[test]
    fn gradients_stop_at_non_differentiable_ops() {
        let s = Scope::new_root();
        let x = placeholder(&s, DataType::Double, Some(&[3]));
        let y = placeholder(&s, DataType::Double, Some(&[3]));
        let outs = [
            ops::greater(&s, x.clone(), y.clone()),
            ops::equal(&s, x.clone(), y.clone()),
            ops::floor(&s, x.clone()),
            ops::round(&s, x.clone()),
            ops::floor_div(&s, x.clone(), y.clone()),
            ops::arg_max(&s, x.clone(), ops::constant(&s, 0i32), DataType::Int64),
            ops::logical_not(&s, ops::less(&s, x.clone(), y.clone())),
        ];
        for o in outs {
            let g = gradients(&s, std::slice::from_ref(&o), std::slice::from_ref(&x), None).unwrap();
            assert!(g[0].is_none(), "{o}");
        }
        // Sign has a zero gradient (not None), as in TensorFlow.
        let g = gradients(&s, &[ops::sign(&s, x.clone())], std::slice::from_ref(&x), None).unwrap();
        assert!(g[0].is_some());
        // Casting to an integer stops the gradient.
        let c = ops::cast(&s, ops::cast(&s, x.clone(), DataType::Int32), DataType::Double);
        assert!(gradients(&s, &[c], std::slice::from_ref(&x), None).unwrap()[0].is_none());
        assert!(s.status().is_ok());
    }

    #[test]
    fn static_broadcast_axes() {
        assert_eq!(infer_reduction_axes(&[2, 3], &[3]), Some((vec![], vec![0])));
        assert_eq!(infer_reduction_axes(&[2, 1, 3], &[4, 1]), Some((vec![1], vec![0, 2])));
        assert_eq!(infer_reduction_axes(&[], &[2, 3]), Some((vec![0, 1], vec![])));
        assert_eq!(infer_reduction_axes(&[-1, 3], &[1, 3]), Some((vec![], vec![0])));
        assert_eq!(infer_reduction_axes(&[-1, 3], &[-1, 3]), None);
        assert_eq!(infer_reduction_axes(&[-1, 3], &[4, 3]), None);
    }

    /// Op types added since node `from` (`Graph::nodes_since` would deadlock: it locks twice).
    fn ops_since(s: &Scope, from: usize) -> Vec<String> {
        s.graph().nodes()[from..].iter().map(|n| n.def.op.clone()).collect()
    }

    #[test]
    fn equal_static_shapes_add_no_reduction() {
        let s = Scope::new_root();
        let x = placeholder(&s, DataType::Float, Some(&[2, 3]));
        let y = placeholder(&s, DataType::Float, Some(&[2, 3]));
        let before = s.graph().num_nodes();
        let z = ops::add(&s, x.clone(), y.clone());
        let dz = ops::constant(&s, Tensor::new(vec![2usize, 3], vec![1.0f32; 6]).unwrap());
        let g = gradients(&s, &[z], &[x.clone(), y], Some(&[dz])).unwrap();
        let added = ops_since(&s, before);
        assert!(!added.iter().any(|o| o == "Sum" || o == "BroadcastGradientArgs"), "{added:?}");
        assert!(g.iter().all(|g| g.is_some()));
        // A broadcast decided statically sums over constant axes, with no BroadcastGradientArgs.
        let b = placeholder(&s, DataType::Float, Some(&[3]));
        let before = s.graph().num_nodes();
        let z = ops::mul(&s, x.clone(), b.clone());
        let g = gradients(&s, &[z], &[b], None).unwrap();
        let added = ops_since(&s, before);
        assert!(added.iter().any(|o| o == "Sum") && !added.iter().any(|o| o == "BroadcastGradientArgs"), "{added:?}");
        assert_eq!(s.graph().shape_of(g[0].as_ref().unwrap()), Some(vec![3]));
        // Unknown batch dims fall back to BroadcastGradientArgs.
        let u = placeholder(&s, DataType::Float, Some(&[-1, 3]));
        let before = s.graph().num_nodes();
        let z = ops::sub(&s, u.clone(), x);
        let _ = gradients(&s, &[z], &[u], None).unwrap();
        let added = ops_since(&s, before);
        assert!(added.iter().any(|o| o == "BroadcastGradientArgs"), "{added:?}");
        assert!(s.status().is_ok());
    }
}
