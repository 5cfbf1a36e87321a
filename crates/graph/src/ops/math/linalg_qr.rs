//! `Qr` (TensorFlow's definition): `q` and `r` of each innermost matrix.

use ferroflow_core::{NodeAttrs, Status};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

fn qr_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let Some(d) = c.input(0) else { return Ok(vec![None, None]) };
    if d.len() < 2 {
        return Err(c.error(format!("Shape must be at least rank 2 but is rank {}", d.len())));
    }
    let (m, n) = (d[d.len() - 2], d[d.len() - 1]);
    let full = c.node.attr_bool("full_matrices")?;
    let p = if full {
        m
    } else if m < 0 || n < 0 {
        -1
    } else {
        m.min(n)
    };
    let batch = &d[..d.len() - 2];
    let q: Vec<i64> = batch.iter().copied().chain([m, p]).collect();
    let r: Vec<i64> = batch.iter().copied().chain([p, n]).collect();
    Ok(vec![Some(q), Some(r)])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("Qr")
            .input("input: T")
            .output("q: T")
            .output("r: T")
            .attr("full_matrices: bool = false")
            .attr("T: {double, float, half, complex64, complex128}")
            .shape_fn(qr_shape)
            .build(),
    );
}

two_output_builders! {
    /// `Qr`: `(q, r)` of each innermost matrix of `x` (`full_matrices` false: `q` is
    /// `[.., m, min(m, n)]`).
    qr => "Qr"(x);
}
