//! `EditDistance` (`tf.edit_distance`): the Levenshtein distance between the sequences (last
//! dimension) of a hypothesis and a truth sparse tensor, `normalize`d by the truth's length;
//! the output's shape is the larger of the two leading shapes. Not differentiable, as in
//! TensorFlow.

use ferroflow_core::Status;

use crate::op_def::op;
use crate::ops::array::const_ints;
use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};

/// The leading dims' maxima when both dense shapes are constant; else rank `rank - 1` when
/// one of their lengths is known.
fn edit_distance_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    if let (Some(h), Some(t)) = (const_ints(c, 2), const_ints(c, 5)) {
        if h.len() != t.len() {
            return Err(c.error(format!("Expected truth and hypothesis to have matching ranks: {h:?} vs {t:?}")));
        }
        if t.len() < 2 {
            return Err(c.error(format!("Input SparseTensors must have rank at least 2, got {}", t.len())));
        }
        let n = t.len() - 1;
        return Ok(vec![Some(h[..n].iter().zip(&t[..n]).map(|(&a, &b)| a.max(b)).collect())]);
    }
    let rank = [2, 5].iter().find_map(|&i| c.input(i).and_then(|d| d.first().copied()).filter(|&r| r >= 1));
    Ok(vec![rank.map(|r| vec![-1; r as usize - 1])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("EditDistance")
            .input("hypothesis_indices: int64")
            .input("hypothesis_values: T")
            .input("hypothesis_shape: int64")
            .input("truth_indices: int64")
            .input("truth_values: T")
            .input("truth_shape: int64")
            .output("output: float")
            .attr("normalize: bool = true")
            .attr("T: type")
            .shape_fn(edit_distance_shape)
            .build(),
    );
}
