//! `ParseSequenceExampleV2` (TensorFlow's definition and shape function): what
//! `tf.io.parse_sequence_example` and `tf.io.parse_single_sequence_example` build.

use ferroflow_core::proto::attr_value::Value as AV;
use ferroflow_core::{shape_proto_dims, NodeAttrs, Status};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

fn shapes(c: &ShapeCtx, k: &str) -> Vec<Dims> {
    match c.node.attr_value(k).ok().and_then(|v| v.value.as_ref()) {
        Some(AV::List(l)) => l.shape.iter().map(shape_proto_dims).collect(),
        _ => vec![],
    }
}

fn types(c: &ShapeCtx, k: &str) -> usize {
    c.node.attr_list_type(k).map_or(0, |v| v.len())
}

/// Context outputs as `ParseExampleV2`'s; sparse feature lists `[-1, r + 1]`, `[-1]`,
/// `[r + 1]`; dense ones `batch + [-1] + shape` with lengths `batch`; ragged ones `[-1]`,
/// outer splits `[batch + 1]`, inner `[-1]` (r: 1 for a vector input, 0 for a scalar).
fn shape(c: &ShapeCtx) -> R {
    let batch = c.input(0);
    let r = match &batch {
        Some(b) if b.is_empty() => 1,
        Some(_) => 2,
        None => -1,
    };
    let plus = |d: Option<Vec<i64>>, extra: &[i64]| match (&batch, d) {
        (Some(b), Some(d)) => Some(b.iter().copied().chain(extra.iter().copied()).chain(d).collect()),
        _ => None,
    };
    let splits = match &batch {
        Some(b) if b.is_empty() => Some(vec![-1]),
        Some(b) => Some(vec![b[0].checked_add(1).filter(|&n| n > 0).unwrap_or(-1)]),
        None => Some(vec![-1]),
    };
    let ns = c.node.attr_int("Ncontext_sparse").unwrap_or(0).max(0) as usize;
    let mut out = vec![Some(vec![-1, r]); ns];
    out.extend(vec![Some(vec![-1]); ns]);
    out.extend(vec![Some(vec![r]); ns]);
    out.extend(shapes(c, "context_dense_shapes").into_iter().map(|d| plus(d, &[])));
    let nr = types(c, "context_ragged_value_types");
    out.extend(vec![Some(vec![-1]); nr]);
    out.extend(vec![splits.clone(); nr]);
    let ns = c.node.attr_int("Nfeature_list_sparse").unwrap_or(0).max(0) as usize;
    let r = if r < 0 { -1 } else { r + 1 };
    out.extend(vec![Some(vec![-1, r]); ns]);
    out.extend(vec![Some(vec![-1]); ns]);
    out.extend(vec![Some(vec![r]); ns]);
    let dense = shapes(c, "feature_list_dense_shapes");
    let nd = dense.len();
    out.extend(dense.into_iter().map(|d| plus(d, &[-1])));
    out.extend(vec![batch.clone(); nd]);
    let nr = types(c, "feature_list_ragged_value_types");
    out.extend(vec![Some(vec![-1]); nr]);
    out.extend(vec![if batch.as_ref().is_some_and(|b| b.is_empty()) { Some(vec![1]) } else { splits }; nr]);
    out.extend(vec![Some(vec![-1]); nr]);
    Ok(out)
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("ParseSequenceExampleV2")
            .input("serialized: string")
            .input("debug_name: string")
            .input("context_sparse_keys: string")
            .input("context_dense_keys: string")
            .input("context_ragged_keys: string")
            .input("feature_list_sparse_keys: string")
            .input("feature_list_dense_keys: string")
            .input("feature_list_ragged_keys: string")
            .input("feature_list_dense_missing_assumed_empty: bool")
            .input("context_dense_defaults: Tcontext_dense")
            .output("context_sparse_indices: Ncontext_sparse * int64")
            .output("context_sparse_values: context_sparse_types")
            .output("context_sparse_shapes: Ncontext_sparse * int64")
            .output("context_dense_values: Tcontext_dense")
            .output("context_ragged_values: context_ragged_value_types")
            .output("context_ragged_row_splits: context_ragged_split_types")
            .output("feature_list_sparse_indices: Nfeature_list_sparse * int64")
            .output("feature_list_sparse_values: feature_list_sparse_types")
            .output("feature_list_sparse_shapes: Nfeature_list_sparse * int64")
            .output("feature_list_dense_values: feature_list_dense_types")
            .output("feature_list_dense_lengths: Nfeature_list_dense * int64")
            .output("feature_list_ragged_values: feature_list_ragged_value_types")
            .output("feature_list_ragged_outer_splits: feature_list_ragged_split_types")
            .output("feature_list_ragged_inner_splits: feature_list_ragged_split_types")
            .attr("Ncontext_sparse: int >= 0 = 0")
            .attr("Tcontext_dense: list(type) >= 0 = []")
            .attr("context_sparse_types: list(type) >= 0 = []")
            .attr("context_ragged_value_types: list(type) >= 0 = []")
            .attr("context_ragged_split_types: list(type) >= 0 = []")
            .attr("context_dense_shapes: list(shape) >= 0 = []")
            .attr("Nfeature_list_sparse: int >= 0 = 0")
            .attr("Nfeature_list_dense: int >= 0 = 0")
            .attr("feature_list_dense_types: list(type) >= 0 = []")
            .attr("feature_list_sparse_types: list(type) >= 0 = []")
            .attr("feature_list_ragged_value_types: list(type) >= 0 = []")
            .attr("feature_list_ragged_split_types: list(type) >= 0 = []")
            .attr("feature_list_dense_shapes: list(shape) >= 0 = []")
            .shape_fn(shape)
            .build(),
    );
}
