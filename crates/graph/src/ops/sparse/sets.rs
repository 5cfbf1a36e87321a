//! The `tf.sets` ops: `SetSize` and `DenseToDenseSetOperation`, `DenseToSparseSetOperation`,
//! `SparseToSparseSetOperation` (`set_operation` one of `a-b`, `b-a`, `intersection`,
//! `union`, any case). Not differentiable, as in TensorFlow.

use ferroflow_core::Status;

use crate::op_def::{op, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

const SET_TYPES: &str = "T: {int8, int16, int32, int64, uint8, uint16, string}";

/// The rank of the sparse tensor whose dense shape is input `i`, when its length is known.
fn sparse_rank(c: &ShapeCtx, i: usize) -> Option<i64> {
    c.input(i).and_then(|d| d.first().copied()).filter(|&r| r >= 0)
}

/// A sparse result of rank `rank` (-1 unknown).
fn result(rank: i64) -> R {
    Ok(vec![Some(vec![-1, rank]), Some(vec![-1]), Some(vec![rank])])
}

fn at_least_2(c: &ShapeCtx, which: usize, rank: i64) -> Result<(), Status> {
    if rank < 2 {
        return Err(c.error(format!("Input {which}, expected rank >= 2, got {rank}.")));
    }
    Ok(())
}

fn dense_dense_shape(c: &ShapeCtx) -> R {
    let (a, b) = (c.input(0), c.input(1));
    for (i, d) in [(0, &a), (1, &b)] {
        if let Some(d) = d {
            at_least_2(c, i, d.len() as i64)?;
        }
    }
    if let (Some(a), Some(b)) = (&a, &b) {
        if a.len() != b.len() {
            return Err(c.error(format!("Shape must be rank {} but is rank {}", a.len(), b.len())));
        }
        let n = a.len() - 1;
        if a[..n].iter().zip(&b[..n]).any(|(&x, &y)| x >= 0 && y >= 0 && x != y) {
            return Err(c.error(format!("Dimensions of inputs must match in all but the last: {a:?} vs {b:?}")));
        }
    }
    result(a.or(b).map_or(-1, |d| d.len() as i64))
}

fn dense_sparse_shape(c: &ShapeCtx) -> R {
    let b = sparse_rank(c, 3);
    let a = c.input(0).map(|d| d.len() as i64);
    if let Some(a) = a {
        at_least_2(c, 0, a)?;
        if b.is_some_and(|b| b != a) {
            return Err(c.error(format!("Ranks of inputs must match: {a} vs {}", b.unwrap_or(-1))));
        }
    }
    result(a.or(b).unwrap_or(-1))
}

fn sparse_sparse_shape(c: &ShapeCtx) -> R {
    let (a, b) = (sparse_rank(c, 2), sparse_rank(c, 5));
    if let Some(a) = a {
        at_least_2(c, 0, a)?;
        if b.is_some_and(|b| b != a) {
            return Err(c.error(format!("Ranks of inputs must match: {a} vs {}", b.unwrap_or(-1))));
        }
    } else if let Some(b) = b {
        at_least_2(c, 1, b)?;
    }
    result(a.or(b).unwrap_or(-1))
}

fn with_attrs_and_outputs(b: OpDefBuilder) -> OpDefBuilder {
    b.output("result_indices: int64")
        .output("result_values: T")
        .output("result_shape: int64")
        .attr("set_operation: string")
        .attr("validate_indices: bool = true")
        .attr(SET_TYPES)
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("SetSize")
            .input("set_indices: int64")
            .input("set_values: T")
            .input("set_shape: int64")
            .attr("validate_indices: bool = true")
            .attr(SET_TYPES)
            .output("size: int32")
            .shape_fn(|_| Ok(vec![None]))
            .build(),
    );
    r.add(
        with_attrs_and_outputs(op("DenseToDenseSetOperation").input("set1: T").input("set2: T"))
            .shape_fn(dense_dense_shape)
            .build(),
    );
    r.add(
        with_attrs_and_outputs(
            op("DenseToSparseSetOperation")
                .input("set1: T")
                .input("set2_indices: int64")
                .input("set2_values: T")
                .input("set2_shape: int64"),
        )
        .shape_fn(dense_sparse_shape)
        .build(),
    );
    r.add(
        with_attrs_and_outputs(
            op("SparseToSparseSetOperation")
                .input("set1_indices: int64")
                .input("set1_values: T")
                .input("set1_shape: int64")
                .input("set2_indices: int64")
                .input("set2_values: T")
                .input("set2_shape: int64"),
        )
        .shape_fn(sparse_sparse_shape)
        .build(),
    );
}
