"""Golden values for MaxPoolWithArgmax and MaxPoolGradWithArgmax
(TensorFlow 2.21, eager raw ops): SAME and VALID windows that overlap, tile and leave
pixels out, ties (the first maximum in row-major order wins), with and without the batch in
the index, every value type, int64 argmax (TensorFlow's CPU kernels take no other, and it
has no CPU kernel of MaxPoolGradGradWithArgmax at all, whose check is the numeric one of
its gradient). Run as the header of common.py says, with <family> = pool_argmax."""
import numpy as np
import tensorflow as tf

from common import case_list, write

rs = np.random.RandomState(40)
cases, case = case_list()


GEOMS = [("k2s2_valid", [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), ("k3s2_same", [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
         ("k2s1_valid", [1, 2, 3, 1], [1, 1, 1, 1], "VALID"), ("k3s3_same", [1, 3, 2, 1], [1, 3, 2, 1], "SAME")]
for dt in ["float32", "float64", "int32", "int64"]:
    for gi, (gname, ksize, strides, padding) in enumerate(GEOMS):
        # TensorFlow's CPU kernels take int64 argmax only (ferroflow's take int32 too).
        for targ in ["int64"]:
            for batch_in in [False, True]:
                # Small integers make ties common.
                x = rs.randint(-3, 4, (2, 4, 5, 2)).astype(dt)
                name = "%s_%s_%s_%s" % (gname, dt, targ, "b" if batch_in else "nob")
                attrs = {"ksize": ksize, "strides": strides, "padding": padding,
                         "include_batch_in_index": batch_in}
                case("fwd_" + name, "MaxPoolWithArgmax", [("input", x)], {"T": dt, "Targmax": targ}, attrs)
                y, arg = tf.raw_ops.MaxPoolWithArgmax(input=x, ksize=ksize, strides=strides, padding=padding,
                                                      Targmax=tf.as_dtype(targ), include_batch_in_index=batch_in)
                g = rs.randint(-5, 6, y.shape).astype(dt)
                case("grad_" + name, "MaxPoolGradWithArgmax", [("input", x), ("grad", g), ("argmax", arg.numpy())],
                     {"T": dt, "Targmax": targ}, attrs)

write("pool_argmax", cases)
