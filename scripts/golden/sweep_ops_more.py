"""Golden values for the second batch of ops the public-API sweep (scripts/compat/sweep.py)
found missing: the modified Bessel functions BesselI0, BesselI0e, BesselI1, BesselI1e
(every float type, both branches of ferroflow's evaluation: the power series up to |x| = 30
and the asymptotic expansion beyond) and HistogramFixedWidth (TensorFlow 2.21, eager raw
ops). Run as the header of common.py says, with <family> = sweep_ops_more."""
import numpy as np
import tensorflow as tf

from common import case_list, write

rs = np.random.RandomState(38)
cases, case = case_list()


X = np.concatenate([rs.uniform(-40, 40, 24), [0.0, -0.0, 1e-8, -1e-8, 0.5, 29.99, 30.0, 30.01, -30.5, 85.0, 200.0,
                                              -700.0, 1e4, np.inf, -np.inf, np.nan]])
TOL = {"float64": 1e-13, "float32": 2e-6, "float16": 2e-3, "bfloat16": 1.6e-2}
for op in ["BesselI0", "BesselI0e", "BesselI1", "BesselI1e"]:
    for dt in ["float64", "float32", "float16", "bfloat16"]:
        x = X if op.endswith("e") else X[np.abs(np.nan_to_num(X, posinf=0, neginf=0)) < 80]
        if dt in ("float16", "bfloat16") and not op.endswith("e"):
            x = x[np.abs(np.nan_to_num(x, posinf=0, neginf=0)) < 10]
        arr = x.astype(np.float32).astype(tf.as_dtype(dt).as_numpy_dtype) if dt == "bfloat16" else x.astype(dt)
        try:
            case("%s_%s" % (op, dt), op, [("x", arr)], {"T": dt}, rtol=TOL[dt], atol=TOL[dt] * 1e-3)
        except tf.errors.NotFoundError:
            # TensorFlow has no CPU kernel of this op for bfloat16 (ferroflow has one).
            assert dt == "bfloat16", (op, dt)

# HistogramFixedWidth: values inside, below and above the range, both value types, both
# output types.
v = np.concatenate([rs.uniform(-1, 6, 40), [-3.0, 0.0, 5.0, 7.5, 4.999999]])
case("hist_f32", "HistogramFixedWidth", [("values", v.astype(np.float32)), ("value_range", np.array([0, 5], np.float32)),
                                         ("nbins", np.array(7, np.int32))], {"T": "float32", "dtype": "int32"})
case("hist_f64_i64", "HistogramFixedWidth",
     [("values", v.reshape(5, 9)), ("value_range", np.array([-1.5, 4.25])), ("nbins", np.array(10, np.int32))],
     {"T": "float64", "dtype": "int64"})
case("hist_i32", "HistogramFixedWidth", [("values", rs.randint(-5, 30, 50).astype(np.int32)),
                                         ("value_range", np.array([0, 25], np.int32)), ("nbins", np.array(4, np.int32))],
     {"T": "int32", "dtype": "int32"})
case("hist_i64_one_bin", "HistogramFixedWidth",
     [("values", rs.randint(-5, 30, 12).astype(np.int64)), ("value_range", np.array([0, 3], np.int64)),
      ("nbins", np.array(1, np.int32))], {"T": "int64", "dtype": "int64"})

write("sweep_ops_more", cases)
