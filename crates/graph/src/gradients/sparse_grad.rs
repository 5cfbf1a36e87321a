//! Gradients of the segment reductions, as TensorFlow's `math_grad.py` builds them:
//! `Segment{Sum,Mean,Max,Min,Prod}`, `UnsortedSegment{Sum,Max,Min,Prod}` and
//! `SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]` (through the
//! `SparseSegment{Sum,Mean,SqrtN}Grad` ops, the dense form TensorFlow emits by default;
//! with `sparse_gradient` TensorFlow builds an IndexedSlices, which ferroflow has not, so
//! the dense form serves both).

use ferroflow_core::{DataType, NodeAttrs};

use super::array_grad::{grad0, input, ints, shape_of, Grads};
use crate::gradients::GradOp;
use crate::ops::{self, SliceMasks};
use crate::scope::{Output, Scope};

fn output0(op: &GradOp) -> Result<&Output, ferroflow_core::Status> {
    op.outputs.first().ok_or_else(|| ferroflow_core::Status::internal(format!("{} has no output", op.node.name)))
}

/// `SegmentSum`: each input row takes its segment's gradient.
pub(super) fn segment_sum_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    Ok(vec![Some(ops::gather(s, grad0(op, g)?, input(op, 1)?.clone())), None])
}

/// `SegmentMean`: the segment's gradient divided by the segment's row count.
pub(super) fn segment_mean_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (data, ids) = (input(op, 0)?.clone(), input(op, 1)?.clone());
    let counts = ops::segment_sum(s, ops::ones_like(s, data), ids.clone());
    let scaled = ops::real_div(s, grad0(op, g)?, counts);
    Ok(vec![Some(ops::gather(s, scaled, ids)), None])
}

/// `SegmentMax` / `SegmentMin`: the gradient shared evenly by the rows equal to the result.
pub(super) fn segment_min_max_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (data, ids) = (input(op, 0)?.clone(), input(op, 1)?.clone());
    let dtype = op.node.attr_type("T")?;
    let chosen = ops::gather(s, output0(op)?.clone(), ids.clone());
    let is_selected = ops::equal(s, data.clone(), chosen);
    let num = ops::segment_sum(s, ops::cast(s, is_selected.clone(), dtype), ids.clone());
    let weighted = ops::real_div(s, grad0(op, g)?, num);
    let back = ops::gather(s, weighted, ids);
    Ok(vec![Some(ops::select_v2(s, is_selected, back, ops::zeros_like(s, data))), None])
}

/// The product's partial derivatives (TensorFlow's three cases: no zero in the segment
/// divides the product by the element, one zero takes the product of the others, more
/// zeros give 0), times the gathered gradient. `reduce(data)` is the segment product of
/// `data`, `count(data)` the segment sum, `gather(x)` takes each row's segment of `x`.
fn prod_grad(
    s: &Scope,
    data: Output,
    y: Output,
    grad: Output,
    reduce: impl Fn(Output) -> Output,
    count: impl Fn(Output) -> Output,
    gather: impl Fn(Output) -> Output,
) -> Output {
    let is_zero = ops::equal(s, data.clone(), ops::zeros_like(s, data.clone()));
    let num_zeros = count(ops::cast(s, is_zero.clone(), DataType::Int32));
    let several = ops::greater(s, num_zeros.clone(), ops::ones_like(s, num_zeros));
    let grad = ops::select_v2(s, several, ops::zeros_like(s, grad.clone()), grad);
    let non_zero = ops::select_v2(s, is_zero.clone(), ops::ones_like(s, data.clone()), data);
    let non_zero_prod = reduce(non_zero.clone());
    let by_el = ops::real_div(s, gather(y), non_zero);
    let partial = ops::select_v2(s, is_zero, gather(non_zero_prod), by_el);
    ops::mul(s, gather(grad), partial)
}

/// `SegmentProd`.
pub(super) fn segment_prod_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (data, ids) = (input(op, 0)?.clone(), input(op, 1)?.clone());
    let dx = prod_grad(
        s,
        data,
        output0(op)?.clone(),
        grad0(op, g)?,
        |x| ops::segment_reduce(s, "SegmentProd", x, ids.clone()),
        |x| ops::segment_sum(s, x, ids.clone()),
        |x| ops::gather(s, x, ids.clone()),
    );
    Ok(vec![Some(dx), None])
}

/// The ids with negative ones replaced by 0, and whether each id is non-negative, shaped to
/// broadcast against rows gathered by the ids (`rank(rows)` dims).
fn clip_ids(s: &Scope, ids: &Output, rows_like: &Output) -> (Output, Output) {
    let clipped = ops::maximum(s, ids.clone(), ops::zeros_like(s, ids.clone()));
    let positive = ops::greater_equal(s, ids.clone(), ops::zeros_like(s, ids.clone()));
    let ids_shape = shape_of(s, ids, DataType::Int32);
    let extra = ops::sub(s, ops::rank(s, rows_like.clone()), ops::rank(s, ids.clone()));
    let ones = ops::fill(s, ops::reshape(s, extra, ints(s, &[1])), ops::constant(s, 1i32));
    let b_shape = ops::concat(s, vec![ids_shape, ones], ops::constant(s, 0i32));
    (clipped, ops::reshape(s, positive, b_shape))
}

/// `rows[ids]` with the rows of negative ids 0 (TensorFlow's `_GatherDropNegatives`).
fn gather_drop_negatives(s: &Scope, rows: Output, clipped: &Output, positive: &Output) -> Output {
    let gathered = ops::gather(s, rows, clipped.clone());
    let zeros = ops::zeros_like(s, gathered.clone());
    ops::select_v2(s, positive.clone(), gathered, zeros)
}

/// `UnsortedSegmentSum`: each row takes its segment's gradient, rows of negative ids none.
pub(super) fn unsorted_segment_sum_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (data, ids) = (input(op, 0)?, input(op, 1)?);
    let (clipped, positive) = clip_ids(s, ids, data);
    Ok(vec![Some(gather_drop_negatives(s, grad0(op, g)?, &clipped, &positive)), None, None])
}

/// `UnsortedSegmentMax` / `UnsortedSegmentMin`.
pub(super) fn unsorted_segment_min_max_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (data, ids, num) = (input(op, 0)?.clone(), input(op, 1)?.clone(), input(op, 2)?.clone());
    let dtype = op.node.attr_type("T")?;
    let (clipped, positive) = clip_ids(s, &ids, &data);
    let chosen = gather_drop_negatives(s, output0(op)?.clone(), &clipped, &positive);
    let is_selected = ops::logical_and(s, ops::equal(s, data.clone(), chosen), positive.clone());
    let num_selected = ops::unsorted_segment_sum(s, ops::cast(s, is_selected.clone(), dtype), ids, num);
    let weighted = ops::real_div(s, grad0(op, g)?, num_selected);
    let back = gather_drop_negatives(s, weighted, &clipped, &positive);
    Ok(vec![Some(ops::select_v2(s, is_selected, back.clone(), ops::zeros_like(s, back))), None, None])
}

/// `UnsortedSegmentProd`.
pub(super) fn unsorted_segment_prod_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (data, ids, num) = (input(op, 0)?.clone(), input(op, 1)?.clone(), input(op, 2)?.clone());
    let (clipped, positive) = clip_ids(s, &ids, &data);
    let dx = prod_grad(
        s,
        data,
        output0(op)?.clone(),
        grad0(op, g)?,
        |x| ops::unsorted_segment_reduce(s, "UnsortedSegmentProd", x, ids.clone(), num.clone()),
        |x| ops::unsorted_segment_sum(s, x, ids.clone(), num.clone()),
        |x| gather_drop_negatives(s, x, &clipped, &positive),
    );
    Ok(vec![Some(dx), None, None])
}

/// `SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]`: the op's `...Grad` op with
/// `output_dim0 = shape(data)[0]`.
pub(super) fn sparse_segment_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let kind = ["Sum", "Mean", "SqrtN"]
        .into_iter()
        .find(|k| op.node.op.starts_with(&format!("SparseSegment{k}")))
        .ok_or_else(|| ferroflow_core::Status::internal(format!("not a sparse segment op: {}", op.node.op)))?;
    let (data, indices, seg) = (input(op, 0)?, input(op, 1)?.clone(), input(op, 2)?.clone());
    let shape = shape_of(s, data, DataType::Int32);
    let m = SliceMasks { shrink_axis: 1, ..Default::default() };
    let dim0 = ops::strided_slice(s, shape, ints(s, &[0]), ints(s, &[1]), ints(s, &[1]), m);
    let dx = ops::sparse_segment_grad(s, kind, grad0(op, g)?, indices, seg, dim0);
    let mut out = vec![Some(dx), None, None];
    if op.inputs.len() == 4 {
        out.push(None);
    }
    Ok(out)
}

/// Column `c` of a 2-D int64 indices matrix, as a vector.
fn column(s: &Scope, indices: &Output, c: i32) -> Output {
    let m = SliceMasks { begin: 1, end: 1, shrink_axis: 2, ..Default::default() };
    ops::strided_slice(s, indices.clone(), ints(s, &[0, c]), ints(s, &[0, c + 1]), ints(s, &[1, 1]), m)
}

/// `SparseFillEmptyRows`: through `SparseFillEmptyRowsGrad` on the op's reverse index map.
pub(super) fn sparse_fill_empty_rows_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let map = op.outputs.get(3).ok_or_else(|| ferroflow_core::Status::internal("SparseFillEmptyRows: 4 outputs"))?;
    let gv = g.get(1).ok_or_else(|| ferroflow_core::Status::internal("SparseFillEmptyRows: no values gradient"))?;
    let (dv, dd) = ops::sparse_fill_empty_rows_grad(s, map.clone(), gv.clone());
    Ok(vec![None, Some(dv), None, Some(dd)])
}

/// `SparseReorder`: the values' gradient put back in the input order (the inverse of the
/// reorder's permutation, found by reordering the entry numbers).
pub(super) fn sparse_reorder_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (indices, shape) = (input(op, 0)?.clone(), input(op, 2)?.clone());
    let gv = g.get(1).ok_or_else(|| ferroflow_core::Status::internal("SparseReorder: no values gradient"))?;
    let n = shape_of(s, &indices, DataType::Int64);
    let m = SliceMasks { shrink_axis: 1, ..Default::default() };
    let n = ops::strided_slice(s, n, ints(s, &[0]), ints(s, &[1]), ints(s, &[1]), m);
    let entries = ops::range(s, ops::constant(s, 0i64), n, ops::constant(s, 1i64));
    let (_, order) = ops::sparse_reorder(s, indices, entries, shape);
    let inverse = ops::invert_permutation(s, order);
    Ok(vec![None, Some(ops::gather(s, gv.clone(), inverse)), None])
}

/// `SparseTensorDenseMatMul`: `b`'s gradient is `op(A)^T @ grad` (another sparse matmul),
/// the values' gradient the dot product of each entry's gradient row and `op(B)` row.
pub(super) fn sparse_dense_matmul_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (ai, av, ashape, b) =
        (input(op, 0)?.clone(), input(op, 1)?.clone(), input(op, 2)?.clone(), input(op, 3)?.clone());
    let adj_a = op.node.attr_bool("adjoint_a").unwrap_or(false);
    let adj_b = op.node.attr_bool("adjoint_b").unwrap_or(false);
    let grad = grad0(op, g)?;
    let mut db = ops::sparse_tensor_dense_mat_mul(s, ai.clone(), av, ashape, grad.clone(), !adj_a, false);
    if adj_b {
        db = ops::transpose(s, db, ints(s, &[1, 0]));
    }
    let (rows, cols) = (column(s, &ai, 0), column(s, &ai, 1));
    let (r, c) = if adj_a { (cols, rows) } else { (rows, cols) };
    let b_rows = if adj_b { ops::transpose(s, b, ints(s, &[1, 0])) } else { b };
    let parts_a = ops::gather(s, grad, r);
    let parts_b = ops::gather(s, b_rows, c);
    let dv = ops::sum(s, ops::mul(s, parts_a, parts_b), ops::constant(s, -1i32), false);
    Ok(vec![None, Some(dv), None, Some(db)])
}

/// This file's entries of the gradient table (`table.rs` calls it: one line there).
pub(super) fn register(r: &mut super::GradRegistry) {
    r.add("SegmentSum", segment_sum_grad);
    r.add("SegmentMean", segment_mean_grad);
    r.add("SegmentMax", segment_min_max_grad);
    r.add("SegmentMin", segment_min_max_grad);
    r.add("SegmentProd", segment_prod_grad);
    r.add("UnsortedSegmentSum", unsorted_segment_sum_grad);
    r.add("UnsortedSegmentMax", unsorted_segment_min_max_grad);
    r.add("UnsortedSegmentMin", unsorted_segment_min_max_grad);
    r.add("UnsortedSegmentProd", unsorted_segment_prod_grad);
    for op in [
        "SparseSegmentSum",
        "SparseSegmentMean",
        "SparseSegmentSqrtN",
        "SparseSegmentSumWithNumSegments",
        "SparseSegmentMeanWithNumSegments",
        "SparseSegmentSqrtNWithNumSegments",
    ] {
        r.add(op, sparse_segment_grad);
    }
    r.add("SparseFillEmptyRows", sparse_fill_empty_rows_grad);
    r.add("SparseReorder", sparse_reorder_grad);
    r.add("SparseTensorDenseMatMul", sparse_dense_matmul_grad);
    r.no_gradient(&[
        "SetSize",
        "DenseToDenseSetOperation",
        "DenseToSparseSetOperation",
        "SparseToSparseSetOperation",
        "EditDistance",
        "SerializeSparse",
        "SerializeTensor",
        "ParseTensor",
        "DenseCountSparseOutput",
        "SparseCountSparseOutput",
        "RaggedCountSparseOutput",
        "SparseAddGrad",
        "SparseSliceGrad",
        "SerializeManySparse",
        "DeserializeSparse",
        "DeserializeManySparse",
        "SparseSegmentSumGrad",
        "SparseSegmentMeanGrad",
        "SparseSegmentSqrtNGrad",
        "SparseSegmentSumGradV2",
        "SparseSegmentMeanGradV2",
        "SparseSegmentSqrtNGradV2",
        "SparseReshape",
        "SparseFillEmptyRowsGrad",
        "Bincount",
        "DenseBincount",
        "SparseBincount",
        "StringToHashBucket",
        "StringToHashBucketFast",
        "StringToHashBucketStrong",
        "StringSplit",
        "StringSplitV2",
        "StringLower",
        "StringUpper",
        "StringStrip",
        "Substr",
        "StringToNumber",
        "AsString",
        "EncodeBase64",
        "DecodeBase64",
        "RegexReplace",
        "StaticRegexReplace",
        "ReduceJoin",
        "StringNGrams",
        "UnicodeDecode",
        "UnicodeDecodeWithOffsets",
        "UnicodeEncode",
        "UnicodeTranscode",
        "StringFormat",
        "PrintV2",
        "Fingerprint",
        "SparseReduceMax",
    ]);
}
