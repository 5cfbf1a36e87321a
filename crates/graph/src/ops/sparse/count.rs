//! Counts as sparse tensors (`tf.sparse.bincount`, tf_keras `CategoryEncoding(sparse=True)`):
//! `DenseCountSparseOutput`, `SparseCountSparseOutput`, `RaggedCountSparseOutput`.

use ferroflow_core::Status;

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

/// Rank 1 or 2 output: known when the (dense) input's rank is.
fn dense_count_shape(c: &ShapeCtx) -> R {
    let rank = c.input(0).map_or(-1, |d| d.len() as i64);
    Ok(vec![Some(vec![-1, rank]), Some(vec![-1]), Some(vec![rank])])
}

fn sparse_count_shape(c: &ShapeCtx) -> R {
    let rank = c.input(2).and_then(|d| d.first().copied()).unwrap_or(-1);
    Ok(vec![Some(vec![-1, rank]), Some(vec![-1]), Some(vec![rank])])
}

fn ragged_count_shape(_: &ShapeCtx) -> R {
    Ok(vec![Some(vec![-1, 2]), Some(vec![-1]), Some(vec![2])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    let common = |b: crate::op_def::OpDefBuilder| {
        b.output("output_indices: int64")
            .output("output_values: output_type")
            .output("output_dense_shape: int64")
            .attr("T: {int32, int64}")
            .attr("minlength: int >= -1 = -1")
            .attr("maxlength: int >= -1 = -1")
            .attr("binary_output: bool")
            .attr("output_type: {int32, int64, float, double}")
    };
    r.add(
        common(op("DenseCountSparseOutput").input("values: T").input("weights: output_type"))
            .shape_fn(dense_count_shape)
            .build(),
    );
    r.add(
        common(
            op("SparseCountSparseOutput")
                .input("indices: int64")
                .input("values: T")
                .input("dense_shape: int64")
                .input("weights: output_type"),
        )
        .shape_fn(sparse_count_shape)
        .build(),
    );
    r.add(
        common(op("RaggedCountSparseOutput").input("splits: int64").input("values: T").input("weights: output_type"))
            .shape_fn(ragged_count_shape)
            .build(),
    );
}
