//! `embedding_lookup`: rows of an embedding table by id, the table whole or split into
//! parts (`tf.nn.embedding_lookup` of TensorFlow 2, whose partitioning is "div": the parts
//! hold consecutive blocks of rows, the first `rows % parts` one row more, as
//! [`fixed_size_partitions`] makes them, so the table is the concatenation of its parts).
//!
//! The graph is TensorFlow's: a `ResourceGather` (or `Gather` of a reference variable)
//! colocated with each part; with several parts, the ids are split by part with
//! `DynamicPartition` and the rows joined in id order with `ParallelDynamicStitch`. The
//! gradient reaching each part is an IndexedSlices ([`crate::indexed_slices`]), so the
//! optimizers update only the rows a batch used.

use ferroflow_core::{attr, DataType, Status, Tensor};

use crate::ops;
use crate::partitioned::{fixed_size_partitions, PartitionedVariable};
use crate::scope::{Output, Scope};
use crate::variable::Variable;

/// Rows `ids` of the table `params` (one variable, or the parts of one split along its
/// first dimension): the result has shape `ids.shape + params.shape[1:]`.
///
/// ```
/// use ferroflow_graph::{embedding_lookup, ops, Scope, Tensor, Variable};
/// let s = Scope::new_root();
/// let table = Variable::new(&s, "emb", ops::constant(&s, Tensor::new(vec![3, 2], vec![0f32; 6]).unwrap()));
/// let rows = embedding_lookup(&s, &[table], ops::constant(&s, vec![2i64, 0])).unwrap();
/// assert_eq!(s.graph().node(&rows.node).unwrap().def.op, "ResourceGather");
/// ```
pub fn embedding_lookup(s: &Scope, params: &[Variable], ids: Output) -> Result<Output, Status> {
    let Some(first) = params.first() else {
        return Err(Status::invalid_argument("embedding_lookup: no params (need at least one variable)"));
    };
    if !matches!(ids.dtype, DataType::Int32 | DataType::Int64) {
        return Err(Status::invalid_argument(format!(
            "embedding_lookup: ids {ids} are {}, expected int32 or int64",
            ids.dtype
        )));
    }
    let ls = s.sub("embedding_lookup");
    if params.len() == 1 {
        let out = gather(&ls, first, ids);
        s.status()?;
        return Ok(out);
    }
    let rows = part_rows(params)?;
    let total: usize = rows.iter().sum();
    let want = fixed_size_partitions(total, params.len());
    if rows != want {
        return Err(Status::invalid_argument(format!(
            "embedding_lookup: parts of {rows:?} rows do not split {total} rows the way TensorFlow's div \
             partitioning does ({want:?})"
        )));
    }
    let n = params.len();
    let per = (total / n) as i64;
    let extras = (total % n) as i64;
    let c = |v: i64| match ids.dtype {
        DataType::Int32 => ops::constant(&ls, Tensor::scalar(v as i32)),
        _ => ops::constant(&ls, Tensor::scalar(v)),
    };
    let flat = ops::reshape(&ls, ids.clone(), ops::constant(&ls, Tensor::vec(vec![-1i32])));
    // Part of each id, and its row within the part.
    let above = ops::sub(&ls, flat.clone(), c(extras));
    let part =
        ops::maximum(&ls, ops::floor_div(&ls, flat.clone(), c(per + 1)), ops::floor_div(&ls, above.clone(), c(per)));
    let in_big = ops::less(&ls, part.clone(), c(extras));
    let row =
        ops::select(&ls, in_big, ops::floor_mod(&ls, flat.clone(), c(per + 1)), ops::floor_mod(&ls, above, c(per)));
    let part = ops::cast(&ls, part, DataType::Int32);
    let positions =
        ops::range(&ls, ops::constant(&ls, 0i32), ops::size(&ls, flat, DataType::Int32), ops::constant(&ls, 1i32));
    let split = |x: Output| {
        let op =
            ls.op("DynamicPartition").input(x).input(part.clone()).attr("num_partitions", attr::int(n as i64)).build();
        (0..n).map(|i| op.output(i)).collect::<Vec<_>>()
    };
    let (rows_by_part, positions_by_part) = (split(row), split(positions));
    let looked_up: Vec<Output> = params.iter().zip(rows_by_part).map(|(p, r)| gather(&ls, p, r)).collect();
    let joined = ls.op("ParallelDynamicStitch").input_list(positions_by_part).input_list(looked_up).build().output(0);
    // Back to ids' shape (+ the rows' shape).
    let row_shape: Vec<i32> = match first.shape() {
        Some(d) if !d.is_empty() && d[1..].iter().all(|&x| x >= 0) => d[1..].iter().map(|&x| x as i32).collect(),
        _ => {
            return Err(Status::invalid_argument(format!(
                "embedding_lookup: the shape of {} is not known",
                first.name()
            )))
        }
    };
    let static_ids = ls.graph().shape_of(&ids).filter(|d| d.iter().filter(|&&x| x < 0).count() <= 1);
    let shape = match static_ids {
        // Known up to one dimension: a constant shape, so the result's shape is inferred.
        Some(d) => {
            let mut v: Vec<i32> = d.iter().map(|&x| x.max(-1) as i32).collect();
            v.extend_from_slice(&row_shape);
            ops::constant(&ls, Tensor::vec(v))
        }
        None => {
            let ids_shape = ops::shape(&ls, ids, DataType::Int32);
            ops::concat(&ls, vec![ids_shape, ops::constant(&ls, Tensor::vec(row_shape))], ops::constant(&ls, 0i32))
        }
    };
    let out = ops::reshape(&ls, joined, shape);
    s.status()?;
    Ok(out)
}

/// [`embedding_lookup`] of a [`PartitionedVariable`] split along its first dimension.
pub fn embedding_lookup_partitioned(s: &Scope, table: &PartitionedVariable, ids: Output) -> Result<Output, Status> {
    if table.axis() != 0 {
        return Err(Status::invalid_argument(format!(
            "embedding_lookup: {} is split along axis {}, expected 0 (rows)",
            table.name(),
            table.axis()
        )));
    }
    embedding_lookup(s, table.parts(), ids)
}

/// Rows of each part (their first dimension, which must be known).
fn part_rows(params: &[Variable]) -> Result<Vec<usize>, Status> {
    params
        .iter()
        .map(|p| match p.shape() {
            Some(d) if !d.is_empty() && d[0] >= 0 => Ok(d[0] as usize),
            _ => Err(Status::invalid_argument(format!(
                "embedding_lookup: the number of rows of part {} is not known",
                p.name()
            ))),
        })
        .collect()
}

/// The rows `ids` of one variable, read beside it.
fn gather(s: &Scope, v: &Variable, ids: Output) -> Output {
    let vs = s.colocate_with(&v.handle());
    if v.is_resource() {
        vs.op("ResourceGather")
            .input(v.handle())
            .input(ids)
            .attr("dtype", attr::ty(v.dtype()))
            .attr("batch_dims", attr::int(0))
            .attr("validate_indices", attr::bool(true))
            .build()
            .output(0)
    } else {
        ops::gather(&vs, v.handle(), ids)
    }
}
