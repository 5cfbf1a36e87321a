"""Golden values for tf.math.special's Bessel functions of integer order (J0, J1, Y0, Y1, K0,
K1 and the scaled K0e, K1e), Dawson's integral, the exponential integral Ei, the Fresnel
integrals and Spence's function (TensorFlow 2.21, eager raw ops), in float64 over each
function's domain and its edges (0, negative values, ±inf, NaN), and in float32 on
moderate arguments (TensorFlow's float32 kernels compute in float32, ferroflow's in float64
rounded once: the tolerance covers TensorFlow's error). Run as the header of common.py
says, with <family> = special_fns."""
import numpy as np
import tensorflow as tf
from common import case_list, raw_op_case, write

cases, case = case_list()
rs = np.random.RandomState(11)
WIDE = np.concatenate([rs.uniform(0.01, 2.5, 20), rs.uniform(2.5, 30.0, 20), [1e-4, 1.5, 2.0, 40.0, 39.99, 60.0,
                                                                              120.0, 500.0]])
EDGES = np.array([0.0, -0.5, -3.0, np.inf, -np.inf, np.nan])
SIGNED = np.concatenate([WIDE, -WIDE[:10]])
DOMAIN = {
    "BesselJ0": (SIGNED, True), "BesselJ1": (SIGNED, True), "BesselY0": (WIDE, True), "BesselY1": (WIDE, True),
    "BesselK0": (WIDE, True), "BesselK0e": (WIDE, True), "BesselK1": (WIDE, True), "BesselK1e": (WIDE, True),
    "Dawsn": (np.concatenate([SIGNED, [9.99, 10.0, 10.01, 1e3, 1e8]]), True),
    "Expint": (np.concatenate([WIDE[WIDE < 700], [700.0]]), True),
    "FresnelCos": (np.concatenate([SIGNED, [1.4999, 1.5001, 1e3]]), True),
    "FresnelSin": (np.concatenate([SIGNED, [1.4999, 1.5001, 1e3]]), True),
    "Spence": (np.concatenate([rs.uniform(0.0, 3.0, 30), [0.5, 1.0, 1.5, 2.0, 1e-9, 1e3, 1e8]]), False),
}
for op, (x, with_edges) in DOMAIN.items():
    x64 = np.concatenate([x, EDGES]) if with_edges else np.concatenate([x, EDGES[[0, 1, 3, 5]]])
    # Away from the roots of J and Y the relative tolerance binds; near them the absolute.
    case(op.lower() + "_f64", op, [("x", tf.constant(x64))], {"T": "float64"}, rtol=1e-11, atol=1e-13)
    x32 = x[np.abs(x) <= 20.0].astype(np.float32)
    case(op.lower() + "_f32", op, [("x", x32)], {"T": "float32"}, rtol=2e-5, atol=2e-6)
write("special_fns", cases)
