"""Golden values for the Fourier transform and complex-part kernels (FFT/IFFT/RFFT/IRFFT in
1, 2 and 3 dims, Complex, Real, Imag, ComplexAbs, Angle, Conj) and the complex math their
gradients and tf.signal's DCT use (Exp, Log, Log1p, Sqrt, Rsqrt, Tanh, Sigmoid, Reciprocal,
Sign, DivNoNan, AddN, BatchMatMulV2 with adjoints), computed by TensorFlow 2.21
(tf.raw_ops, CPU), and the error class TensorFlow raises for each bad input.

Run once with the venv from the repo root (see common.py's header):
`.venv/bin/python -P -c "import sys; sys.path.append('scripts/golden'); __file__='scripts/golden/signal.py'; exec(open(__file__).read())"`
writes crates/kernels/tests/golden/signal.json and prints the error classes."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import print_error_classes, tensor, with_tolerance, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261206)
cases = []
TOL = {"float32": (2e-5, 2e-5), "float64": (1e-12, 1e-12)}
CPLX = {"float32": np.complex64, "float64": np.complex128}


def add(name, op, inputs, kwargs, attrs, real_dt):
    """Runs `tf.raw_ops.<op>` on `kwargs` with the type attrs of `attrs` (other than the
    input's own `T`) and records the case."""
    # The type attrs TensorFlow cannot infer from the inputs.
    settable = {"RFFT": "Tcomplex", "IRFFT": "Treal"}.get(op.rstrip("23D"), "Tout")
    types = {k: tf.as_dtype(v["type"]) for k, v in attrs.items() if k == settable}
    out = getattr(R, op)(**{k: tf.constant(v) for k, v in kwargs.items()}, **types)
    c = {"name": name, "op": op, "attrs": attrs, "inputs": [tensor(x) for x in inputs],
         "outputs": [tensor(out.numpy())]}
    r, a = TOL[real_dt]
    cases.append(with_tolerance(c, r, a))


def cplx(dt, shape):
    return (rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(CPLX[dt])


for dt in ["float32", "float64"]:
    ct = "complex64" if dt == "float32" else "complex128"
    # Sizes: powers of two, primes and mixed radices (rustfft's different algorithms).
    for rank, shape in [(1, [3, 8]), (1, [2, 7]), (1, [1, 12]), (1, [60]), (2, [2, 6, 5]), (2, [4, 4]),
                        (3, [2, 3, 4, 5]), (1, [2, 1]), (2, [3, 1, 7])]:
        sfx = "" if rank == 1 else "%dD" % rank
        x = cplx(dt, shape)
        for op in ["FFT", "IFFT"]:
            add("%s%s_%s_%s" % (op, sfx, dt, "x".join(map(str, shape))), op + sfx, [x], {"input": x},
                {"Tcomplex": {"type": ct}}, dt)
    for rank, shape, lengths in [(1, [3, 8], [8]), (1, [2, 9], [9]), (1, [2, 10], [6]), (1, [4, 5], [4]),
                                 (2, [2, 6, 5], [6, 5]), (2, [3, 7, 8], [4, 6]), (3, [2, 3, 4, 6], [3, 4, 6]),
                                 (1, [3, 4], [1])]:
        sfx = "" if rank == 1 else "%dD" % rank
        x = rng.uniform(-2, 2, shape).astype(dt)
        n = np.array(lengths, np.int32)
        tag = "%s_%s_%s" % (dt, "x".join(map(str, shape)), "x".join(map(str, lengths)))
        add("RFFT%s_%s" % (sfx, tag), "RFFT" + sfx, [x, n], {"input": x, "fft_length": n},
            {"Treal": {"type": dt}, "Tcomplex": {"type": ct}}, dt)
        # The inverse of a half spectrum with the input's own sizes (cropped where larger).
        half = list(shape[:-rank]) + [max(l, 1) + 1 for l in lengths[:-1]] + [lengths[-1] // 2 + 2]
        y = cplx(dt, half)
        add("IRFFT%s_%s" % (sfx, tag), "IRFFT" + sfx, [y, n], {"input": y, "fft_length": n},
            {"Treal": {"type": dt}, "Tcomplex": {"type": ct}}, dt)
    # The complex parts.
    re = rng.uniform(-3, 3, [2, 5]).astype(dt)
    im = rng.uniform(-3, 3, [5]).astype(dt)
    add("Complex_%s" % dt, "Complex", [re, im], {"real": re, "imag": im}, {"T": {"type": dt}, "Tout": {"type": ct}}, dt)
    z = cplx(dt, [3, 4])
    z[0, 0] = 0
    z[0, 1] = -1.5
    z[0, 2] = 1j * -2.0
    for op in ["Real", "Imag", "ComplexAbs", "Angle"]:
        add("%s_%s" % (op, dt), op, [z], {"input" if op != "ComplexAbs" else "x": z},
            {"T": {"type": ct}, "Tout": {"type": dt}}, dt)
    add("Conj_%s" % dt, "Conj", [z], {"input": z}, {"T": {"type": ct}}, dt)

    # Complex math the transforms' gradients and tf.signal's DCT use.
    w = cplx(dt, [2, 6])
    w[0, 0] = 0
    for op in ["Exp", "Log", "Log1p", "Sqrt", "Rsqrt", "Tanh", "Sigmoid", "Reciprocal", "Sign"]:
        v = w if op in ("Exp", "Tanh", "Sigmoid", "Sign") else w[1:]
        add("%s_%s" % (op, ct), op, [v], {"x": v}, {"T": {"type": ct}}, dt)
    num, den = cplx(dt, [3, 4]), cplx(dt, [4])
    den[1] = 0
    add("DivNoNan_%s" % ct, "DivNoNan", [num, den], {"x": num, "y": den}, {"T": {"type": ct}}, dt)
    a, b = cplx(dt, [2, 3]), cplx(dt, [2, 3])
    c = {"name": "AddN_%s" % ct, "op": "AddN", "attrs": {"T": {"type": ct}, "N": {"i": 3}},
         "inputs": [tensor(v) for v in (a, b, a)], "outputs": [tensor(R.AddN(inputs=[a, b, a]).numpy())]}
    cases.append(with_tolerance(c, *TOL[dt]))
    for adj_x, adj_y in [(False, False), (True, False), (False, True), (True, True)]:
        x = cplx(dt, [2, 3, 4] if not adj_x else [2, 4, 3])
        y = cplx(dt, [4, 5] if not adj_y else [5, 4])
        out = R.BatchMatMulV2(x=x, y=y, adj_x=adj_x, adj_y=adj_y).numpy()
        c = {"name": "BatchMatMulV2_%s_%d%d" % (ct, adj_x, adj_y), "op": "BatchMatMulV2",
             "attrs": {"T": {"type": ct}, "adj_x": {"b": adj_x}, "adj_y": {"b": adj_y}},
             "inputs": [tensor(x), tensor(y)], "outputs": [tensor(out)]}
        cases.append(with_tolerance(c, *TOL[dt]))

write("signal", cases)

# TensorFlow's error classes for bad input (the kernel tests assert the same codes).
bad = [
    ("FFT of a scalar", lambda: R.FFT(input=tf.constant(1 + 1j, tf.complex64))),
    ("FFT2D of a vector", lambda: R.FFT2D(input=tf.constant([1 + 1j], tf.complex64))),
    ("RFFT fft_length too long", lambda: R.RFFT(input=tf.zeros([2, 4]), fft_length=[5])),
    ("RFFT fft_length negative", lambda: R.RFFT(input=tf.zeros([2, 4]), fft_length=[-1])),
    ("RFFT fft_length wrong size", lambda: R.RFFT(input=tf.zeros([2, 4]), fft_length=[2, 2])),
    ("IRFFT input too short", lambda: R.IRFFT(input=tf.zeros([2, 2], tf.complex64), fft_length=[4])),
    ("Complex shapes", lambda: R.Complex(real=tf.zeros([2]), imag=tf.zeros([3]), Tout=tf.complex64)),
]
print_error_classes(bad)
