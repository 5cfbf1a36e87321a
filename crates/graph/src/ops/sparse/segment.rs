//! Segment reductions: `Segment{Sum,Mean,Max,Min,Prod}` (sorted ids),
//! `UnsortedSegment{Max,Min,Prod}` (`UnsortedSegmentSum` is an array op),
//! `SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]` and the gradient ops TensorFlow's Python
//! emits for them (`SparseSegment{Sum,Mean,SqrtN}Grad[V2]`), with their builder functions.

use ferroflow_core::Status;

use crate::op_def::op;
use crate::ops::array::{const_ints, segment_sum_shape, want_rank};
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

/// TensorFlow's `numbertype` with the quantized types.
const NUMBER: &str = "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, \
                      bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}";
/// TensorFlow's `realnumbertype`.
const REAL: &str = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";
/// The float types of the mean and sqrt-n reductions and of the gradient ops.
const FLOATS: &str = "T: {bfloat16, half, float, double}";

/// `[-1] + data.shape[1:]` (sorted segment ops: the row count is the last id + 1).
fn segment_shape(c: &ShapeCtx) -> R {
    want_rank(c, 1, 1)?;
    Ok(vec![c.input(0).map(|d| {
        let mut o = vec![-1];
        o.extend_from_slice(d.get(1..).unwrap_or(&[]));
        o
    })])
}

/// `[rows] + data.shape[1:]`, rows the constant of input `num_at` (if any, else unknown).
fn sparse_segment_shape(c: &ShapeCtx, num_at: Option<usize>) -> R {
    want_rank(c, 1, 1)?;
    want_rank(c, 2, 1)?;
    if let Some(i) = num_at {
        want_rank(c, i, 0)?;
    }
    let rows = num_at.and_then(|i| const_ints(c, i)).and_then(|v| v.first().copied()).unwrap_or(-1);
    Ok(vec![c.input(0).map(|d| {
        let mut o = vec![rows];
        o.extend_from_slice(d.get(1..).unwrap_or(&[]));
        o
    })])
}

fn sparse_segment_reduce_shape(c: &ShapeCtx) -> R {
    sparse_segment_shape(c, None)
}

fn sparse_segment_num_shape(c: &ShapeCtx) -> R {
    sparse_segment_shape(c, Some(3))
}

fn sparse_segment_grad_shape(c: &ShapeCtx) -> R {
    sparse_segment_shape(c, Some(3))
}

/// V2: `[-1] + grad.shape[1:]` and `[-1]`.
fn sparse_segment_grad_v2_shape(c: &ShapeCtx) -> R {
    want_rank(c, 3, 0)?;
    let mut v = sparse_segment_shape(c, None)?;
    v.push(Some(vec![-1]));
    Ok(v)
}

/// The sparse segment reductions: `Sum` also for integers.
const SPARSE_KINDS: [(&str, &str); 3] = [("Sum", REAL), ("Mean", FLOATS), ("SqrtN", FLOATS)];

pub(crate) fn register(r: &mut OpRegistry) {
    for (name, types) in [
        ("SegmentSum", NUMBER),
        ("SegmentMean", NUMBER),
        ("SegmentMax", REAL),
        ("SegmentMin", REAL),
        ("SegmentProd", NUMBER),
    ] {
        r.add(
            op(name)
                .input("data: T")
                .input("segment_ids: Tindices")
                .output("output: T")
                .attr(types)
                .attr("Tindices: {int32, int64}")
                .shape_fn(segment_shape)
                .build(),
        );
    }
    for (name, types) in [("UnsortedSegmentMax", REAL), ("UnsortedSegmentMin", REAL), ("UnsortedSegmentProd", NUMBER)] {
        r.add(
            op(name)
                .input("data: T")
                .input("segment_ids: Tindices")
                .input("num_segments: Tnumsegments")
                .output("output: T")
                .attr(types)
                .attr("Tindices: {int32, int64}")
                .attr("Tnumsegments: {int32, int64} = DT_INT32")
                .shape_fn(segment_sum_shape)
                .build(),
        );
    }
    for (kind, types) in SPARSE_KINDS {
        r.add(
            op(&format!("SparseSegment{kind}"))
                .input("data: T")
                .input("indices: Tidx")
                .input("segment_ids: Tsegmentids")
                .output("output: T")
                .attr(types)
                .attr("Tidx: {int32, int64} = DT_INT32")
                .attr("Tsegmentids: {int32, int64} = DT_INT32")
                .attr("sparse_gradient: bool = false")
                .shape_fn(sparse_segment_reduce_shape)
                .build(),
        );
        r.add(
            op(&format!("SparseSegment{kind}WithNumSegments"))
                .input("data: T")
                .input("indices: Tidx")
                .input("segment_ids: Tsegmentids")
                .input("num_segments: Tnumsegments")
                .output("output: T")
                .attr(types)
                .attr("Tidx: {int32, int64} = DT_INT32")
                .attr("Tnumsegments: {int32, int64} = DT_INT32")
                .attr("Tsegmentids: {int32, int64} = DT_INT32")
                .attr("sparse_gradient: bool = false")
                .shape_fn(sparse_segment_num_shape)
                .build(),
        );
        r.add(
            op(&format!("SparseSegment{kind}Grad"))
                .input("grad: T")
                .input("indices: Tidx")
                .input("segment_ids: Tsegmentids")
                .input("output_dim0: int32")
                .output("output: T")
                .attr(FLOATS)
                .attr("Tidx: {int32, int64} = DT_INT32")
                .attr("Tsegmentids: {int32, int64} = DT_INT32")
                .shape_fn(sparse_segment_grad_shape)
                .build(),
        );
        r.add(
            op(&format!("SparseSegment{kind}GradV2"))
                .input("grad: T")
                .input("indices: Tidx")
                .input("segment_ids: Tsegmentids")
                .input("dense_output_dim0: int32")
                .output("output: T")
                .output("sorted_unique_indices: Tidx")
                .attr(FLOATS)
                .attr("Tidx: {int32, int64} = DT_INT32")
                .attr("Tsegmentids: {int32, int64} = DT_INT32")
                .shape_fn(sparse_segment_grad_v2_shape)
                .build(),
        );
    }
}

/// A sorted segment reduction: `op` is `SegmentSum`, `SegmentMean`, `SegmentMax`,
/// `SegmentMin` or `SegmentProd`.
pub fn segment_reduce(s: &Scope, op: &str, data: Output, segment_ids: Output) -> Output {
    s.op(op).input(data).input(segment_ids).build().output(0)
}

/// `SegmentSum`.
pub fn segment_sum(s: &Scope, data: Output, segment_ids: Output) -> Output {
    segment_reduce(s, "SegmentSum", data, segment_ids)
}

/// An unsorted segment reduction: `op` is `UnsortedSegmentMax`, `UnsortedSegmentMin`,
/// `UnsortedSegmentProd` (or `UnsortedSegmentSum`).
pub fn unsorted_segment_reduce(s: &Scope, op: &str, data: Output, segment_ids: Output, num: Output) -> Output {
    s.op(op).input(data).input(segment_ids).input(num).build().output(0)
}

/// `SparseSegment{Sum,Mean,SqrtN}` (`kind` is `Sum`, `Mean` or `SqrtN`), with
/// `num_segments` the `...WithNumSegments` form.
pub fn sparse_segment_reduce(
    s: &Scope,
    kind: &str,
    data: Output,
    indices: Output,
    segment_ids: Output,
    num_segments: Option<Output>,
) -> Output {
    let name = if num_segments.is_some() {
        format!("SparseSegment{kind}WithNumSegments")
    } else {
        format!("SparseSegment{kind}")
    };
    let mut b = s.op(&name).input(data).input(indices).input(segment_ids);
    if let Some(n) = num_segments {
        b = b.input(n);
    }
    b.build().output(0)
}

/// `SparseSegment{kind}Grad`: the dense gradient (`output_dim0` rows, an int32 scalar).
pub fn sparse_segment_grad(
    s: &Scope,
    kind: &str,
    grad: Output,
    indices: Output,
    segment_ids: Output,
    output_dim0: Output,
) -> Output {
    s.op(&format!("SparseSegment{kind}Grad"))
        .input(grad)
        .input(indices)
        .input(segment_ids)
        .input(output_dim0)
        .build()
        .output(0)
}

/// `SparseSegment{kind}GradV2`: the gradient's rows and their sorted unique indices.
pub fn sparse_segment_grad_v2(
    s: &Scope,
    kind: &str,
    grad: Output,
    indices: Output,
    segment_ids: Output,
    dense_output_dim0: Output,
) -> (Output, Output) {
    let o = s
        .op(&format!("SparseSegment{kind}GradV2"))
        .input(grad)
        .input(indices)
        .input(segment_ids)
        .input(dense_output_dim0)
        .build();
    (o.output(0), o.output(1))
}
