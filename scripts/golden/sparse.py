"""Golden values for the segment and sparse kernels (TensorFlow 2.21, eager raw ops).
Run from the repo root: .venv/bin/python -P scripts/golden/sparse.py (-P: this folder holds
array.py and random.py, which would shadow the standard library)"""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from common import attr_json, dt, tensor, write  # noqa: E402

rs = np.random.RandomState(7)
cases = []


def case(name, op, args, types=None, attrs=None, rtol=None):
    """args: ordered (name, array); types: {type attr: the input name whose dtype it is, or a
    dtype name}; attrs: the other attrs, passed to TensorFlow too."""
    attrs = attrs or {}
    kw = {k: [tf.constant(np.asarray(x)) for x in v] if isinstance(v, list) else tf.constant(np.asarray(v))
          for k, v in args}
    kw.update(attrs)
    out = getattr(tf.raw_ops, op)(**kw)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    ja = {k: attr_json(v) for k, v in attrs.items()}
    by_name = dict(args)
    for k, v in (types or {}).items():
        src = by_name.get(v)
        ja[k] = {"type": (dt(src[0]) if isinstance(src, list) else dt(src)) if src is not None else v}
    for k, v in args:
        if isinstance(v, list):
            ja["N"] = {"i": len(v)}
    flat = [x for _, v in args for x in (v if isinstance(v, list) else [v])]
    c = {"name": name, "op": op, "attrs": ja, "inputs": [tensor(v) for v in flat],
         "outputs": [tensor(o.numpy()) for o in outs]}
    if rtol:
        c["rtol"] = rtol
    if all(o.dtype.is_integer for o in outs):
        c.update(rtol=0, atol=0)  # indices and integer values: exact
    cases.append(c)


f32 = lambda *s: rs.randn(*s).astype(np.float32)  # noqa: E731
f64 = lambda *s: rs.randn(*s)  # noqa: E731
i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
i64 = lambda *v: np.array(v, np.int64)  # noqa: E731

# Sorted segment reductions: gaps, one row, int types, 3-D data, empty.
SEG = {"T": "data", "Tindices": "segment_ids"}
for op in ["SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd"]:
    short = op[len("Segment"):].lower()
    case(f"seg_{short}_f32", op, [("data", f32(6, 3)), ("segment_ids", i32(0, 0, 2, 2, 2, 4))], SEG)
    case(f"seg_{short}_f64_3d", op, [("data", f64(5, 2, 3)), ("segment_ids", i64(1, 1, 1, 3, 3))], SEG)
    case(f"seg_{short}_i32", op, [("data", np.arange(1, 13, dtype=np.int32).reshape(4, 3) - 5),
                                  ("segment_ids", i32(0, 1, 1, 1))], SEG)
    case(f"seg_{short}_i64_1d", op, [("data", i64(3, -7, 9, 2, 5)), ("segment_ids", i64(0, 0, 0, 2, 2))], SEG)
    case(f"seg_{short}_empty", op, [("data", np.zeros((0, 2), np.float32)), ("segment_ids", i32())], SEG)

# Unsorted max / min / prod: negative ids dropped, empty segments, 2-D ids.
USEG = {"T": "data", "Tindices": "segment_ids", "Tnumsegments": "num_segments"}
for op in ["UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"]:
    short = op[len("UnsortedSegment"):].lower()
    case(f"useg_{short}_f32", op, [("data", f32(6, 3)), ("segment_ids", i32(3, 0, -1, 3, 1, 0)),
                                   ("num_segments", np.int32(5))], USEG)
    case(f"useg_{short}_f64_2d_ids", op, [("data", f64(2, 3, 2)), ("segment_ids", i64(1, 0, 1, 1, 0, 2).reshape(2, 3)),
                                          ("num_segments", np.int64(4))], USEG)
    case(f"useg_{short}_i32", op, [("data", i32(4, -2, 7, 1, 3)), ("segment_ids", i32(1, 1, 0, 1, -1)),
                                   ("num_segments", np.int32(3))], USEG)
    case(f"useg_{short}_i64", op, [("data", i64(4, -2, 7, 1, 3)), ("segment_ids", i64(2, 2, 0, 0, 0)),
                                   ("num_segments", np.int32(3))], USEG)

# Sparse segment reductions.
SS = {"T": "data", "Tidx": "indices", "Tsegmentids": "segment_ids"}
SSN = dict(SS, Tnumsegments="num_segments")
for kind in ["Sum", "Mean", "SqrtN"]:
    op = "SparseSegment" + kind
    k = kind.lower()
    case(f"ss_{k}_f32", op, [("data", f32(5, 4)), ("indices", i32(0, 3, 3, 1, 4, 2)),
                             ("segment_ids", i32(0, 0, 1, 3, 3, 3))], SS, {"sparse_gradient": False})
    case(f"ss_{k}_f64_i64", op, [("data", f64(4, 2, 2)), ("indices", i64(3, 2, 0)),
                                 ("segment_ids", i64(1, 1, 2))], SS, {"sparse_gradient": False})
    case(f"ss_{k}_f32_mixed_ids", op, [("data", f32(3, 2)), ("indices", i64(2, 0)),
                                       ("segment_ids", i32(0, 0))], SS, {"sparse_gradient": False})
    case(f"ss_{k}_empty", op, [("data", f32(3, 2)), ("indices", i32()), ("segment_ids", i32())], SS,
         {"sparse_gradient": False})
    case(f"ss_{k}_num_f32", op + "WithNumSegments",
         [("data", f32(5, 3)), ("indices", i32(4, 0, 1)), ("segment_ids", i32(1, 1, 2)), ("num_segments", np.int32(5))],
         SSN, {"sparse_gradient": False})
    case(f"ss_{k}_num_f64", op + "WithNumSegments",
         [("data", f64(5)), ("indices", i64(4, 0, 1, 1)), ("segment_ids", i64(0, 0, 0, 2)),
          ("num_segments", np.int64(3))], SSN, {"sparse_gradient": False})
    # The gradient ops: dense (V1, what tf.gradients emits) and V2 (sparse_gradient=True).
    GR = {"T": "grad", "Tidx": "indices", "Tsegmentids": "segment_ids"}
    case(f"ss_{k}_grad_f32", op + "Grad", [("grad", f32(4, 3)), ("indices", i32(0, 3, 3, 1, 4, 2)),
                                           ("segment_ids", i32(0, 0, 1, 3, 3, 3)), ("output_dim0", np.int32(6))], GR)
    case(f"ss_{k}_grad_f64_unsorted", op + "Grad", [("grad", f64(3, 2)), ("indices", i64(2, 2, 0, 1)),
                                                    ("segment_ids", i64(2, 0, 0, 2)), ("output_dim0", np.int32(3))], GR)
    case(f"ss_{k}_gradv2_f32", op + "GradV2",
         [("grad", f32(4, 3)), ("indices", i32(5, 3, 3, 1, 5, 2)), ("segment_ids", i32(0, 0, 1, 3, 3, 3)),
          ("dense_output_dim0", np.int32(6))], GR)
    case(f"ss_{k}_gradv2_f64_i64", op + "GradV2",
         [("grad", f64(2, 2)), ("indices", i64(7, 0, 7)), ("segment_ids", i32(0, 1, 1)),
          ("dense_output_dim0", np.int32(8))], GR)
case("ss_sum_i32", "SparseSegmentSum", [("data", np.arange(12, dtype=np.int32).reshape(4, 3)),
                                        ("indices", i32(3, 1, 1, 0)), ("segment_ids", i32(0, 0, 2, 2))], SS,
     {"sparse_gradient": False})
case("ss_sum_i64", "SparseSegmentSum", [("data", i64(5, -3, 9)), ("indices", i64(2, 2, 1)),
                                        ("segment_ids", i64(0, 1, 1))], SS, {"sparse_gradient": False})

# SparseToDense: 2-D, 1-D and scalar values, strings, validate off with unsorted indices.
TD = {"T": "sparse_values", "Tindices": "sparse_indices"}
case("to_dense_2d_f32", "SparseToDense", [("sparse_indices", i64(0, 1, 1, 0, 2, 3).reshape(3, 2)),
                                          ("output_shape", i64(3, 4)), ("sparse_values", f32(3)),
                                          ("default_value", np.float32(-1))], TD, {"validate_indices": True})
case("to_dense_1d_i32", "SparseToDense", [("sparse_indices", i32(0, 3, 4)), ("output_shape", i32(6)),
                                          ("sparse_values", np.int32(7)), ("default_value", np.int32(0))], TD,
     {"validate_indices": True})
case("to_dense_unsorted_f64", "SparseToDense", [("sparse_indices", i32(2, 1, 0, 0).reshape(2, 2)),
                                                ("output_shape", i32(3, 2)), ("sparse_values", f64(2)),
                                                ("default_value", np.float64(0.5))], TD, {"validate_indices": False})
case("to_dense_str", "SparseToDense", [("sparse_indices", i64(1, 2)), ("output_shape", i64(4)),
                                       ("sparse_values", np.array([b"a", b"bc"], dtype=object)),
                                       ("default_value", np.array(b"", dtype=object))], TD, {"validate_indices": True})
case("to_dense_empty", "SparseToDense", [("sparse_indices", np.zeros((0, 2), np.int64)), ("output_shape", i64(2, 2)),
                                         ("sparse_values", np.zeros((0,), np.float32)),
                                         ("default_value", np.float32(3))], TD, {"validate_indices": True})

# SparseReshape: -1, rank change, empty.
IDX = i64(0, 0, 0, 1, 1, 2, 1, 0, 1, 2, 3, 3).reshape(4, 3)
case("reshape_infer", "SparseReshape", [("input_indices", IDX), ("input_shape", i64(3, 4, 5)),
                                        ("new_shape", i64(-1, 10))])
case("reshape_rank4", "SparseReshape", [("input_indices", IDX), ("input_shape", i64(3, 4, 5)),
                                        ("new_shape", i64(2, 3, 2, 5))])
case("reshape_flat", "SparseReshape", [("input_indices", IDX), ("input_shape", i64(3, 4, 5)), ("new_shape", i64(-1))])
case("reshape_empty", "SparseReshape", [("input_indices", np.zeros((0, 2), np.int64)), ("input_shape", i64(0, 4)),
                                        ("new_shape", i64(2, -1))])

# SparseFillEmptyRows: empty rows, unsorted rows, strings, no entries; and its gradient op.
FE = {"T": "values"}
case("fill_empty_f32", "SparseFillEmptyRows", [("indices", i64(1, 0, 1, 3, 4, 1, 3, 2).reshape(4, 2)),
                                               ("values", f32(4)), ("dense_shape", i64(6, 5)),
                                               ("default_value", np.float32(9))], FE)
case("fill_empty_unsorted_i64", "SparseFillEmptyRows", [("indices", i64(3, 0, 0, 1, 3, 2, 0, 0).reshape(4, 2)),
                                                        ("values", i64(10, 11, 12, 13)), ("dense_shape", i64(4, 3)),
                                                        ("default_value", np.int64(-1))], FE)
case("fill_empty_str", "SparseFillEmptyRows", [("indices", i64(0, 2).reshape(2, 1)), ("values", np.array([b"x", b"y"], dtype=object)),
                                               ("dense_shape", i64(3)), ("default_value", np.array(b"?", dtype=object))],
     FE)
case("fill_empty_none", "SparseFillEmptyRows", [("indices", np.zeros((0, 2), np.int64)),
                                                ("values", np.zeros((0,), np.float64)), ("dense_shape", i64(2, 3)),
                                                ("default_value", np.float64(1))], FE)
case("fill_empty_grad_f32", "SparseFillEmptyRowsGrad", [("reverse_index_map", i64(3, 0, 4)),
                                                        ("grad_values", f32(6))], {"T": "grad_values"})
case("fill_empty_grad_f64", "SparseFillEmptyRowsGrad", [("reverse_index_map", i64(1, 0)),
                                                        ("grad_values", f64(2))], {"T": "grad_values"})

# SparseReorder.
case("reorder_f32", "SparseReorder", [("input_indices", i64(1, 2, 0, 3, 1, 0, 0, 1).reshape(4, 2)),
                                      ("input_values", f32(4)), ("input_shape", i64(2, 4))], {"T": "input_values"})
case("reorder_3d_i32", "SparseReorder", [("input_indices", IDX[::-1].copy()), ("input_values", i32(1, 2, 3, 4)),
                                         ("input_shape", i64(3, 4, 5))], {"T": "input_values"})

# SparseTensorDenseMatMul: adjoints, int32 indices, float64.
MM = {"T": "a_values", "Tindices": "a_indices"}
AI = i64(0, 0, 0, 2, 1, 1, 2, 3, 2, 0).reshape(5, 2)
for adj_a in (False, True):
    for adj_b in (False, True):
        a_shape = i64(4, 3) if adj_a else i64(3, 4)
        ai = AI[:, ::-1].copy() if adj_a else AI
        b = f32(5, 4) if adj_b else f32(4, 5)
        case(f"spmm_{int(adj_a)}{int(adj_b)}", "SparseTensorDenseMatMul",
             [("a_indices", ai), ("a_values", f32(5)), ("a_shape", a_shape), ("b", b)], MM,
             {"adjoint_a": adj_a, "adjoint_b": adj_b})
case("spmm_f64_i32", "SparseTensorDenseMatMul", [("a_indices", AI.astype(np.int32)), ("a_values", f64(5)),
                                                 ("a_shape", i64(3, 4)), ("b", f64(4, 2))], MM,
     {"adjoint_a": False, "adjoint_b": False})

# SparseTensorDenseAdd.
DA = {"T": "a_values", "Tindices": "a_indices"}
case("dense_add_f32", "SparseTensorDenseAdd", [("a_indices", AI), ("a_values", f32(5)), ("a_shape", i64(3, 4)),
                                               ("b", f32(3, 4))], DA)
case("dense_add_i32_idx32", "SparseTensorDenseAdd", [("a_indices", i32(0, 2, 0).reshape(3, 1)), ("a_values", i32(5, 6, 7)),
                                                     ("a_shape", i32(4)), ("b", i32(1, 1, 1, 1))], DA)

# Bincounts.
case("bincount_w", "Bincount", [("arr", i32(1, 1, 3, 0, 7, 3, 3)), ("size", np.int32(5)), ("weights", f32(7))],
     {"T": "weights"})
case("bincount_no_w", "Bincount", [("arr", i32(2, 2, 0, 9).reshape(2, 2)), ("size", np.int32(4)),
                                   ("weights", np.zeros((0,), np.int32))], {"T": "weights"})
DB = {"Tidx": "input", "T": "weights"}
case("dense_bincount_1d", "DenseBincount", [("input", i32(1, 4, 4, 0)), ("size", np.int32(6)),
                                            ("weights", np.zeros((0,), np.float32))], DB, {"binary_output": False})
case("dense_bincount_2d_w", "DenseBincount", [("input", i64(1, 2, 2, 0, 5, 1).reshape(2, 3)), ("size", np.int64(4)),
                                              ("weights", f64(2, 3))], DB, {"binary_output": False})
case("dense_bincount_binary", "DenseBincount", [("input", i32(1, 2, 2, 0, 3, 3).reshape(2, 3)), ("size", np.int32(4)),
                                                ("weights", np.zeros((0,), np.int64))], DB, {"binary_output": True})
SB = {"Tidx": "values", "T": "weights"}
case("sparse_bincount_2d", "SparseBincount", [("indices", i64(0, 0, 0, 2, 2, 1, 2, 3).reshape(4, 2)),
                                              ("values", i32(1, 1, 3, 0)), ("dense_shape", i64(3, 4)),
                                              ("size", np.int32(4)), ("weights", f32(4))], SB, {"binary_output": False})
case("sparse_bincount_1d_binary", "SparseBincount", [("indices", i64(0, 3, 5).reshape(3, 1)),
                                                     ("values", i64(2, 2, 1)), ("dense_shape", i64(8)),
                                                     ("size", np.int64(3)), ("weights", np.zeros((0,), np.int32))],
     SB, {"binary_output": True})

# SparseConcat, SparseSlice, SparseAdd, SparseReduceSum, SparseSoftmax.
A_I, A_V, A_S = i64(0, 2, 1, 0, 1, 1).reshape(3, 2), f32(3), i64(2, 3)
B_I, B_V, B_S = i64(0, 1, 0, 2).reshape(2, 2), f32(2), i64(2, 4)
case("concat_dim1", "SparseConcat", [("indices", [A_I, B_I]), ("values", [A_V, B_V]), ("shapes", [A_S, B_S])],
     {"T": "values"}, {"concat_dim": 1})
case("concat_dim0_neg", "SparseConcat", [("indices", [A_I, A_I]), ("values", [A_V, A_V * 2]), ("shapes", [A_S, A_S])],
     {"T": "values"}, {"concat_dim": -2})
case("concat_three_i64", "SparseConcat", [("indices", [i64(1).reshape(1, 1), i64(0, 2).reshape(2, 1),
                                                       np.zeros((0, 1), np.int64)]),
                                          ("values", [i64(5), i64(6, 7), np.zeros((0,), np.int64)]),
                                          ("shapes", [i64(2), i64(3), i64(4)])], {"T": "values"}, {"concat_dim": 0})
SL_I = i64(0, 0, 0, 3, 1, 1, 1, 4, 2, 2, 3, 0).reshape(6, 2)
case("slice_mid", "SparseSlice", [("indices", SL_I), ("values", f32(6)), ("shape", i64(4, 5)), ("start", i64(0, 1)),
                                  ("size", i64(2, 3))], {"T": "values"})
case("slice_clip", "SparseSlice", [("indices", SL_I), ("values", np.arange(6, dtype=np.int32)), ("shape", i64(4, 5)),
                                   ("start", i64(1, 0)), ("size", i64(9, 9))], {"T": "values"})
case("slice_empty", "SparseSlice", [("indices", SL_I), ("values", f64(6)), ("shape", i64(4, 5)), ("start", i64(3, 3)),
                                    ("size", i64(1, 2))], {"T": "values"})
ADD_B_I = i64(0, 2, 1, 1, 1, 2).reshape(3, 2)
case("add_f32", "SparseAdd", [("a_indices", A_I[[0, 2, 1]]), ("a_values", f32(3)), ("a_shape", A_S),
                              ("b_indices", ADD_B_I), ("b_values", f32(3)), ("b_shape", A_S),
                              ("thresh", np.float32(0))], {"T": "a_values", "Treal": "thresh"})
case("add_thresh_f64", "SparseAdd", [("a_indices", i64(0, 1, 3).reshape(3, 1)), ("a_values", np.array([1.0, 0.5, 2.0])),
                                     ("a_shape", i64(5)), ("b_indices", i64(1, 3, 4).reshape(3, 1)),
                                     ("b_values", np.array([-0.45, 1.0, 0.01])), ("b_shape", i64(5)),
                                     ("thresh", np.float64(0.1))], {"T": "a_values", "Treal": "thresh"})
case("add_i32", "SparseAdd", [("a_indices", i64(0, 2).reshape(2, 1)), ("a_values", i32(3, 4)), ("a_shape", i64(3)),
                              ("b_indices", i64(2).reshape(1, 1)), ("b_values", i32(-4)), ("b_shape", i64(3)),
                              ("thresh", np.int32(1))], {"T": "a_values", "Treal": "thresh"})
R_I = i64(0, 0, 1, 0, 2, 0, 1, 1, 0, 1, 1, 3, 1, 2, 2).reshape(5, 3)
for axes, keep in [((1,), False), ((0, 2), True), ((-1,), False), ((0, 1, 2), False)]:
    case(f"reduce_sum_{'_'.join(str(a) for a in axes)}_{int(keep)}", "SparseReduceSum",
         [("input_indices", R_I), ("input_values", f32(5)), ("input_shape", i64(2, 3, 4)),
          ("reduction_axes", np.array(axes, np.int32))], {"T": "input_values"}, {"keep_dims": keep})
case("reduce_sum_i64", "SparseReduceSum", [("input_indices", R_I), ("input_values", i64(1, 2, 3, 4, 5)),
                                          ("input_shape", i64(2, 3, 4)), ("reduction_axes", i32(0))],
     {"T": "input_values"}, {"keep_dims": False})
case("softmax_2d", "SparseSoftmax", [("sp_indices", i64(0, 0, 0, 3, 1, 1, 2, 0, 2, 1, 2, 4).reshape(6, 2)),
                                     ("sp_values", f32(6)), ("sp_shape", i64(3, 5))], {"T": "sp_values"})
case("softmax_3d_f64", "SparseSoftmax", [("sp_indices", R_I), ("sp_values", f64(5)), ("sp_shape", i64(2, 3, 4))],
     {"T": "sp_values"})

# Feature-column crosses: sparse string x sparse int64 x dense string, hashed and not.
def X(*v):
    return np.array([x.encode() for x in v], dtype=object)


CR_IDX = [i64(0, 0, 0, 1, 2, 0).reshape(3, 2), i64(0, 0, 1, 0, 2, 0, 2, 1).reshape(4, 2)]
CR_VAL = [X("a", "b", "c"), i64(7, 8, -9, 10)]
CR_SHP = [i64(3, 2), i64(3, 2)]
CR_DENSE = [X("u", "v", "w").reshape(3, 1)]


def cross_case(name, op, attrs, extra_args=(), vals=None):
    vals = vals or CR_VAL
    args = [("indices", CR_IDX), ("values", vals), ("shapes", CR_SHP), ("dense_inputs", CR_DENSE)] + list(extra_args)
    kw = {k: [tf.constant(x) for x in v] for k, v in args[:4]}
    kw.update({k: tf.constant(v) for k, v in args[4:]})
    out = getattr(tf.raw_ops, op)(**kw, **{k: v for k, v in attrs.items() if not k.endswith("types")})
    ja = {k: attr_json(v) for k, v in attrs.items() if not k.endswith("types") and k not in ("out_type", "internal_type")}
    ja["N"] = {"i": 2}
    ja["sparse_types"] = {"list_type": [tensor(v)["dtype"] for v in vals]}
    ja["dense_types"] = {"list_type": ["string"]}
    for k in ("out_type", "internal_type"):
        if k in attrs:
            ja[k] = {"type": attrs[k].name}
    flat = CR_IDX + vals + CR_SHP + CR_DENSE + [v for _, v in extra_args]
    cases.append({"name": name, "op": op, "attrs": ja, "inputs": [tensor(v) for v in flat],
                  "outputs": [tensor(o.numpy()) for o in out], "rtol": 0, "atol": 0})


cross_case("cross_v1_str", "SparseCross", {"hashed_output": False, "num_buckets": 0, "hash_key": 0,
                                           "out_type": tf.string, "internal_type": tf.string},
           vals=[CR_VAL[0], X("7", "8", "-9", "10")])
cross_case("cross_v1_hashed", "SparseCross", {"hashed_output": True, "num_buckets": 100, "hash_key": 0xDECAFCAFFE,
                                              "out_type": tf.int64, "internal_type": tf.int64})
cross_case("cross_v1_hashed_nobuckets", "SparseCross", {"hashed_output": True, "num_buckets": 0, "hash_key": 12345,
                                                        "out_type": tf.int64, "internal_type": tf.int64})
cross_case("cross_v2", "SparseCrossV2", {}, [("sep", np.array(b"|", dtype=object))])
# SparseCrossHashed: not implemented yet (its hash key differs from SparseCross's).

write("sparse", cases)
