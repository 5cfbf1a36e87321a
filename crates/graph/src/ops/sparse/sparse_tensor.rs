//! Ops on sparse tensors (indices, values, dense shape): `SparseToDense`, `SparseReshape`,
//! `SparseFillEmptyRows` (and its gradient op), `SparseReorder`, `SparseTensorDenseMatMul`,
//! `SparseTensorDenseAdd`, and the bincounts (`Bincount`, `DenseBincount`,
//! `SparseBincount`), with their builder functions.

use ferroflow_core::{attr, NodeAttrs, Status};

use crate::op_def::op;
use crate::ops::array::{const_ints, want_rank};
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx, ShapeFn};

type R = Result<Vec<Dims>, Status>;

const NUMBER: &str = "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, \
                      bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}";

/// The value of a 1-D shape input when constant, else its length in unknown dims.
fn shape_input(c: &ShapeCtx, i: usize) -> Dims {
    if let Some(v) = const_ints(c, i) {
        return Some(v);
    }
    c.input(i).and_then(|d| d.first().copied()).filter(|&n| n >= 0).map(|n| vec![-1; n as usize])
}

fn to_dense_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 1)?;
    want_rank(c, 3, 0)?;
    Ok(vec![shape_input(c, 1)])
}

fn reshape_shape(c: &ShapeCtx) -> R {
    want_rank(c, 0, 2)?;
    want_rank(c, 1, 1)?;
    want_rank(c, 2, 1)?;
    let n = c.input(0).map_or(-1, |d| d[0]);
    let r = c.input(2).map_or(-1, |d| d[0]);
    Ok(vec![Some(vec![n, r]), Some(vec![r])])
}

fn fill_empty_rows_shape(c: &ShapeCtx) -> R {
    want_rank(c, 0, 2)?;
    want_rank(c, 1, 1)?;
    want_rank(c, 2, 1)?;
    want_rank(c, 3, 0)?;
    let r = c.input(0).map_or(-1, |d| d[1]);
    let n = c.input(0).map_or(-1, |d| d[0]);
    let rows = const_ints(c, 2).and_then(|v| v.first().copied()).unwrap_or(-1);
    Ok(vec![Some(vec![-1, r]), Some(vec![-1]), Some(vec![rows]), Some(vec![n])])
}

fn fill_empty_rows_grad_shape(c: &ShapeCtx) -> R {
    want_rank(c, 0, 1)?;
    want_rank(c, 1, 1)?;
    Ok(vec![c.input(0), Some(vec![])])
}

fn reorder_shape(c: &ShapeCtx) -> R {
    want_rank(c, 0, 2)?;
    want_rank(c, 1, 1)?;
    Ok(vec![c.input(0), c.input(1)])
}

fn matmul_shape(c: &ShapeCtx) -> R {
    want_rank(c, 2, 1)?;
    want_rank(c, 3, 2)?;
    let adj_a = c.node.attr_bool("adjoint_a").unwrap_or(false);
    let adj_b = c.node.attr_bool("adjoint_b").unwrap_or(false);
    let a = const_ints(c, 2).filter(|v| v.len() == 2);
    let rows = a.map_or(-1, |v| if adj_a { v[1] } else { v[0] });
    let cols = c.input(3).map_or(-1, |d| if adj_b { d[0] } else { d[1] });
    Ok(vec![Some(vec![rows, cols])])
}

fn dense_add_shape(c: &ShapeCtx) -> R {
    Ok(vec![c.input(3)])
}

fn bincount_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 0)?;
    let size = const_ints(c, 1).and_then(|v| v.first().copied()).unwrap_or(-1);
    Ok(vec![Some(vec![size])])
}

fn dense_bincount_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 0)?;
    let size = const_ints(c, 1).and_then(|v| v.first().copied()).unwrap_or(-1);
    Ok(vec![match c.input(0) {
        Some(d) if d.len() == 2 => Some(vec![d[0], size]),
        Some(d) if d.len() <= 1 => Some(vec![size]),
        Some(d) => return Err(c.error(format!("Shape must be at most rank 2 but is rank {}", d.len()))),
        None => None,
    }])
}

fn sparse_bincount_shape(c: &ShapeCtx) -> R {
    want_rank(c, 3, 0)?;
    let size = const_ints(c, 3).and_then(|v| v.first().copied()).unwrap_or(-1);
    Ok(vec![match const_ints(c, 2) {
        Some(v) if v.len() == 2 => Some(vec![v[0], size]),
        Some(v) if v.len() <= 1 => Some(vec![size]),
        _ => None,
    }])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("SparseToDense")
            .input("sparse_indices: Tindices")
            .input("output_shape: Tindices")
            .input("sparse_values: T")
            .input("default_value: T")
            .output("dense: T")
            .attr("validate_indices: bool = true")
            .attr("T: type")
            .attr("Tindices: {int32, int64}")
            .shape_fn(to_dense_shape)
            .build(),
    );
    r.add(
        op("SparseReshape")
            .input("input_indices: int64")
            .input("input_shape: int64")
            .input("new_shape: int64")
            .output("output_indices: int64")
            .output("output_shape: int64")
            .shape_fn(reshape_shape)
            .build(),
    );
    r.add(
        op("SparseFillEmptyRows")
            .input("indices: int64")
            .input("values: T")
            .input("dense_shape: int64")
            .input("default_value: T")
            .output("output_indices: int64")
            .output("output_values: T")
            .output("empty_row_indicator: bool")
            .output("reverse_index_map: int64")
            .attr("T: type")
            .shape_fn(fill_empty_rows_shape)
            .build(),
    );
    r.add(
        op("SparseFillEmptyRowsGrad")
            .input("reverse_index_map: int64")
            .input("grad_values: T")
            .output("d_values: T")
            .output("d_default_value: T")
            .attr("T: type")
            .shape_fn(fill_empty_rows_grad_shape)
            .build(),
    );
    r.add(
        op("SparseReorder")
            .input("input_indices: int64")
            .input("input_values: T")
            .input("input_shape: int64")
            .output("output_indices: int64")
            .output("output_values: T")
            .attr("T: type")
            .shape_fn(reorder_shape)
            .build(),
    );
    r.add(
        op("SparseTensorDenseMatMul")
            .input("a_indices: Tindices")
            .input("a_values: T")
            .input("a_shape: int64")
            .input("b: T")
            .output("product: T")
            .attr("T: type")
            .attr("Tindices: {int32, int64} = DT_INT64")
            .attr("adjoint_a: bool = false")
            .attr("adjoint_b: bool = false")
            .shape_fn(matmul_shape)
            .build(),
    );
    r.add(
        op("SparseTensorDenseAdd")
            .input("a_indices: Tindices")
            .input("a_values: T")
            .input("a_shape: Tindices")
            .input("b: T")
            .output("output: T")
            .attr(NUMBER)
            .attr("Tindices: {int32, int64}")
            .shape_fn(dense_add_shape)
            .build(),
    );
    r.add(
        op("Bincount")
            .input("arr: int32")
            .input("size: int32")
            .input("weights: T")
            .output("bins: T")
            .attr("T: {int32, int64, float, double}")
            .shape_fn(bincount_shape)
            .build(),
    );
    // The bincounts of a dense and of a sparse input: inputs before `size` and `weights`.
    for (name, inputs, shape) in [
        ("DenseBincount", &["input: Tidx"][..], dense_bincount_shape as ShapeFn),
        ("SparseBincount", &["indices: int64", "values: Tidx", "dense_shape: int64"], sparse_bincount_shape),
    ] {
        r.add(
            inputs
                .iter()
                .fold(op(name), |b, input| b.input(input))
                .input("size: Tidx")
                .input("weights: T")
                .output("output: T")
                .attr("Tidx: {int32, int64}")
                .attr("T: {int32, int64, float, double}")
                .attr("binary_output: bool = false")
                .shape_fn(shape)
                .build(),
        );
    }
}

/// `SparseToDense`: `default_value` everywhere but at `indices`, which take `values`.
pub fn sparse_to_dense(
    s: &Scope,
    indices: Output,
    output_shape: Output,
    values: Output,
    default_value: Output,
    validate_indices: bool,
) -> Output {
    op_output(
        s,
        "SparseToDense",
        [indices, output_shape, values, default_value],
        [("validate_indices", attr::bool(validate_indices))],
    )
}

two_output_builders! {
    /// `SparseReshape`: the new indices and the new shape.
    sparse_reshape => "SparseReshape"(indices, shape, new_shape);
    /// `SparseFillEmptyRowsGrad`: (d_values, d_default_value).
    sparse_fill_empty_rows_grad => "SparseFillEmptyRowsGrad"(reverse_index_map, grad_values);
    /// `SparseReorder`: the entries in row-major order.
    sparse_reorder => "SparseReorder"(indices, values, shape);
}

/// `SparseFillEmptyRows`: (indices, values, empty_row_indicator, reverse_index_map).
pub fn sparse_fill_empty_rows(
    s: &Scope,
    indices: Output,
    values: Output,
    dense_shape: Output,
    default_value: Output,
) -> (Output, Output, Output, Output) {
    let o = s.op("SparseFillEmptyRows").input(indices).input(values).input(dense_shape).input(default_value).build();
    (o.output(0), o.output(1), o.output(2), o.output(3))
}

/// `SparseTensorDenseMatMul`: `op(A) @ op(B)` for a sparse `A`.
pub fn sparse_tensor_dense_mat_mul(
    s: &Scope,
    a_indices: Output,
    a_values: Output,
    a_shape: Output,
    b: Output,
    adjoint_a: bool,
    adjoint_b: bool,
) -> Output {
    let attrs = [("adjoint_a", attr::bool(adjoint_a)), ("adjoint_b", attr::bool(adjoint_b))];
    op_output(s, "SparseTensorDenseMatMul", [a_indices, a_values, a_shape, b], attrs)
}

/// `SparseTensorDenseAdd`: `A + b`, dense.
pub fn sparse_tensor_dense_add(s: &Scope, a_indices: Output, a_values: Output, a_shape: Output, b: Output) -> Output {
    s.op("SparseTensorDenseAdd").input(a_indices).input(a_values).input(a_shape).input(b).build().output(0)
}
