//! Array op definitions, in TensorFlow's REGISTER_OP syntax.

use super::shapes::*;
use super::slice_shapes::{slice_shape, strided_slice_grad_shape, strided_slice_shape};
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::shape_fn::unchanged;

/// Types TensorFlow's numeric kernels accept (those ferroflow's parser knows).
const NUMERIC: &str = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("Reshape")
            .input("tensor: T")
            .input("shape: Tshape")
            .output("output: T")
            .attr("T: type")
            .attr("Tshape: {int32, int64} = DT_INT32")
            .shape_fn(reshape_shape)
            .build(),
    );
    for name in ["Shape", "Size"] {
        r.add(
            op(name)
                .input("input: T")
                .output("output: out_type")
                .attr("T: type")
                .attr("out_type: {int32, int64} = DT_INT32")
                .shape_fn(if name == "Shape" { shape_shape } else { crate::shape_fn::scalar })
                .build(),
        );
    }
    r.add(
        op("Rank").input("input: T").output("output: int32").attr("T: type").shape_fn(crate::shape_fn::scalar).build(),
    );
    r.add(
        op("ShapeN")
            .input("input: N * T")
            .output("output: N * out_type")
            .attr("N: int >= 1")
            .attr("T: type")
            .attr("out_type: {int32, int64} = DT_INT32")
            .shape_fn(shape_n_shape)
            .build(),
    );
    r.add(
        op("Fill")
            .input("dims: index_type")
            .input("value: T")
            .output("output: T")
            .attr("T: type")
            .attr("index_type: {int32, int64} = DT_INT32")
            .shape_fn(fill_shape)
            .build(),
    );
    r.add(op("ZerosLike").input("x: T").output("y: T").attr("T: type").shape_fn(unchanged).build());
    r.add(
        op("OnesLike")
            .input("x: T")
            .output("y: T")
            .attr("T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64, complex64, complex128, bool}")
            .shape_fn(unchanged)
            .build(),
    );
    r.add(
        op("ExpandDims")
            .input("input: T")
            .input("dim: Tdim")
            .output("output: T")
            .attr("T: type")
            .attr("Tdim: {int32, int64} = DT_INT32")
            .shape_fn(expand_dims_shape)
            .build(),
    );
    r.add(
        op("Squeeze")
            .input("input: T")
            .output("output: T")
            .attr("T: type")
            .attr("squeeze_dims: list(int) >= 0 = []")
            .shape_fn(squeeze_shape)
            .build(),
    );
    for name in ["Transpose", "ConjugateTranspose"] {
        r.add(
            op(name)
                .input("x: T")
                .input("perm: Tperm")
                .output("y: T")
                .attr("T: type")
                .attr("Tperm: {int32, int64} = DT_INT32")
                .shape_fn(transpose_shape)
                .build(),
        );
    }
    r.add(
        op("InvertPermutation")
            .input("x: T")
            .output("y: T")
            .attr("T: {int32, int64} = DT_INT32")
            .shape_fn(vector_unchanged)
            .build(),
    );
    r.add(
        op("ConcatV2")
            .input("values: N * T")
            .input("axis: Tidx")
            .output("output: T")
            .attr("N: int >= 2")
            .attr("T: type")
            .attr("Tidx: {int32, int64} = DT_INT32")
            .shape_fn(concat_shape)
            .build(),
    );
    r.add(
        op("ConcatOffset")
            .input("concat_dim: int32")
            .input("shape: N * shape_type")
            .output("offset: N * shape_type")
            .attr("N: int >= 2")
            .attr("shape_type: {int32, int64} = DT_INT32")
            .shape_fn(concat_offset_shape)
            .build(),
    );
    r.add(
        op("Pack")
            .input("values: N * T")
            .output("output: T")
            .attr("N: int >= 1")
            .attr("T: type")
            .attr("axis: int = 0")
            .shape_fn(pack_shape)
            .build(),
    );
    r.add(
        op("Unpack")
            .input("value: T")
            .output("output: num * T")
            .attr("num: int >= 0")
            .attr("T: type")
            .attr("axis: int = 0")
            .shape_fn(unpack_shape)
            .build(),
    );
    r.add(
        op("Slice")
            .input("input: T")
            .input("begin: Index")
            .input("size: Index")
            .output("output: T")
            .attr("T: type")
            .attr("Index: {int32, int64}")
            .shape_fn(slice_shape)
            .build(),
    );
    let masks = [
        "begin_mask: int = 0",
        "end_mask: int = 0",
        "ellipsis_mask: int = 0",
        "new_axis_mask: int = 0",
        "shrink_axis_mask: int = 0",
    ];
    let mut ss = op("StridedSlice")
        .input("input: T")
        .input("begin: Index")
        .input("end: Index")
        .input("strides: Index")
        .output("output: T")
        .attr("T: type")
        .attr("Index: {int16, int32, int64}");
    let mut ssg = op("StridedSliceGrad")
        .input("shape: Index")
        .input("begin: Index")
        .input("end: Index")
        .input("strides: Index")
        .input("dy: T")
        .output("output: T")
        .attr("T: type")
        .attr("Index: {int32, int64}");
    for m in masks {
        ss = ss.attr(m);
        ssg = ssg.attr(m);
    }
    r.add(ss.shape_fn(strided_slice_shape).build());
    r.add(ssg.shape_fn(strided_slice_grad_shape).build());
    // Writing through a slice: a reference variable, a resource variable, a tensor.
    let assign = |name: &str, target: &str| {
        let b = op(name).input(target).input("begin: Index").input("end: Index").input("strides: Index");
        masks.iter().fold(b.input("value: T").attr("T: type").attr("Index: {int32, int64}"), |b, m| b.attr(m))
    };
    r.add(assign("StridedSliceAssign", "ref: Ref(T)").output("output_ref: Ref(T)").shape_fn(unchanged).build());
    r.add(assign("ResourceStridedSliceAssign", "ref: resource").stateful().shape_fn(|_| Ok(vec![])).build());
    r.add(assign("TensorStridedSliceUpdate", "input: T").output("output: T").shape_fn(unchanged).build());
    r.add(
        op("Gather")
            .input("params: Tparams")
            .input("indices: Tindices")
            .output("output: Tparams")
            .attr("validate_indices: bool = true")
            .attr("Tparams: type")
            .attr("Tindices: {int32, int64}")
            .shape_fn(gather_shape)
            .build(),
    );
    r.add(
        op("GatherV2")
            .input("params: Tparams")
            .input("indices: Tindices")
            .input("axis: Taxis")
            .output("output: Tparams")
            .attr("batch_dims: int = 0")
            .attr("Tparams: type")
            .attr("Tindices: {int16, int32, int64}")
            .attr("Taxis: {int32, int64}")
            .shape_fn(gather_v2_shape)
            .build(),
    );
    r.add(
        op("UnsortedSegmentSum")
            .input("data: T")
            .input("segment_ids: Tindices")
            .input("num_segments: Tnumsegments")
            .output("output: T")
            .attr(&format!("T: {}", NUMERIC.replace('}', ", complex64, complex128}")))
            .attr("Tindices: {int16, int32, int64}")
            .attr("Tnumsegments: {int32, int64} = DT_INT32")
            .shape_fn(segment_sum_shape)
            .build(),
    );
    for name in ["DynamicStitch", "ParallelDynamicStitch"] {
        r.add(
            op(name)
                .input("indices: N * int32")
                .input("data: N * T")
                .output("merged: T")
                .attr("N: int >= 1")
                .attr("T: type")
                .shape_fn(stitch_shape)
                .build(),
        );
    }
    r.add(
        op("Tile")
            .input("input: T")
            .input("multiples: Tmultiples")
            .output("output: T")
            .attr("T: type")
            .attr("Tmultiples: {int32, int64} = DT_INT32")
            .shape_fn(tile_shape)
            .build(),
    );
    r.add(
        op("BroadcastTo")
            .input("input: T")
            .input("shape: Tidx")
            .output("output: T")
            .attr("T: type")
            .attr("Tidx: {int32, int64} = DT_INT32")
            .shape_fn(broadcast_to_shape)
            .build(),
    );
    r.add(
        op("OneHot")
            .input("indices: TI")
            .input("depth: int32")
            .input("on_value: T")
            .input("off_value: T")
            .output("output: T")
            .attr("axis: int = -1")
            .attr("T: type")
            .attr("TI: {uint8, int8, int32, int64} = DT_INT64")
            .shape_fn(one_hot_shape)
            .build(),
    );
    r.add(
        op("Range")
            .input("start: Tidx")
            .input("limit: Tidx")
            .input("delta: Tidx")
            .output("output: Tidx")
            .attr("Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32, uint64} = DT_INT32")
            .shape_fn(range_shape)
            .build(),
    );
    r.add(
        op("Pad")
            .input("input: T")
            .input("paddings: Tpaddings")
            .output("output: T")
            .attr("T: type")
            .attr("Tpaddings: {int32, int64} = DT_INT32")
            .shape_fn(pad_shape)
            .build(),
    );
    r.add(
        op("PadV2")
            .input("input: T")
            .input("paddings: Tpaddings")
            .input("constant_values: T")
            .output("output: T")
            .attr("T: type")
            .attr("Tpaddings: {int32, int64} = DT_INT32")
            .shape_fn(pad_shape)
            .build(),
    );
    r.add(op("Snapshot").input("input: T").output("output: T").attr("T: type").shape_fn(unchanged).build());
    r.add(
        op("Where")
            .input("input: T")
            .output("index: int64")
            .attr(&format!("T: {} = DT_BOOL", NUMERIC.replace('}', ", complex64, complex128, bool}")))
            .shape_fn(where_shape)
            .build(),
    );
    r.add(
        op("PreventGradient")
            .input("input: T")
            .output("output: T")
            .attr("T: type")
            .attr("message: string = ''")
            .shape_fn(unchanged)
            .build(),
    );
}
