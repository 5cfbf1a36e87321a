//! Gradients of the reductions Sum, Mean, Max, Min and Prod (TensorFlow's `math_grad.py`).
//! Shapes are computed at run time (`Shape`, `DynamicStitch`, …) unless known statically.

use ferroflow_core::{DataType, NodeAttrs, Status};

use super::math_grad::{const_ints, divide, full_shape, int32_vec, scalar, shape_of};
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

/// The reduced tensor, the axes, and `keep_dims`.
fn parts(op: &GradOp) -> Result<(Output, Output, bool), Status> {
    let keep = op.node.attr_bool("keep_dims")?;
    match op.inputs.as_slice() {
        [x, axes] => Ok((x.clone(), axes.clone(), keep)),
        v => Err(Status::internal(format!("{} has {} inputs, expected 2", op.node.op, v.len()))),
    }
}

/// Which dims of `x` are reduced, when the rank and the axes are known statically.
fn reduced_mask(s: &Scope, x: &Output, axes: &Output) -> Option<(Vec<i64>, Vec<bool>)> {
    let dims = s.graph().shape_of(x)?;
    let a = const_ints(s, axes)?;
    let rank = dims.len() as i64;
    let mut mask = vec![false; dims.len()];
    for v in a {
        if v < -rank || v >= rank {
            return None;
        }
        mask[(if v < 0 { v + rank } else { v }) as usize] = true;
    }
    Some((dims, mask))
}

/// `axes` as an int32 vector normalized to `[0, rank)`; `rank` is an int32 scalar. (The
/// modulus is `max(rank, 1)`: a scalar input has no axes, and ferroflow's integer
/// `FloorMod` rejects a zero divisor even for an empty dividend.)
fn normalized_axes(s: &Scope, axes: &Output, rank: Output) -> Output {
    let mut a = ops::reshape(s, axes.clone(), int32_vec(s, &[-1]));
    if a.dtype != DataType::Int32 {
        a = ops::cast(s, a, DataType::Int32);
    }
    let modulus = ops::maximum(s, rank.clone(), ops::constant(s, 1i32));
    ops::floor_mod(s, ops::add_v2(s, a, rank), modulus)
}

/// TensorFlow's `reduced_shape`: the shape of `x` with the reduced dims set to 1. A
/// constant when the rank, the axes and the kept dims are known (at most one unknown
/// kept dim becomes -1), else computed with `DynamicStitch`.
pub(super) fn kept_shape(s: &Scope, x: &Output, axes: &Output) -> Output {
    if let Some((dims, mask)) = reduced_mask(s, x, axes) {
        let kept: Vec<i64> = dims.iter().zip(&mask).map(|(&d, &m)| if m { 1 } else { d }).collect();
        let unknown = kept.iter().filter(|&&d| d < 0).count();
        if unknown == 0 || (unknown == 1 && !kept.contains(&0)) {
            return int32_vec(s, &kept);
        }
    }
    let input_shape = ops::shape(s, x.clone(), DataType::Int32);
    let rank = ops::size(s, input_shape.clone(), DataType::Int32);
    let a = normalized_axes(s, axes, rank.clone());
    let ones = ops::fill(s, ops::shape(s, a.clone(), DataType::Int32), ops::constant(s, 1i32));
    let all = ops::range(s, ops::constant(s, 0i32), rank, ops::constant(s, 1i32));
    ops::dynamic_stitch(s, vec![all, a], vec![input_shape, ones])
}

/// The incoming gradient reshaped to the kept-dims shape (a no-op with `keep_dims`).
fn grad_kept(s: &Scope, x: &Output, axes: &Output, keep: bool, g: &Output) -> Output {
    if keep {
        g.clone()
    } else {
        ops::reshape(s, g.clone(), kept_shape(s, x, axes))
    }
}

/// The gradient of `Sum`, broadcast back to the input's shape.
fn sum_grad_output(s: &Scope, op: &GradOp, g: &[Output]) -> Result<Output, Status> {
    let (x, axes, keep) = parts(op)?;
    let grad = grad_kept(s, &x, &axes, keep, &g[0]);
    Ok(ops::broadcast_to(s, grad, shape_of(s, &x)))
}

pub(super) fn sum_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    Ok(vec![Some(sum_grad_output(s, op, g)?), None])
}

/// `Mean`: the `Sum` gradient divided by the number of reduced elements.
pub(super) fn mean_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let sum_grad = sum_grad_output(s, op, g)?;
    let (x, axes, _) = parts(op)?;
    let dt = sum_grad.dtype;
    let static_factor = match (full_shape(s, &x), full_shape(s, &op.outputs[0])) {
        (Some(i), Some(o)) => Some(i.iter().product::<i64>() / o.iter().product::<i64>().max(1)),
        _ => reduced_mask(s, &x, &axes).and_then(|(dims, mask)| {
            let reduced: Vec<i64> = dims.iter().zip(&mask).filter(|(_, &m)| m).map(|(&d, _)| d).collect();
            reduced.iter().all(|&d| d >= 0).then(|| reduced.iter().product())
        }),
    };
    let factor = match static_factor {
        Some(f) => scalar(s, dt, f as f64),
        None => {
            let input_shape = ops::shape(s, x.clone(), DataType::Int32);
            let rank = ops::size(s, input_shape.clone(), DataType::Int32);
            let a = normalized_axes(s, &axes, rank);
            let count = ops::prod(s, ops::gather(s, input_shape, a), ops::constant(s, 0i32), false);
            ops::cast(s, count, dt)
        }
    };
    Ok(vec![Some(divide(s, sum_grad, factor)), None])
}

/// `Max`/`Min`: the gradient is split evenly among the elements equal to the result.
pub(super) fn min_or_max_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, axes, keep) = parts(op)?;
    let (y, grad) = if keep {
        (op.outputs[0].clone(), g[0].clone())
    } else {
        let kept = kept_shape(s, &x, &axes);
        (ops::reshape(s, op.outputs[0].clone(), kept.clone()), ops::reshape(s, g[0].clone(), kept))
    };
    let indicators = ops::cast(s, ops::equal(s, y, x.clone()), grad.dtype);
    let num_selected = ops::sum(s, indicators.clone(), axes, true);
    let share = divide(s, indicators, num_selected);
    Ok(vec![Some(ops::mul(s, share, grad)), None])
}

/// `Prod`: the gradient times the product of the other reduced elements. TensorFlow forms
/// that product with two exclusive cumprods; ferroflow (which has no Cumprod) computes it
/// from the product of the non-zero elements and the count of zeros per reduced group:
/// `p / x` when the group has no zero, `p` for the single zero of a group, else 0.
pub(super) fn prod_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (x, axes, keep) = parts(op)?;
    let dt = x.dtype;
    let grad = grad_kept(s, &x, &axes, keep, &g[0]);
    let (zero, one) = (scalar(s, dt, 0.0), scalar(s, dt, 1.0));
    let nonzero = ops::not_equal(s, x.clone(), zero.clone());
    let safe = ops::select_v2(s, nonzero.clone(), x.clone(), one.clone());
    let p = ops::prod(s, safe.clone(), axes.clone(), true);
    let is_zero = ops::cast(s, ops::logical_not(s, nonzero.clone()), dt);
    let zeros = ops::sum(s, is_zero, axes, true);
    let others_nonzero =
        ops::select_v2(s, ops::equal(s, zeros.clone(), zero.clone()), divide(s, p.clone(), safe), zero.clone());
    let others_zero = ops::select_v2(s, ops::equal(s, zeros, one), p, zero);
    let others = ops::select_v2(s, nonzero, others_nonzero, others_zero);
    Ok(vec![Some(ops::mul(s, grad, others)), None])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradients::gradients;
    use crate::ops::placeholder;

    fn grad_ops(s: &Scope, y: Output, x: &Output) -> Vec<String> {
        let before = s.graph().num_nodes();
        let g = gradients(s, &[y], std::slice::from_ref(x), None).unwrap();
        assert!(g[0].is_some());
        s.graph().nodes()[before..].iter().map(|n| n.def.op.clone()).collect()
    }

    #[test]
    fn kept_shape_is_constant_when_known() {
        let s = Scope::new_root();
        let x = placeholder(&s, DataType::Double, Some(&[-1, 3, 4]));
        let k = kept_shape(&s, &x, &ops::constant(&s, vec![-1i64, 1]));
        assert_eq!(s.graph().const_value(&k.node).unwrap().as_slice::<i32>().unwrap(), &[-1, 1, 1]);
        // Two unknown kept dims need the run-time shape.
        let x2 = placeholder(&s, DataType::Double, Some(&[-1, -1, 4]));
        let k = kept_shape(&s, &x2, &ops::constant(&s, 2i32));
        assert_eq!(s.graph().node(&k.node).unwrap().def.op, "DynamicStitch");
        assert!(s.status().is_ok());
    }

    #[test]
    fn dynamic_shapes_use_run_time_ops() {
        let s = Scope::new_root();
        let x = placeholder(&s, DataType::Double, None);
        let axes = placeholder(&s, DataType::Int64, Some(&[-1]));
        let m = ops::mean(&s, x.clone(), axes, false);
        let added = grad_ops(&s, m, &x);
        for op in ["DynamicStitch", "Gather", "BroadcastTo", "Cast"] {
            assert!(added.iter().any(|o| o == op), "{op} missing in {added:?}");
        }
        // Fully static: no shape computations at run time.
        let x = placeholder(&s, DataType::Double, Some(&[2, 3]));
        let m = ops::mean(&s, x.clone(), ops::constant(&s, 1i32), false);
        let added = grad_ops(&s, m, &x);
        assert!(!added.iter().any(|o| o == "Shape" || o == "DynamicStitch"), "{added:?}");
        assert!(s.status().is_ok());
    }

    #[test]
    fn reduction_gradients_have_input_shape() {
        let s = Scope::new_root();
        let x = placeholder(&s, DataType::Float, Some(&[2, 3, 4]));
        for op in ["Sum", "Mean", "Max", "Min", "Prod"] {
            for keep in [false, true] {
                let y = s
                    .op(op)
                    .input(x.clone())
                    .input(ops::constant(&s, vec![0i32, -1]))
                    .attr("keep_dims", ferroflow_core::attr::bool(keep));
                let y = y.build().output(0);
                let g = gradients(&s, &[y], std::slice::from_ref(&x), None).unwrap();
                assert_eq!(s.graph().shape_of(g[0].as_ref().unwrap()), Some(vec![2, 3, 4]), "{op} {keep}");
            }
        }
        assert!(s.status().is_ok());
    }
}
