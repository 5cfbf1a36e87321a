"""Golden values for SerializeSparse, SerializeManySparse (string boxing: serialized
TensorProtos, byte for byte), DeserializeSparse and DeserializeManySparse (TensorFlow 2.21,
eager raw ops): several dtypes and ranks, empty sparse tensors, batch rows without entries,
stacked elements of different dense shapes (the output shape is their maximum), and
two stacking dims. Run as the header of common.py says, with <family> = sparse_serialize."""
import numpy as np
import tensorflow as tf

from common import case_list, write

cases, case = case_list()


def ser(ind, vals, shape):
    return tf.raw_ops.SerializeSparse(sparse_indices=ind, sparse_values=vals, sparse_shape=shape).numpy()


i2 = np.array([[0, 1], [1, 0], [1, 2]], np.int64)
s2 = np.array([2, 3], np.int64)
for dt, vals in [("float32", np.array([1.5, -2.0, 3.25], np.float32)), ("int64", np.array([7, 8, 9], np.int64)),
                 ("int32", np.array([-1, 0, 5], np.int32)), ("string", np.array([b"a", b"", b"xyz"], object)),
                 ("bool", np.array([True, False, True]))]:
    case("serialize_%s" % dt, "SerializeSparse",
         [("sparse_indices", i2), ("sparse_values", vals), ("sparse_shape", s2)], {"T": dt, "out_type": "string"})
case("serialize_empty", "SerializeSparse", [("sparse_indices", np.zeros((0, 3), np.int64)),
                                            ("sparse_values", np.zeros((0,), np.float64)),
                                            ("sparse_shape", np.array([4, 0, 2], np.int64))],
     {"T": "float64", "out_type": "string"})
case("serialize_rank1", "SerializeSparse", [("sparse_indices", np.array([[3]], np.int64)),
                                            ("sparse_values", np.array([2.5], np.float32)),
                                            ("sparse_shape", np.array([5], np.int64))], {"T": "float32", "out_type": "string"})

i3 = np.array([[0, 0, 1], [0, 2, 0], [2, 1, 1], [3, 0, 0], [3, 0, 1]], np.int64)
s3 = np.array([5, 3, 2], np.int64)
v3 = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
case("serialize_many_rank3", "SerializeManySparse", [("sparse_indices", i3), ("sparse_values", v3),
                                                      ("sparse_shape", s3)], {"T": "float32", "out_type": "string"})
case("serialize_many_rank2_int64", "SerializeManySparse",
     [("sparse_indices", i2), ("sparse_values", np.array([4, 5, 6], np.int64)), ("sparse_shape", s2)],
     {"T": "int64", "out_type": "string"})

# Elements of different dense shapes, one empty.
e0 = ser(np.array([[0], [2]], np.int64), np.array([1.0, 2.0], np.float32), np.array([3], np.int64))
e1 = ser(np.zeros((0, 1), np.int64), np.zeros((0,), np.float32), np.array([1], np.int64))
e2 = ser(np.array([[4]], np.int64), np.array([3.0], np.float32), np.array([5], np.int64))
batch = np.array([e0, e1, e2], object)
case("deserialize_many", "DeserializeManySparse", [("serialized_sparse", batch)], {"dtype": "float32"})
case("deserialize_batch", "DeserializeSparse", [("serialized_sparse", batch)],
     {"dtype": "float32", "Tserialized": "string"})
case("deserialize_one", "DeserializeSparse", [("serialized_sparse", e0)], {"dtype": "float32", "Tserialized": "string"})
grid = np.array([[e0, e2], [e1, e0]], object)
case("deserialize_grid", "DeserializeSparse", [("serialized_sparse", grid)],
     {"dtype": "float32", "Tserialized": "string"})
m = tf.raw_ops.SerializeManySparse(sparse_indices=i3, sparse_values=v3, sparse_shape=s3).numpy()
case("deserialize_many_round_trip", "DeserializeManySparse", [("serialized_sparse", m)], {"dtype": "float32"})
strs = ser(i2, np.array([b"p", b"q", b"r"], object), s2)
case("deserialize_strings", "DeserializeSparse", [("serialized_sparse", np.array([strs, strs], object))],
     {"dtype": "string", "Tserialized": "string"})

write("sparse_serialize", cases)
