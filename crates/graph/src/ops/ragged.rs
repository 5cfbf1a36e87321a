//! `RaggedTensorToTensor` (TensorFlow's definition): a ragged tensor, given by its flat
//! values and one row partition per ragged dimension (`ROW_SPLITS`, or `FIRST_DIM_SIZE`
//! then `VALUE_ROWIDS`), as a dense tensor padded with a default value and cut to `shape`.

use ferroflow_core::{attr, NodeAttrs, Status, Tensor};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// The integer values of constant input `i`.
fn const_ints(c: &ShapeCtx, i: usize) -> Option<Vec<i64>> {
    let t: &Tensor = c.const_input(i)?;
    t.to_f64_vec().ok().map(|v| v.into_iter().map(|x| x as i64).collect())
}

fn to_tensor_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let types = c.node.attr_list_string("row_partition_types")?;
    let ragged_rank = types.iter().filter(|t| t.as_str() != "FIRST_DIM_SIZE").count();
    let values = c.input(1);
    let mut out = match (const_ints(c, 0), c.input(0)) {
        // A scalar shape (-1) leaves the rank unknown.
        (Some(v), Some(d)) if !d.is_empty() => Some(v),
        (None, Some(d)) if d.len() == 1 && d[0] >= 0 => Some(vec![-1; d[0] as usize]),
        _ => values.as_ref().map(|v| vec![-1; ragged_rank + v.len()]),
    };
    if let (Some(o), Some(v)) = (out.as_mut(), values.as_ref()) {
        if o.len() != ragged_rank + v.len() {
            return Err(c.error(format!(
                "rt_input.shape and shape={o:?} are incompatible: rt_input.rank = {} but shape.rank = {}",
                ragged_rank + v.len(),
                o.len()
            )));
        }
        for (i, &vd) in v.iter().enumerate().skip(1) {
            let od = &mut o[ragged_rank + i];
            if vd >= 0 && *od >= 0 && *od != vd {
                return Err(c.error(format!(
                    "rt_input.shape and shape are incompatible: rt_input.shape[{}] = {vd} but shape[{}] = {od}",
                    ragged_rank + i,
                    ragged_rank + i
                )));
            }
            if vd >= 0 {
                *od = vd;
            }
        }
    }
    Ok(vec![out])
}

/// `RaggedTensorToSparse`: rank `1 + RAGGED_RANK + (values rank - 1)` when the values' rank
/// is known.
fn to_sparse_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let k = c.node.attr_int("RAGGED_RANK")?;
    let rank = c.input(k as usize).map_or(-1, |d| k + d.len() as i64);
    Ok(vec![Some(vec![-1, rank]), Some(vec![-1]), Some(vec![rank])])
}

/// `RaggedTensorFromVariant`: `output_ragged_rank` row-splits vectors, then the values.
fn from_variant_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let k = c.node.attr_int("output_ragged_rank")?.max(0) as usize;
    let mut out = vec![Some(vec![-1]); k];
    out.push(None);
    Ok(out)
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("RaggedTensorToVariant")
            .input("rt_nested_splits: RAGGED_RANK * Tsplits")
            .input("rt_dense_values: Tvalues")
            .output("encoded_ragged: variant")
            .attr("RAGGED_RANK: int >= 0")
            .attr("Tvalues: type")
            .attr("Tsplits: {int32, int64} = DT_INT64")
            .attr("batched_input: bool")
            .shape_fn(|c| {
                let batched = c.node.attr_bool("batched_input").unwrap_or(false);
                Ok(vec![Some(if batched { vec![-1] } else { vec![] })])
            })
            .build(),
    );
    r.add(
        op("RaggedTensorFromVariant")
            .input("encoded_ragged: variant")
            .output("output_nested_splits: output_ragged_rank * Tsplits")
            .output("output_dense_values: Tvalues")
            .attr("input_ragged_rank: int >= -1")
            .attr("output_ragged_rank: int >= 0")
            .attr("Tvalues: type")
            .attr("Tsplits: {int32, int64} = DT_INT64")
            .shape_fn(from_variant_shape)
            .build(),
    );
    r.add(
        op("RaggedTensorToSparse")
            .input("rt_nested_splits: RAGGED_RANK * Tsplits")
            .input("rt_dense_values: T")
            .output("sparse_indices: int64")
            .output("sparse_values: T")
            .output("sparse_dense_shape: int64")
            .attr("RAGGED_RANK: int >= 1")
            .attr("T: type")
            .attr("Tsplits: {int32, int64} = DT_INT64")
            .shape_fn(to_sparse_shape)
            .build(),
    );
    r.add(
        op("RaggedTensorToTensor")
            .attr("T: type")
            .attr("Tindex: {int64, int32}")
            .attr("Tshape: {int64, int32}")
            .attr("num_row_partition_tensors: int")
            .attr("row_partition_types: list(string)")
            .input("shape: Tshape")
            .input("values: T")
            .input("default_value: T")
            .input("row_partition_tensors: num_row_partition_tensors * Tindex")
            .output("result: T")
            .shape_fn(to_tensor_shape)
            .build(),
    );
}

/// `RaggedTensorToTensor`: the dense form of the ragged tensor with flat `values` and the
/// row `partitions` (one per entry of `types`: `"ROW_SPLITS"`, `"FIRST_DIM_SIZE"`,
/// `"VALUE_ROWIDS"`), padded with `default_value`; `shape` (int32/int64 vector, -1 for
/// sizes to compute, or the scalar -1) cuts it.
pub fn ragged_tensor_to_tensor(
    s: &Scope,
    shape: Output,
    values: Output,
    default_value: Output,
    partitions: Vec<Output>,
    types: &[&str],
) -> Output {
    let types: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    s.op("RaggedTensorToTensor")
        .input(shape)
        .input(values)
        .input(default_value)
        .input_list(partitions)
        .attr("row_partition_types", attr::list_string(&types))
        .build()
        .output(0)
}
