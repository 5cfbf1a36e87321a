"""Golden values for the array and plumbing kernels (TensorFlow 2.21, eager raw ops).
Run: .venv/bin/python scripts/golden/array.py"""
import os
import sys

# This file is named like the stdlib module `array`: keep its folder off the import path
# while TensorFlow loads, then add it back for `common`.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.append(_HERE)
from common import attr_json, dt, tensor, write  # noqa: E402

rs = np.random.RandomState(42)
cases = []


# Python keyword names of tf.raw_ops that differ from the op definition's names.
PY = {("ExpandDims", "dim"): "axis", ("Where", "input"): "condition", ("Squeeze", "squeeze_dims"): "axis"}


def case(name, op, args, types=None, attrs=None, list_types=None, py_extra=None):
    """args: ordered (name, array or list of arrays); types: type attrs {attr: array};
    attrs: non-type attrs passed to TensorFlow too."""
    attrs = attrs or {}
    def arr(v):  # numpy scalars (np.float64 subclasses float) would be converted by attr defaults
        return [tf.constant(np.asarray(x)) for x in v] if isinstance(v, list) else tf.constant(np.asarray(v))
    kw = {PY.get((op, k), k): arr(v) for k, v in args}
    kw.update({PY.get((op, k), k): v for k, v in attrs.items()})
    out = getattr(tf.raw_ops, op)(**kw, **(py_extra or {}))
    outs = list(out) if isinstance(out, (list, tuple)) else ([] if out is None or not hasattr(out, "numpy") else [out])
    inputs = []
    for _, v in args:
        inputs.extend(v if isinstance(v, list) else [v])
    ja = {k: attr_json(v) for k, v in attrs.items()}
    for k, v in (types or {}).items():
        ja[k] = {"type": v if isinstance(v, str) else dt(v)}
    for k, v in (list_types or {}).items():
        ja[k] = {"list_type": v}
    for k, v in args:
        if isinstance(v, list) and op not in ("IdentityN",):
            ja.setdefault("N", {"i": len(v)})
    cases.append({"name": name, "op": op, "attrs": ja, "inputs": [tensor(np.asarray(i)) for i in inputs],
                  "outputs": [tensor(o.numpy()) for o in outs]})


f32 = lambda *s: rs.randn(*s).astype(np.float32)  # noqa: E731
i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
strs = np.array([b"a", b"bc", b"", b"def", b"g", b"hi"], dtype=object).reshape(2, 3)
x234 = f32(2, 3, 4)

# Reshape / shape ops
case("reshape_infer", "Reshape", [("tensor", x234), ("shape", i32(-1, 4))], {"T": x234, "Tshape": "int32"})
case("reshape_i64", "Reshape", [("tensor", np.arange(6, dtype=np.int64)), ("shape", i64(3, 2))], {"T": "int64", "Tshape": "int64"})
case("reshape_bool", "Reshape", [("tensor", rs.rand(6) > 0.5), ("shape", i32(2, 1, 3))], {"T": "bool", "Tshape": "int32"})
case("reshape_str", "Reshape", [("tensor", strs), ("shape", i32(6))], {"T": "string", "Tshape": "int32"})
case("reshape_empty", "Reshape", [("tensor", np.zeros((0, 3), np.float32)), ("shape", i32(-1, 0))], {"T": "float32", "Tshape": "int32"})
case("shape_i32", "Shape", [("input", x234)], {"T": x234, "out_type": "int32"})
case("shape_i64", "Shape", [("input", strs)], {"T": "string", "out_type": "int64"}, py_extra={"out_type": tf.int64})
case("size", "Size", [("input", x234)], {"T": x234, "out_type": "int32"})
case("size_i64", "Size", [("input", np.float64(1.0))], {"T": "float64", "out_type": "int64"}, py_extra={"out_type": tf.int64})
case("rank", "Rank", [("input", x234)], {"T": x234})
case("shape_n", "ShapeN", [("input", [x234, f32(5)])], {"T": x234, "out_type": "int64"}, py_extra={"out_type": tf.int64})
case("fill_f32", "Fill", [("dims", i32(2, 3)), ("value", np.float32(2.5))], {"T": "float32", "index_type": "int32"})
case("fill_bool_i64", "Fill", [("dims", i64(4)), ("value", np.bool_(True))], {"T": "bool", "index_type": "int64"})
case("zeros_like_f64", "ZerosLike", [("x", rs.randn(2, 2))], {"T": "float64"})
case("zeros_like_str", "ZerosLike", [("x", strs)], {"T": "string"})
case("ones_like_i32", "OnesLike", [("x", i32(1, 2, 3))], {"T": "int32"})
case("ones_like_bool", "OnesLike", [("x", np.array([True, False]))], {"T": "bool"})
case("expand_dims", "ExpandDims", [("input", x234), ("dim", np.int32(-1))], {"T": x234, "Tdim": "int32"})
case("expand_dims0", "ExpandDims", [("input", i64(1, 2)), ("dim", np.int64(0))], {"T": "int64", "Tdim": "int64"})
case("squeeze_all", "Squeeze", [("input", f32(1, 3, 1, 2))], {"T": "float32"}, {"squeeze_dims": []})
case("squeeze_one", "Squeeze", [("input", f32(1, 3, 1, 2))], {"T": "float32"}, {"squeeze_dims": [-2]})

# Transpose
case("transpose_2d", "Transpose", [("x", f32(67, 45)), ("perm", i32(1, 0))], {"T": "float32", "Tperm": "int32"})
case("transpose_3d", "Transpose", [("x", x234), ("perm", i32(2, 0, 1))], {"T": "float32", "Tperm": "int32"})
case("transpose_nhwc_nchw", "Transpose", [("x", f32(2, 5, 6, 3)), ("perm", i64(0, 3, 1, 2))], {"T": "float32", "Tperm": "int64"})
case("transpose_u8", "Transpose", [("x", rs.randint(0, 255, (3, 4)).astype(np.uint8)), ("perm", i32(1, 0))], {"T": "uint8", "Tperm": "int32"})
case("transpose_str", "Transpose", [("x", strs), ("perm", i32(1, 0))], {"T": "string", "Tperm": "int32"})
small_ints = lambda *s: rs.randint(-9, 10, s).astype(np.float32)  # noqa: E731 (short JSON for big cases)
case("transpose_big", "Transpose", [("x", small_ints(2, 130, 130)), ("perm", i32(0, 2, 1))], {"T": "float32", "Tperm": "int32"})
case("invert_perm_i32", "InvertPermutation", [("x", i32(3, 4, 0, 2, 1))], {"T": "int32"})
case("invert_perm_i64", "InvertPermutation", [("x", i64(2, 0, 1))], {"T": "int64"})

# Concat / pack
case("concat_axis0", "ConcatV2", [("values", [f32(2, 3), f32(1, 3)]), ("axis", np.int32(0))], {"T": "float32", "Tidx": "int32"})
case("concat_neg", "ConcatV2", [("values", [f32(2, 3), f32(2, 1), f32(2, 2)]), ("axis", np.int64(-1))], {"T": "float32", "Tidx": "int64"})
case("concat_i64", "ConcatV2", [("values", [np.arange(4, dtype=np.int64).reshape(2, 2, 1)] * 2), ("axis", np.int32(1))], {"T": "int64", "Tidx": "int32"})
case("concat_str", "ConcatV2", [("values", [strs, strs]), ("axis", np.int32(1))], {"T": "string", "Tidx": "int32"})
case("concat_offset", "ConcatOffset", [("concat_dim", np.int32(1)), ("shape", [i32(2, 3, 5), i32(2, 7, 5), i32(2, 1, 5)])], {"shape_type": "int32"})
case("pack0", "Pack", [("values", [f32(2, 3), f32(2, 3)])], {"T": "float32"}, {"axis": 0})
case("pack_last", "Pack", [("values", [i32(1, 2), i32(3, 4), i32(5, 6)])], {"T": "int32"}, {"axis": -1})
case("pack_scalars", "Pack", [("values", [np.float64(1), np.float64(2)])], {"T": "float64"}, {"axis": 0})
case("unpack0", "Unpack", [("value", x234)], {"T": "float32"}, {"num": 2, "axis": 0})
case("unpack1", "Unpack", [("value", x234)], {"T": "float32"}, {"num": 3, "axis": 1})
case("unpack_last", "Unpack", [("value", np.arange(6, dtype=np.int32).reshape(3, 2))], {"T": "int32"}, {"num": 2, "axis": -1})

# Slicing
case("slice", "Slice", [("input", x234), ("begin", i32(0, 1, 1)), ("size", i32(-1, 2, 2))], {"T": "float32", "Index": "int32"})
case("slice_i64", "Slice", [("input", np.arange(10, dtype=np.int64)), ("begin", i64(3)), ("size", i64(4))], {"T": "int64", "Index": "int64"})
x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
ss = [
    # name, begin, end, strides, masks (begin, end, ellipsis, new_axis, shrink)
    ("ss_range", [1], [3], [1], (0, 0, 0, 0, 0)),                       # x[1:3]
    ("ss_col", [0, 0], [0, 1], [1, 1], (1, 1, 0, 0, 2)),                # x[:, 0]
    ("ss_ellipsis", [0, 1], [0, 2], [1, 1], (0, 0, 1, 0, 2)),           # x[..., 1]
    ("ss_reverse", [0], [0], [-1], (1, 1, 0, 0, 0)),                    # x[::-1]
    ("ss_newaxis", [0], [0], [1], (0, 0, 0, 1, 0)),                     # x[None]
    ("ss_mixed", [-1, 0, 4], [0, 0, 0], [1, 1, -2], (6, 6, 0, 0, 1)),   # x[-1, :, 4::-2]
    ("ss_newaxis_mid", [1, 0, 0], [0, 0, 2], [1, 1, 1], (1, 2, 0, 2, 0)),  # x[1:, None, :2]
    ("ss_ellipsis_new", [0, 0, 0], [0, 0, 1], [1, 1, 1], (0, 0, 1, 2, 4)),  # x[..., None, 0]
    ("ss_step", [0, 1], [3, 4], [2, 2], (0, 0, 0, 0, 0)),               # x[0:3:2, 1:4:2]
    ("ss_clamp", [-10, 2], [10, -10], [1, -1], (0, 0, 0, 0, 0)),        # x[-10:10, 2:-10:-1]
]
for name, b, e, s, (bm, em, elm, nm, sm) in ss:
    m = {"begin_mask": bm, "end_mask": em, "ellipsis_mask": elm, "new_axis_mask": nm, "shrink_axis_mask": sm}
    case(name, "StridedSlice", [("input", x), ("begin", i32(*b)), ("end", i32(*e)), ("strides", i32(*s))],
         {"T": "float32", "Index": "int32"}, m)
    dy = tf.raw_ops.StridedSlice(input=x, begin=i32(*b), end=i32(*e), strides=i32(*s), **m).numpy()
    dy = rs.randn(*dy.shape).astype(np.float32)
    case(name + "_grad", "StridedSliceGrad", [("shape", i32(3, 4, 5)), ("begin", i32(*b)), ("end", i32(*e)),
                                              ("strides", i32(*s)), ("dy", dy)], {"T": "float32", "Index": "int32"}, m)
case("ss_i64_index", "StridedSlice", [("input", np.arange(10, dtype=np.int64)), ("begin", i64(2)), ("end", i64(9)), ("strides", i64(3))],
     {"T": "int64", "Index": "int64"}, {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0})

# Gathers and scatters
p = f32(10, 4)
case("gather_v1", "Gather", [("params", p), ("indices", i32(1, 3, 9, 0))], {"Tparams": "float32", "Tindices": "int32"}, {"validate_indices": True})
case("gather_v1_2d", "Gather", [("params", p), ("indices", i64(1, 3, 9, 0).reshape(2, 2))], {"Tparams": "float32", "Tindices": "int64"}, {"validate_indices": True})
case("gather_v2_axis1", "GatherV2", [("params", p), ("indices", i32(3, 0, 0)), ("axis", np.int32(1))], {"Tparams": "float32", "Tindices": "int32", "Taxis": "int32"}, {"batch_dims": 0})
case("gather_v2_neg_axis", "GatherV2", [("params", x234), ("indices", i64(3, 1).reshape(2, 1)), ("axis", np.int64(-1))], {"Tparams": "float32", "Tindices": "int64", "Taxis": "int64"}, {"batch_dims": 0})
case("gather_v2_scalar", "GatherV2", [("params", x234), ("indices", np.int32(2)), ("axis", np.int32(1))], {"Tparams": "float32", "Tindices": "int32", "Taxis": "int32"}, {"batch_dims": 0})
case("gather_v2_batch", "GatherV2", [("params", x234), ("indices", i32(0, 2, 1, 1).reshape(2, 2)), ("axis", np.int32(1))], {"Tparams": "float32", "Tindices": "int32", "Taxis": "int32"}, {"batch_dims": 1})
case("gather_v2_batch_neg", "GatherV2", [("params", np.arange(20.).reshape(4, 5)), ("indices", i32(1, 2, 0, 1).reshape(4, 1)), ("axis", np.int32(-1))], {"Tparams": "float64", "Tindices": "int32", "Taxis": "int32"}, {"batch_dims": -1})
case("gather_v2_str", "GatherV2", [("params", strs), ("indices", i32(1, 1)), ("axis", np.int32(0))], {"Tparams": "string", "Tindices": "int32", "Taxis": "int32"}, {"batch_dims": 0})
case("gather_v2_big", "GatherV2", [("params", small_ints(100, 40)), ("indices", rs.randint(0, 100, 900).astype(np.int32)), ("axis", np.int32(0))], {"Tparams": "float32", "Tindices": "int32", "Taxis": "int32"}, {"batch_dims": 0})
case("uss_f32", "UnsortedSegmentSum", [("data", f32(6, 3)), ("segment_ids", i32(0, 2, 0, -1, 3, 2)), ("num_segments", np.int32(5))], {"T": "float32", "Tindices": "int32", "Tnumsegments": "int32"})
case("uss_i32_2d", "UnsortedSegmentSum", [("data", np.arange(12, dtype=np.int32).reshape(2, 3, 2)), ("segment_ids", i64(1, 0, 1, 1, 0, 2).reshape(2, 3)), ("num_segments", np.int64(3))], {"T": "int32", "Tindices": "int64", "Tnumsegments": "int64"})
case("uss_f64", "UnsortedSegmentSum", [("data", rs.randn(5)), ("segment_ids", i32(1, 1, 1, 0, 0)), ("num_segments", np.int32(2))], {"T": "float64", "Tindices": "int32", "Tnumsegments": "int32"})
case("stitch", "DynamicStitch", [("indices", [i32(0, 3), i32(1, 2).reshape(2, 1)]), ("data", [f32(2, 2), f32(2, 1, 2)])], {"T": "float32"})
case("stitch_overwrite", "DynamicStitch", [("indices", [i32(0, 1, 2), i32(1, 4)]), ("data", [i64(1, 2, 3), i64(20, 50)])], {"T": "int64"})
case("tile", "Tile", [("input", f32(2, 3)), ("multiples", i32(2, 3))], {"T": "float32", "Tmultiples": "int32"})
case("tile_3d", "Tile", [("input", np.arange(6, dtype=np.int32).reshape(1, 2, 3)), ("multiples", i64(3, 1, 2))], {"T": "int32", "Tmultiples": "int64"})
case("tile_str", "Tile", [("input", strs), ("multiples", i32(1, 2))], {"T": "string", "Tmultiples": "int32"})
case("broadcast_to", "BroadcastTo", [("input", f32(3, 1)), ("shape", i32(2, 3, 4))], {"T": "float32", "Tidx": "int32"})
case("broadcast_to_bool", "BroadcastTo", [("input", np.array([True, False])), ("shape", i64(3, 2))], {"T": "bool", "Tidx": "int64"})
case("one_hot_last", "OneHot", [("indices", i64(0, 2, -1, 5, 1)), ("depth", np.int32(4)), ("on_value", np.float32(1)), ("off_value", np.float32(0))], {"T": "float32", "TI": "int64"}, {"axis": -1})
case("one_hot_axis0", "OneHot", [("indices", i32(0, 2, 1, 1).reshape(2, 2)), ("depth", np.int32(3)), ("on_value", np.float64(5)), ("off_value", np.float64(-1))], {"T": "float64", "TI": "int32"}, {"axis": 0})
case("one_hot_axis1_u8", "OneHot", [("indices", np.array([[0, 2], [1, 9]], np.uint8)), ("depth", np.int32(3)), ("on_value", np.int32(7)), ("off_value", np.int32(0))], {"T": "int32", "TI": "uint8"}, {"axis": 1})
case("range_i32", "Range", [("start", np.int32(3)), ("limit", np.int32(18)), ("delta", np.int32(4))], {"Tidx": "int32"})
case("range_i64_neg", "Range", [("start", np.int64(10)), ("limit", np.int64(-3)), ("delta", np.int64(-3))], {"Tidx": "int64"})
case("range_f32", "Range", [("start", np.float32(0.1)), ("limit", np.float32(10.0)), ("delta", np.float32(0.1))], {"Tidx": "float32"})
case("range_f64", "Range", [("start", np.float64(-3.3)), ("limit", np.float64(7.1)), ("delta", np.float64(0.7))], {"Tidx": "float64"})
case("pad", "Pad", [("input", f32(2, 3)), ("paddings", i32(1, 2, 0, 1).reshape(2, 2))], {"T": "float32", "Tpaddings": "int32"})
case("pad_3d_i64", "Pad", [("input", np.arange(8, dtype=np.int64).reshape(2, 2, 2)), ("paddings", i64(0, 1, 1, 0, 2, 2).reshape(3, 2))], {"T": "int64", "Tpaddings": "int64"})
case("pad_v2", "PadV2", [("input", f32(2, 2)), ("paddings", i32(1, 1, 1, 1).reshape(2, 2)), ("constant_values", np.float32(-7))], {"T": "float32", "Tpaddings": "int32"})
case("where_f32", "Where", [("input", np.array([[0, 1.5, 0], [2, 0, -1]], np.float32))], {"T": "float32"})
case("where_bool_3d", "Where", [("input", rs.rand(2, 3, 2) > 0.5)], {"T": "bool"})

# Plumbing
case("identity", "Identity", [("input", x234)], {"T": "float32"})
case("identity_str", "Identity", [("input", strs)], {"T": "string"})
case("identity_n", "IdentityN", [("input", [x234, i32(1, 2)])], list_types={"T": ["float32", "int32"]})
case("snapshot", "Snapshot", [("input", i64(5, 6))], {"T": "int64"})
case("stop_gradient", "StopGradient", [("input", x234)], {"T": "float32"})
case("prevent_gradient", "PreventGradient", [("input", x234)], {"T": "float32"}, {"message": "no grad"})
case("placeholder_with_default", "PlaceholderWithDefault", [("input", f32(2, 2))], {"dtype": "float32"},
     py_extra={"shape": [2, 2]})
case("no_op", "NoOp", [])

# Embedding lookups over partitioned variables
case("dynamic_partition", "DynamicPartition", [("data", f32(6, 2)), ("partitions", i32(2, 0, 1, 2, 2, 0))],
     {"T": "float32"}, {"num_partitions": 4})
case("dynamic_partition_2d_i64", "DynamicPartition",
     [("data", np.arange(12, dtype=np.int64).reshape(2, 3, 2)), ("partitions", i32(1, 0, 1, 1, 0, 0).reshape(2, 3))],
     {"T": "int64"}, {"num_partitions": 2})
case("parallel_dynamic_stitch", "ParallelDynamicStitch", [("indices", [i32(0, 3), i32(1, 2, 4)]),
                                                          ("data", [f32(2, 3), f32(3, 3)])], {"T": "float32"})
case("unique_i64", "Unique", [("x", i64(4, 1, 4, 9, 1, 1, 7))], {"T": "int64", "out_idx": "int32"})
case("unique_f32_idx64", "Unique", [("x", np.array([0.5, -2.0, 0.5, 3.0], np.float32))],
     {"T": "float32", "out_idx": "int64"}, py_extra={"out_idx": tf.int64})

for c in cases:
    if c["op"] == "PlaceholderWithDefault":
        c["attrs"]["shape"] = {"shape": [2, 2]}
write("array", cases)
