//! The gradient of Einsum, as TensorFlow's `_EinsumGrad` builds it: each operand's gradient
//! is another Einsum of the output gradient (and the other operand) back to that operand's
//! subscripts; labels summed in the forward op alone are broadcast back, and ellipsis
//! dimensions broadcast in the forward op are summed.
//!
//! Not covered (an Unimplemented status names the node): a label repeated within one
//! operand's subscripts (traces, diagonals), and broadcast ellipsis dimensions or
//! operand-only labels when the operands' shapes are not statically known.

use ferroflow_core::{DataType, NodeAttrs, Status};

use super::array_grad::{grad0, input, ints, shape_of, static_shape, Grads};
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

/// One operand's subscripts: letters, with `.` standing for the whole ellipsis.
fn subs(t: &str) -> Vec<char> {
    t.replace("...", ".").chars().collect()
}

fn text(v: &[char]) -> String {
    v.iter().map(|&c| if c == '.' { "...".to_string() } else { c.to_string() }).collect()
}

fn unimplemented(op: &GradOp, what: &str) -> Status {
    Status::unimplemented(format!("gradient of Einsum node '{}': {what}", op.node.name))
}

/// The dims of shape `xs` along subscripts `sa`: the `x_ell` dims of the ellipsis as they
/// are, and for each label `c` of dim `d`, `dim(c, d)` (`None`: left out).
fn label_dims(sa: &[char], xs: &[i64], x_ell: usize, dim: impl Fn(char, i64) -> Option<i64>) -> Vec<i64> {
    let mut v = Vec::new();
    let mut k = 0;
    for &c in sa {
        if c == '.' {
            v.extend_from_slice(&xs[k..k + x_ell]);
            k += x_ell;
        } else {
            v.extend(dim(c, xs[k]));
            k += 1;
        }
    }
    v
}

/// The gradient of operand `a` (subscripts `sa`, tensor `x`) from the einsum of `inputs`
/// with subscripts `in_subs` back to `sa`'s kept labels; then ellipsis sums and
/// broadcasts of the labels only `a` had.
#[allow(clippy::too_many_arguments)]
fn operand_grad(
    s: &Scope,
    op: &GradOp,
    x: &Output,
    sa: &[char],
    other: Option<(&Output, &[char])>,
    so: &[char],
    grad: Output,
) -> Result<Output, Status> {
    let letters: Vec<char> = sa.iter().copied().filter(|&c| c != '.').collect();
    if (1..letters.len()).any(|i| letters[..i].contains(&letters[i])) {
        return Err(unimplemented(op, "repeated labels in an operand"));
    }
    let needed = |c: &char| *c == '.' || so.contains(c) || other.is_some_and(|(_, sb)| sb.contains(c));
    let kept: Vec<char> = sa.iter().copied().filter(needed).collect();
    let mut inputs = vec![grad];
    let mut eq = text(so);
    if let Some((y, sb)) = other {
        inputs.push(y.clone());
        eq = format!("{eq},{}", text(sb));
    }
    let eq = format!("{eq}->{}", text(&kept));
    let mut g = ops::einsum(s, inputs, &eq);
    let x_shape = static_shape(s, x);
    if sa.contains(&'.') {
        // Sum the ellipsis dimensions the other operand broadcast this one to.
        let rank_named = letters.len();
        let y_info = other.filter(|(_, sb)| sb.contains(&'.')).map(|(y, sb)| (static_shape(s, y), sb));
        if let Some((y_shape, sb)) = y_info {
            let (Some(xs), Some(ys)) = (&x_shape, y_shape) else {
                return Err(unimplemented(op, "ellipsis dimensions of operands of unknown shape"));
            };
            let x_ell = xs.len() - rank_named;
            let y_ell = ys.len() - sb.iter().filter(|&&c| c != '.').count();
            let xs_ell = &xs[sa.iter().position(|&c| c == '.').unwrap_or(0)..][..x_ell];
            let ys_ell = &ys[sb.iter().position(|&c| c == '.').unwrap_or(0)..][..y_ell];
            let n = x_ell.max(y_ell);
            let start = kept.iter().position(|&c| c == '.').unwrap_or(0);
            let mut axes = Vec::new();
            for i in 0..n {
                let xd = if i + x_ell >= n { xs_ell[i + x_ell - n] } else { 0 };
                let yd = if i + y_ell >= n { ys_ell[i + y_ell - n] } else { 1 };
                if i + x_ell < n || (xd == 1 && yd != 1) {
                    axes.push((start + i) as i32);
                }
            }
            if !axes.is_empty() {
                let kept_shape = label_dims(sa, xs, x_ell, |c, d| needed(&c).then_some(d));
                let summed = ops::sum(s, g, ints(s, &axes), true);
                g = ops::reshape(s, summed, ops::constant(s, kept_shape));
            }
        }
    }
    if kept.len() != sa.len() {
        // Labels only this operand had: broadcast the gradient along them.
        let Some(xs) = x_shape else {
            return Err(unimplemented(op, "operand-only labels of an operand of unknown shape"));
        };
        let x_ell = xs.len() - letters.len();
        let with_ones = label_dims(sa, &xs, x_ell, |c, d| Some(if needed(&c) { d } else { 1 }));
        g = ops::reshape(s, g, ops::constant(s, with_ones));
        g = ops::broadcast_to(s, g, shape_of(s, x, DataType::Int32));
    }
    Ok(g)
}

/// Einsum with one or two operands.
pub(super) fn einsum_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let eq: String = op.node.attr_string("equation")?.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, out) = eq.split_once("->").ok_or_else(|| unimplemented(op, "equation without '->'"))?;
    let terms: Vec<Vec<char>> = lhs.split(',').map(subs).collect();
    let so = subs(out);
    let grad = grad0(op, g)?;
    match terms.as_slice() {
        [sa] => Ok(vec![Some(operand_grad(s, op, input(op, 0)?, sa, None, &so, grad)?)]),
        [sa, sb] => {
            let (x, y) = (input(op, 0)?, input(op, 1)?);
            let gx = operand_grad(s, op, x, sa, Some((y, sb)), &so, grad.clone())?;
            let gy = operand_grad(s, op, y, sb, Some((x, sa)), &so, grad)?;
            Ok(vec![Some(gx), Some(gy)])
        }
        _ => Err(unimplemented(op, "more than two operands")),
    }
}
