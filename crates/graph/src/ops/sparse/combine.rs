//! `SparseConcat`, `SparseSlice`, `SparseSplit`, `SparseAdd` (and the gradient ops `SparseSliceGrad`,
//! `SparseAddGrad`), `SparseSparseMaximum`/`Minimum`, `SparseReduceSum`, `SparseReduceMax` (and their `...Sparse` forms),
//! `SparseDenseCwise{Add,Mul,Div}`, `SparseSoftmax`, and the
//! feature-column crosses `SparseCross`, `SparseCrossV2`, `SparseCrossHashed` (their
//! `sparse_types`/`dense_types` are `list(type)` here: the op-def parser has no allowed set
//! for list attrs; the kernel accepts int64 and string only).

use ferroflow_core::{attr, NodeAttrs, Status};

use crate::op_def::{op, OpDefBuilder};
use crate::ops::array::{const_ints, want_rank};
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

const REAL: &str = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";
const NUMBER: &str = "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, \
                      bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}";

/// A sparse result: `[-1, rank]` indices, `[-1]` values, `[rank]` shape (rank from input
/// `shape_at`'s length).
fn sparse_result(c: &ShapeCtx, shape_at: usize) -> R {
    let r = c.input(shape_at).and_then(|d| d.first().copied()).unwrap_or(-1);
    Ok(vec![Some(vec![-1, r]), Some(vec![-1]), Some(vec![r])])
}

fn concat_shape(c: &ShapeCtx) -> R {
    let n = c.node.attr_int("N")?.max(1) as usize;
    sparse_result(c, 2 * n)
}

fn slice_shape(c: &ShapeCtx) -> R {
    sparse_result(c, 2)
}

/// `num_split` sparse results of the input's rank.
fn split_shape(c: &ShapeCtx) -> R {
    let n = c.node.attr_int("num_split")?.max(1) as usize;
    let r = c.input(3).and_then(|d| d.first().copied()).unwrap_or(-1);
    Ok([vec![Some(vec![-1, r]); n], vec![Some(vec![-1]); n], vec![Some(vec![r]); n]].concat())
}

fn add_shape(c: &ShapeCtx) -> R {
    want_rank(c, 6, 0)?;
    sparse_result(c, 2)
}

fn reduce_shape(c: &ShapeCtx) -> R {
    let keep = c.node.attr_bool("keep_dims").unwrap_or(false);
    let (Some(shape), Some(axes)) = (const_ints(c, 2), const_ints(c, 3)) else { return Ok(vec![None]) };
    let r = shape.len() as i64;
    let red = |k: i64| axes.iter().any(|&a| a == k || a + r == k);
    let out = (0..r).filter_map(|k| if red(k) { keep.then_some(1) } else { Some(shape[k as usize]) }).collect();
    Ok(vec![Some(out)])
}

fn cross_shape(_: &ShapeCtx) -> R {
    Ok(vec![Some(vec![-1, 2]), Some(vec![-1]), Some(vec![2])])
}

fn softmax_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 1)?;
    Ok(vec![c.input(1)])
}

/// `b` with the inputs of two sparse tensors: `a_indices`, `a_values`, `a_shape`, then the
/// same of `b`, values of type `T`.
fn two_sparse_inputs(b: OpDefBuilder) -> OpDefBuilder {
    ["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64", "b_values: T", "b_shape: int64"]
        .into_iter()
        .fold(b, OpDefBuilder::input)
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("SparseConcat")
            .input("indices: N * int64")
            .input("values: N * T")
            .input("shapes: N * int64")
            .output("output_indices: int64")
            .output("output_values: T")
            .output("output_shape: int64")
            .attr("concat_dim: int")
            .attr("N: int >= 2")
            .attr("T: type")
            .shape_fn(concat_shape)
            .build(),
    );
    r.add(
        op("SparseSlice")
            .input("indices: int64")
            .input("values: T")
            .input("shape: int64")
            .input("start: int64")
            .input("size: int64")
            .output("output_indices: int64")
            .output("output_values: T")
            .output("output_shape: int64")
            .attr("T: type")
            .shape_fn(slice_shape)
            .build(),
    );
    r.add(
        op("SparseSplit")
            .input("split_dim: int64")
            .input("indices: int64")
            .input("values: T")
            .input("shape: int64")
            .output("output_indices: num_split * int64")
            .output("output_values: num_split * T")
            .output("output_shape: num_split * int64")
            .attr("num_split: int >= 1")
            .attr("T: type")
            .shape_fn(split_shape)
            .build(),
    );
    r.add(
        two_sparse_inputs(op("SparseAdd"))
            .input("thresh: Treal")
            .output("sum_indices: int64")
            .output("sum_values: T")
            .output("sum_shape: int64")
            .attr(NUMBER)
            .attr("Treal: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}")
            .shape_fn(add_shape)
            .build(),
    );
    r.add(
        op("SparseAddGrad")
            .input("backprop_val_grad: T")
            .input("a_indices: int64")
            .input("b_indices: int64")
            .input("sum_indices: int64")
            .output("a_val_grad: T")
            .output("b_val_grad: T")
            .attr(NUMBER)
            .shape_fn(|c| {
                let rows = |i: usize| Some(vec![c.input(i).map_or(-1, |d| d.first().copied().unwrap_or(-1))]);
                Ok(vec![rows(1), rows(2)])
            })
            .build(),
    );
    r.add(
        op("SparseSliceGrad")
            .input("backprop_val_grad: T")
            .input("input_indices: int64")
            .input("input_start: int64")
            .input("output_indices: int64")
            .output("val_grad: T")
            .attr(NUMBER)
            .shape_fn(|c| Ok(vec![Some(vec![c.input(1).map_or(-1, |d| d.first().copied().unwrap_or(-1))])]))
            .build(),
    );
    for name in ["SparseSparseMaximum", "SparseSparseMinimum"] {
        r.add(
            two_sparse_inputs(op(name))
                .output("output_indices: int64")
                .output("output_values: T")
                .attr(REAL)
                .shape_fn(|c| {
                    Ok(vec![Some(vec![-1, c.input(0).and_then(|d| d.get(1).copied()).unwrap_or(-1)]), Some(vec![-1])])
                })
                .build(),
        );
    }
    // The sparse reductions take a SparseTensor and the axes, with a dense or sparse result.
    let reduce = |name: &str| {
        op(name)
            .input("input_indices: int64")
            .input("input_values: T")
            .input("input_shape: int64")
            .input("reduction_axes: int32")
    };
    for (name, types) in [("SparseReduceSum", NUMBER), ("SparseReduceMax", REAL)] {
        r.add(
            reduce(name).output("output: T").attr("keep_dims: bool = false").attr(types).shape_fn(reduce_shape).build(),
        );
    }
    for (name, types) in [("SparseReduceSumSparse", NUMBER), ("SparseReduceMaxSparse", REAL)] {
        r.add(
            reduce(name)
                .output("output_indices: int64")
                .output("output_values: T")
                .output("output_shape: int64")
                .attr("keep_dims: bool = false")
                .attr(types)
                .shape_fn(|_| Ok(vec![Some(vec![-1, -1]), Some(vec![-1]), Some(vec![-1])]))
                .build(),
        );
    }
    for name in ["SparseDenseCwiseAdd", "SparseDenseCwiseMul", "SparseDenseCwiseDiv"] {
        r.add(
            op(name)
                .input("sp_indices: int64")
                .input("sp_values: T")
                .input("sp_shape: int64")
                .input("dense: T")
                .output("output: T")
                .attr(NUMBER)
                .shape_fn(|c| Ok(vec![c.input(1)]))
                .build(),
        );
    }
    let cross = |name: &str| {
        op(name)
            .input("indices: N * int64")
            .input("values: sparse_types")
            .input("shapes: N * int64")
            .input("dense_inputs: dense_types")
    };
    r.add(
        cross("SparseCross")
            .output("output_indices: int64")
            .output("output_values: out_type")
            .output("output_shape: int64")
            .attr("N: int >= 0")
            .attr("hashed_output: bool")
            .attr("num_buckets: int >= 0")
            .attr("hash_key: int")
            .attr("sparse_types: list(type) >= 0")
            .attr("dense_types: list(type) >= 0")
            .attr("out_type: {int64, string}")
            .attr("internal_type: {int64, string}")
            .shape_fn(cross_shape)
            .build(),
    );
    // The V2 and hashed crosses take their configuration as extra inputs.
    for (name, extra, values) in [
        ("SparseCrossV2", &["sep: string"][..], "string"),
        ("SparseCrossHashed", &["num_buckets: int64", "strong_hash: bool", "salt: int64"], "int64"),
    ] {
        r.add(
            extra
                .iter()
                .fold(cross(name), |b, input| b.input(input))
                .output("output_indices: int64")
                .output(&format!("output_values: {values}"))
                .output("output_shape: int64")
                .attr("N: int >= 0")
                .attr("sparse_types: list(type) >= 0")
                .attr("dense_types: list(type) >= 0")
                .shape_fn(cross_shape)
                .build(),
        );
    }
    r.add(
        op("SparseSoftmax")
            .input("sp_indices: int64")
            .input("sp_values: T")
            .input("sp_shape: int64")
            .output("output: T")
            .attr("T: {half, float, double}")
            .shape_fn(softmax_shape)
            .build(),
    );
}

/// `SparseConcat` along `concat_dim`: (indices, values, shape).
pub fn sparse_concat(
    s: &Scope,
    indices: Vec<Output>,
    values: Vec<Output>,
    shapes: Vec<Output>,
    concat_dim: i64,
) -> (Output, Output, Output) {
    let o = s
        .op("SparseConcat")
        .input_list(indices)
        .input_list(values)
        .input_list(shapes)
        .attr("concat_dim", attr::int(concat_dim))
        .build();
    (o.output(0), o.output(1), o.output(2))
}

/// `SparseReduceSum` over `axes` (an int32 vector), dense.
pub fn sparse_reduce_sum(
    s: &Scope,
    indices: Output,
    values: Output,
    shape: Output,
    axes: Output,
    keep: bool,
) -> Output {
    op_output(s, "SparseReduceSum", [indices, values, shape, axes], [("keep_dims", attr::bool(keep))])
}

/// `SparseReduceSumSparse` (or `SparseReduceMaxSparse` when `max`) over `axes` (an int32
/// vector): the (indices, values, dense shape) of the result.
pub fn sparse_reduce_sparse(
    s: &Scope,
    input: (Output, Output, Output),
    axes: Output,
    keep: bool,
    max: bool,
) -> (Output, Output, Output) {
    let name = if max { "SparseReduceMaxSparse" } else { "SparseReduceSumSparse" };
    let o =
        s.op(name).input(input.0).input(input.1).input(input.2).input(axes).attr("keep_dims", attr::bool(keep)).build();
    (o.output(0), o.output(1), o.output(2))
}

/// `SparseSoftmax` over the last dimension.
pub fn sparse_softmax(s: &Scope, indices: Output, values: Output, shape: Output) -> Output {
    s.op("SparseSoftmax").input(indices).input(values).input(shape).build().output(0)
}
