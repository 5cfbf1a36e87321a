"""Golden values for the ops the public-API sweep (scripts/compat/sweep.py) found missing:
SpaceToBatchND/BatchToSpaceND, SpaceToBatch/BatchToSpace, SpaceToDepth/DepthToSpace,
ReverseSequence, UniqueWithCounts, ListDiff, InTopKV2/InTopK, LRN/LRNGrad and Cross
(TensorFlow 2.21, eager raw ops). Run as the header of common.py says, with
<family> = sweep_ops."""
import numpy as np
import tensorflow as tf

from common import case_list, dt, write

rs = np.random.RandomState(11)
cases, case = case_list()


f32 = lambda *s: rs.randn(*s).astype(np.float32)  # noqa: E731
i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
i64 = lambda *v: np.array(v, np.int64)  # noqa: E731


def space_batch(name, op, x, block, pads, pad_name, idx=i32):
    """A SpaceToBatchND (`pad_name` "paddings") or BatchToSpaceND ("crops") case: `pads`
    flat, one (before, after) pair per block dimension, of the index type made by `idx`."""
    index = str(idx().dtype)
    case(name, op, [("input", x), ("block_shape", idx(*block)), (pad_name, idx(*pads).reshape(len(block), 2))],
         {"T": dt(x), "Tblock_shape": index, "T" + pad_name: index})


# SpaceToBatchND / BatchToSpaceND: 1 and 2 spatial dims, paddings, a trailing remainder.
x = f32(2, 4, 6, 3)
space_batch("s2b_2d", "SpaceToBatchND", x, (2, 3), (0, 0, 0, 0), "paddings")
space_batch("s2b_2d_pad", "SpaceToBatchND", x, (2, 2), (1, 1, 0, 2), "paddings")
space_batch("s2b_1d_i64", "SpaceToBatchND", np.arange(30, dtype=np.int64).reshape(1, 5, 3, 2), (3,), (1, 0), "paddings",
            idx=i64)
space_batch("s2b_none", "SpaceToBatchND", f32(2, 3), (), (), "paddings")
y = f32(12, 2, 3, 3)
space_batch("b2s_2d", "BatchToSpaceND", y, (2, 3), (0, 0, 0, 0), "crops")
space_batch("b2s_2d_crop", "BatchToSpaceND", y, (2, 3), (1, 2, 0, 3), "crops")
space_batch("b2s_1d_i8", "BatchToSpaceND", rs.randint(-9, 9, (4, 3, 2)).astype(np.int8), (2,), (0, 1), "crops")
case("s2b_legacy", "SpaceToBatch", [("input", x), ("paddings", i32(0, 0, 1, 1).reshape(2, 2))],
     {"T": "float32", "Tpaddings": "int32"}, {"block_size": 2})
case("b2s_legacy", "BatchToSpace", [("input", f32(8, 2, 3, 2)), ("crops", i32(0, 1, 1, 0).reshape(2, 2))],
     {"T": "float32", "Tidx": "int32"}, {"block_size": 2})

# SpaceToDepth / DepthToSpace (NHWC)
case("s2d_2", "SpaceToDepth", [("input", f32(2, 4, 6, 3))], {"T": "float32"}, {"block_size": 2, "data_format": "NHWC"})
case("s2d_3_i32", "SpaceToDepth", [("input", np.arange(36, dtype=np.int32).reshape(1, 3, 6, 2))], {"T": "int32"},
     {"block_size": 3, "data_format": "NHWC"})
case("d2s_2", "DepthToSpace", [("input", f32(2, 2, 3, 8))], {"T": "float32"}, {"block_size": 2, "data_format": "NHWC"})
case("d2s_3_u8", "DepthToSpace", [("input", np.arange(36, dtype=np.uint8).reshape(1, 1, 2, 18))], {"T": "uint8"},
     {"block_size": 3, "data_format": "NHWC"})

# ReverseSequence
case("revseq_b0s1", "ReverseSequence", [("input", f32(3, 5, 2)), ("seq_lengths", i64(5, 0, 3))], {"T": "float32", "Tlen": "int64"},
     {"seq_dim": 1, "batch_dim": 0})
case("revseq_b2s0", "ReverseSequence", [("input", np.arange(24, dtype=np.int32).reshape(4, 3, 2)), ("seq_lengths", i32(2, 4))],
     {"T": "int32", "Tlen": "int32"}, {"seq_dim": 0, "batch_dim": 2})
case("revseq_str", "ReverseSequence", [("input", np.array([[b"a", b"b", b"c"], [b"d", b"e", b"f"]], dtype=object)), ("seq_lengths", i64(2, 3))],
     {"T": "string", "Tlen": "int64"}, {"seq_dim": 1, "batch_dim": 0})

# UniqueWithCounts / ListDiff
case("uwc_i32", "UniqueWithCounts", [("x", i32(4, 1, 4, 2, 1, 4, 7))], {"T": "int32", "out_idx": "int32"})
case("uwc_f32_i64", "UniqueWithCounts", [("x", np.array([0.5, -0.0, 0.0, 0.5, 2.0], np.float32))], {"T": "float32", "out_idx": "int64"})
case("uwc_str", "UniqueWithCounts", [("x", np.array([b"b", b"a", b"b"], dtype=object))], {"T": "string", "out_idx": "int32"})
case("listdiff_i32", "ListDiff", [("x", i32(1, 2, 3, 4, 3, 6)), ("y", i32(3, 5, 1))], {"T": "int32", "out_idx": "int32"})
case("listdiff_f32_i64", "ListDiff", [("x", np.array([1.5, 0.0, -2.0], np.float32)), ("y", np.array([-0.0], np.float32))],
     {"T": "float32", "out_idx": "int64"})

# InTopKV2 / InTopK: ties, out-of-range targets, non-finite rows.
p = f32(6, 5)
p[1, 3] = p[1, 1]
p[4, 2] = np.inf
case("intopk_v2_k2", "InTopKV2", [("predictions", p), ("targets", i32(0, 1, 2, 3, 4, 4)), ("k", np.int32(2))], {"T": "int32"})
case("intopk_v2_k1_i64", "InTopKV2", [("predictions", p), ("targets", i64(1, 3, 0, 7, 2, -1)), ("k", np.int64(1))], {"T": "int64"})
case("intopk_v2_k5", "InTopKV2", [("predictions", p), ("targets", i32(0, 1, 2, 3, 4, 4)), ("k", np.int32(5))], {"T": "int32"})
case("intopk_v1", "InTopK", [("predictions", p), ("targets", i32(4, 3, 2, 1, 0, 0))], {"T": "int32"}, {"k": 3})

# LRN / LRNGrad
lx = f32(2, 3, 2, 7)
lattrs = {"depth_radius": 2, "bias": 1.5, "alpha": 0.3, "beta": 0.75}
case("lrn_r2", "LRN", [("input", lx)], {"T": "float32"}, lattrs, rtol=1e-5)
case("lrn_defaults", "LRN", [("input", f32(1, 2, 2, 12))], {"T": "float32"},
     {"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5}, rtol=1e-5)
ly = tf.raw_ops.LRN(input=lx, **lattrs).numpy()
case("lrn_grad_r2", "LRNGrad", [("input_grads", f32(2, 3, 2, 7)), ("input_image", lx), ("output_image", ly)], {"T": "float32"},
     lattrs, rtol=1e-4, atol=1e-5)

# Cross
case("cross_f32", "Cross", [("a", f32(4, 3)), ("b", f32(4, 3))], {"T": "float32"}, rtol=1e-5)
case("cross_i64", "Cross", [("a", np.arange(6, dtype=np.int64).reshape(2, 3)), ("b", i64(3, -1, 2, 0, 5, -4).reshape(2, 3))],
     {"T": "int64"})

write("sweep_ops", cases)
