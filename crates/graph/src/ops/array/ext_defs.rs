//! Definitions of the extended array ops: splits, scans, top-k, reversal, rolling, mirror
//! padding, N-d gathers and scatters, band and diagonal parts, sorted searches, einsum.

use super::ext_shapes::*;
use crate::op_def::op;
use crate::ops::sparse::resource_scatter;
use crate::registry::OpRegistry;
use crate::shape_fn::unchanged;

/// TensorFlow's `TF_CALL_NUMBER_TYPES` plus the quantized types of the scan ops' OpDefs.
const SCAN_T: &str = "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, \
     bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}";
const REAL_T: &str = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";

/// `UnravelIndex`: [len(dims)] for a scalar index, [len(dims), n] for n indices.
fn unravel_shape(c: &crate::shape_fn::ShapeCtx) -> Result<Vec<crate::shape_fn::Dims>, ferroflow_core::Status> {
    let r = c.input(1).and_then(|d| d.first().copied()).unwrap_or(-1);
    Ok(vec![match c.input(0) {
        Some(i) if i.is_empty() => Some(vec![r]),
        Some(i) => Some(vec![r, i[0]]),
        None => None,
    }])
}

pub(crate) fn register(r: &mut OpRegistry) {
    let unravel = op("UnravelIndex").input("indices: Tidx").input("dims: Tidx").output("output: Tidx");
    r.add(unravel.attr("Tidx: {int32, int64} = DT_INT32").shape_fn(unravel_shape).build());
    r.add(
        op("Split")
            .input("split_dim: int32")
            .input("value: T")
            .output("output: num_split * T")
            .attr("num_split: int >= 1")
            .attr("T: type")
            .shape_fn(split_shape)
            .build(),
    );
    r.add(
        op("SplitV")
            .input("value: T")
            .input("size_splits: Tlen")
            .input("split_dim: int32")
            .output("output: num_split * T")
            .attr("num_split: int >= 1")
            .attr("T: type")
            .attr("Tlen: {int8, int32, int64} = DT_INT64")
            .shape_fn(split_v_shape)
            .build(),
    );
    for name in ["Cumsum", "Cumprod", "CumulativeLogsumexp"] {
        r.add(
            op(name)
                .input("x: T")
                .input("axis: Tidx")
                .output("out: T")
                .attr("exclusive: bool = false")
                .attr("reverse: bool = false")
                .attr(if name == "CumulativeLogsumexp" { "T: {bfloat16, half, float, double}" } else { SCAN_T })
                .attr("Tidx: {int32, int64} = DT_INT32")
                .shape_fn(unchanged)
                .build(),
        );
    }
    r.add(
        op("ReverseV2")
            .input("tensor: T")
            .input("axis: Tidx")
            .output("output: T")
            .attr("Tidx: {int32, int64} = DT_INT32")
            .attr(
                "T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, bfloat16, half, float, double, \
                 complex64, complex128, string}",
            )
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("Roll")
            .input("input: T")
            .input("shift: Tshift")
            .input("axis: Taxis")
            .output("output: T")
            .attr("T: type")
            .attr("Tshift: {int32, int64}")
            .attr("Taxis: {int32, int64}")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("TopKV2")
            .input("input: T")
            .input("k: Tk")
            .output("values: T")
            .output("indices: index_type")
            .attr("sorted: bool = true")
            .attr(REAL_T)
            .attr("Tk: {int16, int32, int64} = DT_INT32")
            .attr("index_type: {int16, int32, int64} = DT_INT32")
            .shape_fn(top_k_shape)
            .build(),
    );
    r.add(
        op("ApproxTopK")
            .input("input: T")
            .output("values: T")
            .output("indices: int32")
            .attr("k: int >= 0")
            .attr("reduction_dimension: int = -1")
            .attr("recall_target: float = 0.95")
            .attr("is_max_k: bool = true")
            .attr("reduction_input_size_override: int = -1")
            .attr("aggregate_to_topk: bool = true")
            .attr("T: {half, bfloat16, float}")
            .shape_fn(approx_top_k_shape)
            .build(),
    );
    r.add(
        op("MatrixBandPart")
            .input("input: T")
            .input("num_lower: Tindex")
            .input("num_upper: Tindex")
            .output("band: T")
            .attr("T: type")
            .attr("Tindex: {int32, int64} = DT_INT64")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("ClipByValue")
            .input("t: T")
            .input("clip_value_min: T")
            .input("clip_value_max: T")
            .output("output: T")
            .attr(SCAN_T)
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("BroadcastArgs")
            .input("s0: T")
            .input("s1: T")
            .output("r0: T")
            .attr("T: {int32, int64} = DT_INT32")
            .shape_fn(broadcast_args_shape)
            .build(),
    );
    r.add(
        op("LinSpace")
            .input("start: T")
            .input("stop: T")
            .input("num: Tidx")
            .output("output: T")
            .attr("T: {bfloat16, half, float, double}")
            .attr("Tidx: {int32, int64} = DT_INT32")
            .shape_fn(lin_space_shape)
            .build(),
    );
    r.add(
        op("EnsureShape")
            .input("input: T")
            .output("output: T")
            .attr("shape: shape")
            .attr("T: type")
            .shape_fn(ensure_shape_shape)
            .build(),
    );
    const DIAG_T: &str = "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}";
    r.add(op("Diag").input("diagonal: T").output("output: T").attr(DIAG_T).shape_fn(diag_shape).build());
    r.add(op("DiagPart").input("input: T").output("diagonal: T").attr(DIAG_T).shape_fn(diag_part_shape).build());
    r.add(
        op("Bucketize")
            .input("input: T")
            .output("output: int32")
            .attr("T: {int32, int64, float, double}")
            .attr("boundaries: list(float)")
            .shape_fn(unchanged)
            .build(),
    );
    for name in ["LowerBound", "UpperBound"] {
        r.add(
            op(name)
                .input("sorted_inputs: T")
                .input("values: T")
                .output("output: out_type")
                .attr("T: type")
                .attr("out_type: {int32, int64} = DT_INT32")
                .shape_fn(bound_shape)
                .build(),
        );
    }
    for (name, f) in
        [("MirrorPad", mirror_pad_shape as crate::shape_fn::ShapeFn), ("MirrorPadGrad", mirror_pad_grad_shape)]
    {
        r.add(
            op(name)
                .input("input: T")
                .input("paddings: Tpaddings")
                .output("output: T")
                .attr("T: type")
                .attr("Tpaddings: {int32, int64} = DT_INT32")
                .attr("mode: {'REFLECT', 'SYMMETRIC'}")
                .shape_fn(f)
                .build(),
        );
    }
    r.add(
        op("GatherNd")
            .input("params: Tparams")
            .input("indices: Tindices")
            .output("output: Tparams")
            .attr("Tparams: type")
            .attr("Tindices: {int16, int32, int64}")
            .attr("bad_indices_policy: string = ''")
            .shape_fn(gather_nd_shape)
            .build(),
    );
    r.add(
        op("ScatterNd")
            .input("indices: Tindices")
            .input("updates: T")
            .input("shape: Tindices")
            .output("output: T")
            .attr("T: type")
            .attr("Tindices: {int16, int32, int64}")
            .attr("bad_indices_policy: string = ''")
            .shape_fn(scatter_nd_shape)
            .build(),
    );
    for name in ["TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMax", "TensorScatterMin"]
    {
        let idx = if name == "TensorScatterUpdate" {
            "Tindices: {int16, int32, int64, uint16}"
        } else {
            "Tindices: {int32, int64}"
        };
        r.add(
            op(name)
                .input("tensor: T")
                .input("indices: Tindices")
                .input("updates: T")
                .output("output: T")
                .attr("T: type")
                .attr(idx)
                .attr("bad_indices_policy: string = ''")
                .shape_fn(unchanged)
                .build(),
        );
    }
    r.add(
        op("Einsum")
            .input("inputs: N * T")
            .output("output: T")
            .attr("equation: string")
            .attr("N: int >= 1")
            .attr("T: type")
            .shape_fn(einsum_shape)
            .build(),
    );
    // V2 is V3 without `align` (its diagonals are all left-aligned, as V3's LEFT_LEFT).
    const ALIGN: &str = "align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = 'RIGHT_LEFT'";
    for (v, align) in [("V3", Some(ALIGN)), ("V2", None)] {
        let with_align = |b: crate::op_def::OpDefBuilder| match align {
            Some(a) => b.attr(a),
            None => b,
        };
        r.add(
            with_align(
                op(&format!("MatrixDiag{v}"))
                    .input("diagonal: T")
                    .input("k: int32")
                    .input("num_rows: int32")
                    .input("num_cols: int32")
                    .input("padding_value: T")
                    .output("output: T")
                    .attr("T: type"),
            )
            .shape_fn(matrix_diag_v3_shape)
            .build(),
        );
        r.add(
            with_align(
                op(&format!("MatrixDiagPart{v}"))
                    .input("input: T")
                    .input("k: int32")
                    .input("padding_value: T")
                    .output("diagonal: T")
                    .attr("T: type"),
            )
            .shape_fn(matrix_diag_part_v3_shape)
            .build(),
        );
        r.add(
            with_align(
                op(&format!("MatrixSetDiag{v}"))
                    .input("input: T")
                    .input("diagonal: T")
                    .input("k: int32")
                    .output("output: T")
                    .attr("T: type"),
            )
            .shape_fn(unchanged)
            .build(),
        );
    }
    r.add(
        op("MatrixDiag").input("diagonal: T").output("output: T").attr("T: type").shape_fn(matrix_diag_shape).build(),
    );
    r.add(
        op("MatrixDiagPart")
            .input("input: T")
            .output("diagonal: T")
            .attr("T: type")
            .shape_fn(matrix_diag_part_shape)
            .build(),
    );
    r.add(
        op("MatrixSetDiag")
            .input("input: T")
            .input("diagonal: T")
            .output("output: T")
            .attr("T: type")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("Empty")
            .input("shape: int32")
            .output("output: dtype")
            .attr("dtype: type")
            .attr("init: bool = false")
            .stateful()
            .shape_fn(empty_shape)
            .build(),
    );
    r.add(
        op("ResourceGatherNd")
            .input("resource: resource")
            .input("indices: Tindices")
            .output("output: dtype")
            .attr("dtype: type")
            .attr("Tindices: {int32, int64}")
            .stateful()
            .shape_fn(|_| Ok(vec![None]))
            .build(),
    );
    for kind in ["Update", "Add", "Sub", "Max", "Min"] {
        r.add(
            op(&format!("ScatterNd{kind}"))
                .input("ref: Ref(T)")
                .input("indices: Tindices")
                .input("updates: T")
                .output("output_ref: Ref(T)")
                .attr("T: type")
                .attr("Tindices: {int32, int64}")
                .attr("use_locking: bool = true")
                .attr("bad_indices_policy: string = ''")
                .shape_fn(|c| Ok(vec![c.input(0)]))
                .build(),
        );
        r.add(
            op(&format!("ResourceScatterNd{kind}"))
                .input("ref: resource")
                .input("indices: Tindices")
                .input("updates: T")
                .attr("T: type")
                .attr("Tindices: {int32, int64}")
                .attr("use_locking: bool = true")
                .attr("bad_indices_policy: string = ''")
                .stateful()
                .shape_fn(|_| Ok(vec![]))
                .build(),
        );
    }
    for kind in ["Mul", "Div", "Min", "Max"] {
        let t = if matches!(kind, "Min" | "Max") { REAL_T } else { SCAN_T };
        r.add(resource_scatter(kind, t));
    }
}
