//! Shape-function helpers of the math ops.

use ferroflow_core::{Status, Tensor};

use crate::shape_fn::{Dims, ShapeCtx};

/// Merges two partial shapes that must be equal; an error when known dims differ.
pub(super) fn merge(c: &ShapeCtx, a: &Dims, b: &Dims) -> Result<Dims, Status> {
    let (Some(x), Some(y)) = (a, b) else { return Ok(a.clone().or_else(|| b.clone())) };
    if x.len() != y.len() {
        return Err(c.error(format!("shapes must be equal rank, but are {} and {}", x.len(), y.len())));
    }
    let mut out = Vec::with_capacity(x.len());
    for (&p, &q) in x.iter().zip(y) {
        out.push(match (p, q) {
            (-1, d) | (d, -1) => d,
            (p, q) if p == q => p,
            _ => return Err(c.error(format!("dimensions must be equal, but are {p} and {q} (shapes {x:?} and {y:?})"))),
        });
    }
    Ok(Some(out))
}

/// The integer values of a constant int32/int64 tensor.
pub(super) fn const_ints(t: &Tensor) -> Option<Vec<i64>> {
    if let Ok(v) = t.as_slice::<i32>() {
        return Some(v.iter().map(|&x| x as i64).collect());
    }
    t.as_slice::<i64>().ok().map(|v| v.to_vec())
}
