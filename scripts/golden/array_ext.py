"""Golden values for the extended array kernels: Split/SplitV, All/Any, scans, TopKV2,
ReverseV2, Roll, MirrorPad(Grad), GatherNd/ScatterNd/TensorScatter*, MatrixBandPart,
Diag(Part), LowerBound/UpperBound, Bucketize, ClipByValue, BroadcastArgs, LinSpace,
EnsureShape and Einsum (TensorFlow 2.21, eager raw ops). Run as the header of common.py
says, with <family> = array_ext."""
import numpy as np
import tensorflow as tf

from common import case_list, write

rs = np.random.RandomState(7)
cases, case = case_list()


f32 = lambda *s: rs.randn(*s).astype(np.float32)  # noqa: E731
f64 = lambda *s: rs.randn(*s)  # noqa: E731
i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
i64 = lambda *v: np.array(v, np.int64)  # noqa: E731

# Split / SplitV
x = f32(4, 6)
for n, d in [(2, 0), (3, 1), (2, -1), (1, 0)]:
    case(f"split_{n}_{d}", "Split", [("split_dim", np.int32(d)), ("value", x)], {"T": "float32"}, {"num_split": n},
         py={"split_dim": "axis"})
case("split_f64_3d", "Split", [("split_dim", np.int32(1)), ("value", f64(2, 4, 3))], {"T": "float64"}, {"num_split": 4},
     py={"split_dim": "axis"})
case("split_empty", "Split", [("split_dim", np.int32(1)), ("value", np.zeros((0, 4), np.float32))], {"T": "float32"},
     {"num_split": 2}, py={"split_dim": "axis"})
case("splitv_neg1", "SplitV", [("value", x), ("size_splits", i64(1, -1, 2)), ("split_dim", np.int32(1))],
     {"T": "float32", "Tlen": "int64"}, {"num_split": 3}, py={"split_dim": "axis"})
case("splitv_i32_axis0", "SplitV", [("value", np.arange(24, dtype=np.int32).reshape(4, 3, 2)),
     ("size_splits", i32(3, 0, 1)), ("split_dim", np.int32(-3))], {"T": "int32", "Tlen": "int32"}, {"num_split": 3},
     py={"split_dim": "axis"})
case("splitv_f64", "SplitV", [("value", f64(3, 5)), ("size_splits", i32(2, 3)), ("split_dim", np.int32(-1))],
     {"T": "float64", "Tlen": "int32"}, {"num_split": 2}, py={"split_dim": "axis"})

# All / Any
b = rs.rand(3, 4, 2) > 0.3
for op in ["All", "Any"]:
    case(f"{op.lower()}_axis1", op, [("input", b), ("reduction_indices", np.int32(1))], {"Tidx": "int32"},
         {"keep_dims": False}, py={"reduction_indices": "axis"})
    case(f"{op.lower()}_keep_i64", op, [("input", b), ("reduction_indices", i64(0, -1))], {"Tidx": "int64"},
         {"keep_dims": True}, py={"reduction_indices": "axis"})
    case(f"{op.lower()}_all_axes", op, [("input", b), ("reduction_indices", i32(0, 1, 2))], {"Tidx": "int32"},
         {"keep_dims": False}, py={"reduction_indices": "axis"})
    case(f"{op.lower()}_empty", op, [("input", np.zeros((0, 3), bool)), ("reduction_indices", np.int32(0))],
         {"Tidx": "int32"}, {"keep_dims": False}, py={"reduction_indices": "axis"})

# Scans
xs = f32(3, 4, 5)
for op in ["Cumsum", "Cumprod", "CumulativeLogsumexp"]:
    for ex in [False, True]:
        for rev in [False, True]:
            for ax in [0, 1, -1]:
                case(f"{op.lower()}_{int(ex)}{int(rev)}_{ax}", op, [("x", xs), ("axis", np.int32(ax))],
                     {"T": "float32", "Tidx": "int32"}, {"exclusive": ex, "reverse": rev}, rtol=2e-5, atol=1e-5)
    case(f"{op.lower()}_f64", op, [("x", f64(4, 3)), ("axis", np.int64(1))], {"T": "float64", "Tidx": "int64"},
         {"exclusive": True, "reverse": False})
case("cumsum_i32", "Cumsum", [("x", np.arange(12, dtype=np.int32).reshape(3, 4)), ("axis", np.int32(0))],
     {"T": "int32", "Tidx": "int32"}, {"exclusive": False, "reverse": True})
case("cumprod_i64", "Cumprod", [("x", i64(1, 2, 3, 4, 5)), ("axis", np.int32(0))], {"T": "int64", "Tidx": "int32"},
     {"exclusive": True, "reverse": False})
case("cumsum_empty", "Cumsum", [("x", np.zeros((2, 0), np.float32)), ("axis", np.int32(1))],
     {"T": "float32", "Tidx": "int32"}, {"exclusive": False, "reverse": False})

# TopKV2 (distinct values except the deliberate ties; sorted output)
tk = rs.permutation(40).astype(np.float32).reshape(4, 10)
for k in [0, 1, 3, 10]:
    case(f"topk_{k}", "TopKV2", [("input", tk), ("k", np.int32(k))], {"T": "float32", "Tk": "int32", "index_type": "int32"},
         {"sorted": True})
ties = np.array([[1, 3, 3, 2, 3, 0], [5, 5, 5, 5, 5, 5]], np.float32)
case("topk_ties", "TopKV2", [("input", ties), ("k", np.int32(4))], {"T": "float32", "Tk": "int32", "index_type": "int32"},
     {"sorted": True})
case("topk_f64_i64", "TopKV2", [("input", f64(2, 3, 7)), ("k", np.int64(2))],
     {"T": "float64", "Tk": "int64", "index_type": "int64"}, {"sorted": True}, py={"index_type": "index_type"})
case("topk_i32", "TopKV2", [("input", rs.randint(-50, 50, (3, 8)).astype(np.int32)), ("k", np.int32(3))],
     {"T": "int32", "Tk": "int32", "index_type": "int32"}, {"sorted": True})
case("topk_vec", "TopKV2", [("input", f32(100)), ("k", np.int32(5))], {"T": "float32", "Tk": "int32", "index_type": "int32"},
     {"sorted": True})

# ReverseV2 / Roll
x3 = f32(2, 3, 4)
for name, ax in [("rev_0", i32(0)), ("rev_last", i32(-1)), ("rev_two", i32(0, 2)), ("rev_none", np.zeros(0, np.int32))]:
    case(name, "ReverseV2", [("tensor", x3), ("axis", ax)], {"T": "float32", "Tidx": "int32"})
case("rev_i64", "ReverseV2", [("tensor", np.arange(6, dtype=np.int64).reshape(2, 3)), ("axis", i64(1))],
     {"T": "int64", "Tidx": "int64"})
case("rev_bool", "ReverseV2", [("tensor", b), ("axis", i32(1))], {"T": "bool", "Tidx": "int32"})
case("roll_1", "Roll", [("input", x3), ("shift", np.int32(2)), ("axis", np.int32(2))],
     {"T": "float32", "Tshift": "int32", "Taxis": "int32"})
case("roll_multi", "Roll", [("input", x3), ("shift", i32(-1, 5, 1)), ("axis", i32(0, 1, 1))],
     {"T": "float32", "Tshift": "int32", "Taxis": "int32"})
case("roll_i64", "Roll", [("input", np.arange(10, dtype=np.int32)), ("shift", i64(-13)), ("axis", i64(0))],
     {"T": "int32", "Tshift": "int64", "Taxis": "int64"})

# MirrorPad / MirrorPadGrad
mp = f32(3, 4)
for mode in ["REFLECT", "SYMMETRIC"]:
    p = i32(1, 2, 2, 1) if mode == "REFLECT" else i32(3, 0, 2, 4)
    p = p.reshape(2, 2)
    case(f"mirror_{mode.lower()}", "MirrorPad", [("input", mp), ("paddings", p)], {"T": "float32", "Tpaddings": "int32"},
         {"mode": mode})
    padded = tf.raw_ops.MirrorPad(input=mp, paddings=p, mode=mode).numpy()
    case(f"mirror_grad_{mode.lower()}", "MirrorPadGrad", [("input", f32(*padded.shape)), ("paddings", p)],
         {"T": "float32", "Tpaddings": "int32"}, {"mode": mode})
case("mirror_f64_3d", "MirrorPad", [("input", f64(2, 3, 2)), ("paddings", i64(1, 1, 0, 2, 1, 0).reshape(3, 2))],
     {"T": "float64", "Tpaddings": "int64"}, {"mode": "REFLECT"})
case("mirror_grad_f64", "MirrorPadGrad", [("input", f64(4, 5)), ("paddings", i64(1, 1, 1, 1).reshape(2, 2))],
     {"T": "float64", "Tpaddings": "int64"}, {"mode": "SYMMETRIC"})
case("mirror_i32", "MirrorPad", [("input", np.arange(5, dtype=np.int32)), ("paddings", i32(2, 2).reshape(1, 2))],
     {"T": "int32", "Tpaddings": "int32"}, {"mode": "SYMMETRIC"})

# GatherNd / ScatterNd / TensorScatter*
params = f32(4, 3, 2)
for name, idx in [("gnd_full", i32(0, 1, 1, 3, 2, 0).reshape(2, 3)), ("gnd_rows", i64(3, 0, 1).reshape(3, 1)),
                  ("gnd_batch", i32(0, 0, 1, 1, 2, 2, 3, 0).reshape(2, 2, 2)), ("gnd_depth0", np.zeros((2, 0), np.int32))]:
    case(name, "GatherNd", [("params", params), ("indices", idx)],
         {"Tparams": "float32", "Tindices": str(idx.dtype)}, {"bad_indices_policy": ""})
case("gnd_i64_params", "GatherNd", [("params", np.arange(12, dtype=np.int64).reshape(3, 4)), ("indices", i32(2, 1, 0, 3).reshape(2, 2))],
     {"Tparams": "int64", "Tindices": "int32"}, {"bad_indices_policy": ""})
case("snd_dup", "ScatterNd", [("indices", i32(4, 3, 1, 4).reshape(4, 1)), ("updates", f32(4)), ("shape", i32(8))],
     {"T": "float32", "Tindices": "int32"}, {"bad_indices_policy": ""})
case("snd_slices", "ScatterNd", [("indices", i64(0, 2).reshape(2, 1)), ("updates", f64(2, 3)), ("shape", i64(4, 3))],
     {"T": "float64", "Tindices": "int64"}, {"bad_indices_policy": ""})
base = f32(4, 3)
for op in ["TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub"]:
    case(op.lower(), op, [("tensor", base), ("indices", i32(1, 0, 2, 2).reshape(2, 2)), ("updates", f32(2))],
         {"T": "float32", "Tindices": "int32"}, {"bad_indices_policy": ""})
    case(op.lower() + "_rows", op, [("tensor", base), ("indices", i64(3, 1).reshape(2, 1)), ("updates", f32(2, 3))],
         {"T": "float32", "Tindices": "int64"}, {"bad_indices_policy": ""})
case("tsu_i32", "TensorScatterUpdate", [("tensor", np.arange(5, dtype=np.int32)), ("indices", i32(4, 0).reshape(2, 1)),
     ("updates", i32(-1, -2))], {"T": "int32", "Tindices": "int32"}, {"bad_indices_policy": ""})

# MatrixBandPart / Diag / DiagPart
bp = f32(2, 4, 5)
for lo, hi in [(0, 0), (1, 2), (-1, 0), (0, -1), (-1, -1), (3, 1)]:
    case(f"band_{lo}_{hi}".replace("-", "m"), "MatrixBandPart", [("input", bp), ("num_lower", np.int64(lo)), ("num_upper", np.int64(hi))],
         {"T": "float32", "Tindex": "int64"})
case("band_f64_i32", "MatrixBandPart", [("input", f64(5, 3)), ("num_lower", np.int32(1)), ("num_upper", np.int32(0))],
     {"T": "float64", "Tindex": "int32"})
case("diag_vec", "Diag", [("diagonal", f32(4))], {"T": "float32"})
case("diag_mat", "Diag", [("diagonal", f64(2, 3))], {"T": "float64"})
case("diag_part_vec", "DiagPart", [("input", f32(4, 4))], {"T": "float32"})
case("diag_part_mat", "DiagPart", [("input", np.arange(36, dtype=np.int32).reshape(2, 3, 2, 3))], {"T": "int32"})

# Sorted searches / Bucketize
srt = np.sort(rs.randint(0, 10, (3, 6)), axis=1).astype(np.float32)
vals = rs.randint(-1, 11, (3, 5)).astype(np.float32)
for op in ["LowerBound", "UpperBound"]:
    case(op.lower(), op, [("sorted_inputs", srt), ("values", vals)], {"T": "float32", "out_type": "int32"})
    case(op.lower() + "_i64", op, [("sorted_inputs", srt.astype(np.int64)), ("values", vals.astype(np.int64))],
         {"T": "int64", "out_type": "int64"}, py={"out_type": "out_type"})
bnd = [-1.0, 0.0, 0.5, 2.0]
case("bucketize_f32", "Bucketize", [("input", np.array([-2, -1, -0.5, 0, 0.5, 1, 2, 3], np.float32))], {"T": "float32"},
     {"boundaries": bnd})
case("bucketize_i32", "Bucketize", [("input", i32(-3, -1, 0, 1, 2, 5))], {"T": "int32"}, {"boundaries": bnd})
case("bucketize_f64", "Bucketize", [("input", f64(3, 2))], {"T": "float64"}, {"boundaries": bnd})

# ClipByValue / BroadcastArgs / LinSpace / EnsureShape
cx = f32(3, 4)
case("clip_scalar", "ClipByValue", [("t", cx), ("clip_value_min", np.float32(-0.5)), ("clip_value_max", np.float32(0.5))],
     {"T": "float32"})
case("clip_tensor", "ClipByValue", [("t", cx), ("clip_value_min", f32(3, 4) - 1), ("clip_value_max", np.float32(0.3))],
     {"T": "float32"})
case("clip_i32", "ClipByValue", [("t", i32(-5, 0, 3, 9)), ("clip_value_min", np.int32(-1)), ("clip_value_max", np.int32(4))],
     {"T": "int32"})
case("clip_f64", "ClipByValue", [("t", f64(5)), ("clip_value_min", np.float64(-0.2)), ("clip_value_max", np.float64(0.1))],
     {"T": "float64"})
case("bargs", "BroadcastArgs", [("s0", i32(2, 1, 3)), ("s1", i32(4, 1))], {"T": "int32"})
case("bargs_i64", "BroadcastArgs", [("s0", i64(5)), ("s1", i64(3, 1, 1))], {"T": "int64"})
case("bargs_empty", "BroadcastArgs", [("s0", np.zeros(0, np.int32)), ("s1", i32(2, 0))], {"T": "int32"})
case("linspace", "LinSpace", [("start", np.float32(-1.5)), ("stop", np.float32(2.0)), ("num", np.int32(7))],
     {"T": "float32", "Tidx": "int32"})
case("linspace_one", "LinSpace", [("start", np.float64(3)), ("stop", np.float64(9)), ("num", np.int64(1))],
     {"T": "float64", "Tidx": "int64"})
case("linspace_f64", "LinSpace", [("start", np.float64(0.1)), ("stop", np.float64(-0.7)), ("num", np.int32(11))],
     {"T": "float64", "Tidx": "int32"})
case("ensure_shape", "EnsureShape", [("input", cx)], {"T": "float32"}, {"shape": (3, -1)})

# Einsum
ein = [
    ("matmul", "ij,jk->ik", [(3, 4), (4, 5)]),
    ("batch_matmul", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("mha_scores", "aecd,abcd->acbe", [(2, 5, 3, 4), (2, 6, 3, 4)]),
    ("mha_combine", "acbe,aecd->abcd", [(2, 3, 6, 5), (2, 5, 3, 4)]),
    ("dense", "abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("dense_out", "abcd,cde->abe", [(2, 3, 4, 5), (4, 5, 6)]),
    ("outer", "i,j->ij", [(3,), (4,)]),
    ("dot", "i,i->", [(5,), (5,)]),
    ("ellipsis_bcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ellipsis_lhs", "...ij,jk->...ik", [(2, 3, 3, 4), (4, 2)]),
    ("trace", "ii->", [(4, 4)]),
    ("diag", "ii->i", [(4, 4)]),
    ("transpose", "ijk->kij", [(2, 3, 4)]),
    ("sum", "ij->i", [(3, 4)]),
    ("sum_all", "ij->", [(3, 4)]),
    ("batch_diag", "bii->bi", [(2, 3, 3)]),
    ("repeated_in_two", "iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("sum_one_side", "ij,jk->i", [(3, 4), (4, 5)]),
    ("ellipsis_single", "...ij->...ji", [(2, 3, 4)]),
    ("hadamard", "ij,ij->ij", [(3, 4), (3, 4)]),
]
for name, eq, shapes in ein:
    ops = [f32(*s) for s in shapes]
    case("einsum_" + name, "Einsum", [("inputs", ops)], {"T": "float32"}, {"equation": eq, "N": len(ops)},
         rtol=1e-4, atol=1e-5)
case("einsum_f64", "Einsum", [("inputs", [f64(2, 3, 4), f64(4, 2)])], {"T": "float64"}, {"equation": "bij,jk->bki", "N": 2})
case("einsum_i32", "Einsum", [("inputs", [rs.randint(-3, 4, (3, 4)).astype(np.int32), rs.randint(-3, 4, (4, 2)).astype(np.int32)])],
     {"T": "int32"}, {"equation": "ij,jk->ik", "N": 2})
case("einsum_empty", "Einsum", [("inputs", [np.zeros((0, 3), np.float32), f32(3, 2)])], {"T": "float32"},
     {"equation": "ij,jk->ik", "N": 2})

# MatrixDiagV3 / MatrixDiagPartV3 / MatrixSetDiagV3 and the V1 forms
md = f32(2, 4, 5)
for k, align in [((0, 0), "RIGHT_LEFT"), ((-1, 2), "RIGHT_LEFT"), ((-2, 1), "LEFT_RIGHT"), ((1, 3), "LEFT_LEFT"),
                 ((-3, -1), "RIGHT_RIGHT"), ((2, 2), "LEFT_RIGHT")]:
    kk = np.array(k, np.int32) if k[0] != k[1] else np.int32(k[0])
    tag = f"{k[0]}_{k[1]}_{align.lower()}".replace("-", "m")
    case("diag_part_v3_" + tag, "MatrixDiagPartV3", [("input", md), ("k", kk), ("padding_value", np.float32(9))],
         {"T": "float32"}, {"align": align})
    part = tf.raw_ops.MatrixDiagPartV3(input=md, k=kk, padding_value=np.float32(9), align=align).numpy()
    newd = f32(*part.shape)
    case("set_diag_v3_" + tag, "MatrixSetDiagV3", [("input", md), ("diagonal", newd), ("k", kk)], {"T": "float32"},
         {"align": align})
    case("diag_v3_" + tag, "MatrixDiagV3", [("diagonal", newd), ("k", kk), ("num_rows", np.int32(-1)),
         ("num_cols", np.int32(-1)), ("padding_value", np.float32(-1))], {"T": "float32"}, {"align": align})
    case("diag_v3_fixed_" + tag, "MatrixDiagV3", [("diagonal", newd), ("k", kk), ("num_rows", np.int32(4)),
         ("num_cols", np.int32(5)), ("padding_value", np.float32(0))], {"T": "float32"}, {"align": align})
case("diag_part_v3_f64_wide", "MatrixDiagPartV3", [("input", f64(3, 6)), ("k", i32(-1, 1)), ("padding_value", np.float64(0))],
     {"T": "float64"}, {"align": "RIGHT_LEFT"})
case("matrix_diag_v1", "MatrixDiag", [("diagonal", f32(2, 3))], {"T": "float32"})
case("matrix_diag_part_v1", "MatrixDiagPart", [("input", f64(2, 3, 4))], {"T": "float64"})
case("matrix_set_diag_v1", "MatrixSetDiag", [("input", f32(3, 2)), ("diagonal", f32(2))], {"T": "float32"})

# Linear algebra (float32 and float64, batched)
def spd(*shape):
    a = rs.randn(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


sq = rs.randn(2, 3, 3)
for dt, tol in [(np.float32, 1e-4), (np.float64, None)]:
    name = "f32" if dt == np.float32 else "f64"
    case("det_" + name, "MatrixDeterminant", [("input", sq.astype(dt))], {"T": name.replace("f", "float")}, rtol=tol, atol=tol)
    case("logdet_" + name, "LogMatrixDeterminant", [("input", sq.astype(dt))], {"T": name.replace("f", "float")}, rtol=tol, atol=tol)
    for adj in [False, True]:
        case(f"inverse_{name}_{int(adj)}", "MatrixInverse", [("input", sq.astype(dt))], {"T": name.replace("f", "float")},
             {"adjoint": adj}, rtol=tol, atol=tol)
        case(f"solve_{name}_{int(adj)}", "MatrixSolve", [("matrix", sq.astype(dt)), ("rhs", rs.randn(2, 3, 2).astype(dt))],
             {"T": name.replace("f", "float")}, {"adjoint": adj}, rtol=tol, atol=tol)
    case("cholesky_" + name, "Cholesky", [("input", spd(2, 4, 4).astype(dt))], {"T": name.replace("f", "float")}, rtol=tol, atol=tol)
    tri = np.tril(rs.randn(2, 3, 3)) + 3 * np.eye(3)
    for lower in [True, False]:
        for adj in [False, True]:
            m = tri if lower else np.swapaxes(tri, -1, -2)
            case(f"trisolve_{name}_{int(lower)}{int(adj)}", "MatrixTriangularSolve",
                 [("matrix", m.astype(dt)), ("rhs", rs.randn(2, 3, 4).astype(dt))], {"T": name.replace("f", "float")},
                 {"lower": lower, "adjoint": adj}, rtol=tol, atol=tol)
case("trisolve_bcast", "MatrixTriangularSolve", [("matrix", np.tril(rs.randn(3, 3)) + 3 * np.eye(3)), ("rhs", rs.randn(2, 3, 2))],
     {"T": "float64"}, {"lower": True, "adjoint": False})
case("det_empty_batch", "MatrixDeterminant", [("input", np.zeros((0, 2, 2)))], {"T": "float64"})
case("det_singular", "MatrixDeterminant", [("input", np.array([[1.0, 2.0], [2.0, 4.0]]))], {"T": "float64"})

write("array_ext", cases)
