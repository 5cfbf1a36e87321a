"""Golden values for the normalization and depthwise-convolution kernels from TensorFlow
2.21 (run once with the venv, see common.py): FusedBatchNorm{,V2,V3} and their gradients,
DepthwiseConv2dNative and its two backprops. Every case sets every attr the kernel reads."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from common import case_list, io_case, write  # noqa: E402

rng = np.random.RandomState(20251202)
cases, case = case_list(io_case)

F32 = {"rtol": 1e-4, "atol": 1e-5}
F64 = {"rtol": 1e-12, "atol": 1e-12}


def data(shape, dtype=np.float32, lo=-1.0, hi=1.0):
    """Inputs on a 1/64 grid so they print short and are exact in every dtype."""
    return (np.round(rng.uniform(lo, hi, size=shape) * 64) / 64).astype(dtype)



def bn_attrs(op, eps, factor, fmt, training):
    a = {"T": {"type": "float32"}, "epsilon": {"f": eps}, "data_format": {"s": fmt},
         "is_training": {"b": training}}
    if op != "FusedBatchNormGrad" and not op.startswith("FusedBatchNormGrad"):
        a["exponential_avg_factor"] = {"f": factor}
    if op != "FusedBatchNorm" and op != "FusedBatchNormGrad":
        a["U"] = {"type": "float32"}
    return a


FORWARD = {"FusedBatchNorm": tf.raw_ops.FusedBatchNorm, "FusedBatchNormV2": tf.raw_ops.FusedBatchNormV2,
           "FusedBatchNormV3": tf.raw_ops.FusedBatchNormV3}
GRAD = {"FusedBatchNorm": "FusedBatchNormGrad", "FusedBatchNormV2": "FusedBatchNormGradV2",
        "FusedBatchNormV3": "FusedBatchNormGradV3"}


def channels(shape, fmt):
    return shape[1] if fmt.startswith("NC") else shape[-1]


# ---- FusedBatchNorm{,V2,V3} and FusedBatchNormGrad{,V2,V3} ------------------------------
BN = [
    # (name, op, x shape, format, training, exponential_avg_factor, epsilon, empty stats)
    ("v1_train_nhwc", "FusedBatchNorm", (2, 3, 4, 5), "NHWC", True, 1.0, 0.001, False),
    ("v1_infer_nhwc", "FusedBatchNorm", (2, 3, 4, 5), "NHWC", False, 1.0, 0.001, False),
    ("v2_train_nchw", "FusedBatchNormV2", (2, 4, 3, 3), "NCHW", True, 1.0, 0.0001, False),
    ("v2_infer_nchw", "FusedBatchNormV2", (2, 4, 3, 3), "NCHW", False, 1.0, 0.01, False),
    ("v3_train_nhwc", "FusedBatchNormV3", (4, 5, 5, 8), "NHWC", True, 1.0, 0.001, False),
    ("v3_train_avg", "FusedBatchNormV3", (3, 4, 4, 6), "NHWC", True, 0.01, 0.001, False),
    ("v3_train_avg_nchw", "FusedBatchNormV3", (3, 6, 4, 4), "NCHW", True, 0.5, 0.001, False),
    ("v3_train_empty_stats", "FusedBatchNormV3", (2, 3, 3, 4), "NHWC", True, 1.0, 0.001, True),
    ("v3_infer_nhwc", "FusedBatchNormV3", (4, 5, 5, 8), "NHWC", False, 1.0, 0.001, False),
    ("v3_train_ndhwc", "FusedBatchNormV3", (2, 3, 2, 3, 4), "NDHWC", True, 1.0, 0.001, False),
    ("v3_train_ncdhw", "FusedBatchNormV3", (2, 4, 3, 2, 3), "NCDHW", True, 1.0, 0.001, False),
    ("v3_infer_ncdhw", "FusedBatchNormV3", (2, 4, 3, 2, 3), "NCDHW", False, 1.0, 0.001, False),
    ("v3_train_one_element", "FusedBatchNormV3", (1, 1, 1, 3), "NHWC", True, 1.0, 0.001, False),
    ("v3_train_large", "FusedBatchNormV3", (2, 16, 16, 24), "NHWC", True, 1.0, 0.001, False),
    ("v3_train_large_nchw", "FusedBatchNormV3", (2, 8, 24, 24), "NCHW", True, 1.0, 0.001, False),
]
for name, op, shape, fmt, training, factor, eps, empty in BN:
    c = channels(shape, fmt)
    x = data(shape, lo=-2.0, hi=3.0)
    scale, offset = data((c,), lo=0.5, hi=2.0), data((c,))
    mean = data((0,) if empty else (c,))
    var = data((0,) if empty else (c,), lo=0.25, hi=2.0)
    out = [o.numpy() for o in FORWARD[op](x=x, scale=scale, offset=offset, mean=mean, variance=var, epsilon=eps,
                                           exponential_avg_factor=factor, data_format=fmt,
                                           is_training=training)]
    if not training:
        # TensorFlow's CPU kernel leaves the reserve spaces uninitialized in inference;
        # ferroflow repeats the population statistics there.
        out[3], out[4] = mean, var
    case("bn_" + name, op, bn_attrs(op, eps, factor, fmt, training), [x, scale, offset, mean, var], out, F32)
    # The gradient op on the forward op's reserve spaces (training) or the population
    # statistics (inference), as tf.gradients builds it.
    dy = data(shape)
    gop = GRAD[op]
    r = out[3:] if training else [mean, var, out[5] if len(out) > 5 else None]
    gin = [dy, x, scale, r[0], r[1]] + ([r[2]] if gop == "FusedBatchNormGradV3" else [])
    kw = dict(y_backprop=dy, x=x, scale=scale, reserve_space_1=r[0], reserve_space_2=r[1], epsilon=eps,
              data_format=fmt, is_training=training)
    if gop == "FusedBatchNormGradV3":
        kw["reserve_space_3"] = r[2]
    if empty or (not training and fmt.startswith("NC")):
        # TensorFlow's CPU gradient takes only NHWC in inference (its Python gradient
        # transposes); ferroflow's takes every format (unit-tested).
        continue
    gout = [o.numpy() for o in getattr(tf.raw_ops, gop)(**kw)]
    case("bn_grad_" + name, gop, bn_attrs(gop, eps, factor, fmt, training), gin, gout, F32)

# tf.gradients of tf.compat.v1.nn.fused_batch_norm in one graph: the gradient ops Python
# clients send, checked against the kernel run on the same reserve spaces.
g = tf.Graph()
with g.as_default():
    xs = data((2, 4, 4, 3))
    x = tf.constant(xs)
    scale, offset = tf.constant(data((3,), lo=0.5, hi=2.0)), tf.constant(data((3,)))
    y, bm, bv = tf.compat.v1.nn.fused_batch_norm(x, scale, offset, epsilon=0.001, is_training=True)
    dys = data((2, 4, 4, 3))
    grads = tf.gradients(y, [x, scale, offset], grad_ys=tf.constant(dys))
    gnode = [o for o in g.get_operations() if o.type.startswith("FusedBatchNormGrad")][0]
    fnode = [o for o in g.get_operations() if o.type.startswith("FusedBatchNormV")][0]
    with tf.compat.v1.Session(graph=g) as sess:
        vals = sess.run([list(fnode.outputs), grads, scale, list(gnode.outputs)])
    fo, gr, sc, go = vals
    assert np.allclose(gr[0], go[0]) and np.allclose(gr[1], go[1])
    gin = [dys, xs, sc] + list(fo[3:3 + len(gnode.inputs) - 3])
    case("bn_grad_tf_gradients", gnode.type, bn_attrs(gnode.type, 0.001, 1.0, "NHWC", True), gin, go, F32)

# An empty batch: NaN statistics (TensorFlow leaves the reserve spaces uninitialized; ferroflow
# writes NaN there too), and zero parameter gradients.
x = np.zeros((0, 2, 2, 3), np.float32)
sc, of, m, v = data((3,), lo=0.5), data((3,)), data((3,)), data((3,), lo=0.5)
out = [o.numpy() for o in tf.raw_ops.FusedBatchNormV3(x=x, scale=sc, offset=of, mean=m, variance=v, epsilon=0.001,
                                                      exponential_avg_factor=0.5, is_training=True)]
out[3], out[4] = out[1], out[2]
case("bn_empty_batch", "FusedBatchNormV3", bn_attrs("FusedBatchNormV3", 0.001, 0.5, "NHWC", True),
     [x, sc, of, m, v], out, F32)
gout = [o.numpy() for o in tf.raw_ops.FusedBatchNormGradV3(y_backprop=x, x=x, scale=sc, reserve_space_1=m,
                                                           reserve_space_2=v, reserve_space_3=m, epsilon=0.001,
                                                           is_training=True)]
case("bn_grad_empty_batch", "FusedBatchNormGradV3", bn_attrs("FusedBatchNormGradV3", 0.001, 1.0, "NHWC", True),
     [x, x, sc, m, v, m], gout, F32)

# T = half / bfloat16 (U float): computed in float, x and y rounded.
HALF = {"rtol": 4e-3, "atol": 4e-3}
for dtype, tname in ((np.float16, "float16"), (tf.bfloat16.as_numpy_dtype, "bfloat16")):
    for training in (True, False):
        x = data((2, 3, 3, 4), lo=-2.0, hi=3.0).astype(dtype)
        sc, of, m, v = data((4,), lo=0.5, hi=2.0), data((4,)), data((4,)), data((4,), lo=0.5, hi=2.0)
        out = [o.numpy() for o in tf.raw_ops.FusedBatchNormV3(x=x, scale=sc, offset=of, mean=m, variance=v,
                                                              epsilon=0.001, is_training=training)]
        if not training:
            out[3], out[4] = m, v
        attrs = bn_attrs("FusedBatchNormV3", 0.001, 1.0, "NHWC", training)
        attrs["T"] = {"type": tname}
        case("bn_%s_training%d" % (tname, training), "FusedBatchNormV3", attrs, [x, sc, of, m, v], out, HALF)
        dy = data((2, 3, 3, 4)).astype(dtype)
        r = out[3:] if training else [m, v, out[5]]
        gout = [o.numpy() for o in tf.raw_ops.FusedBatchNormGradV3(
            y_backprop=dy, x=x, scale=sc, reserve_space_1=r[0], reserve_space_2=r[1], reserve_space_3=r[2],
            epsilon=0.001, is_training=training)]
        gattrs = bn_attrs("FusedBatchNormGradV3", 0.001, 1.0, "NHWC", training)
        gattrs["T"] = {"type": tname}
        case("bn_grad_%s_training%d" % (tname, training), "FusedBatchNormGradV3", gattrs, [dy, x, sc] + list(r),
             gout, HALF)

# ---- DepthwiseConv2dNative and its backprops --------------------------------------------
DW = [
    # (name, input shape, filter shape, stride, padding, explicit_paddings)
    ("3x3_same", (2, 7, 7, 4), (3, 3, 4, 1), 1, "SAME", []),
    ("3x3_same_s2", (2, 8, 8, 6), (3, 3, 6, 1), 2, "SAME", []),
    ("5x5_valid_mult2", (1, 9, 8, 3), (5, 5, 3, 2), 1, "VALID", []),
    ("3x2_valid_s2_mult3", (2, 7, 6, 2), (3, 2, 2, 3), 2, "VALID", []),
    ("explicit", (1, 5, 6, 3), (3, 3, 3, 2), 1, "EXPLICIT", [0, 0, 1, 2, 0, 3, 0, 0]),
    ("explicit_s3", (2, 8, 7, 2), (2, 4, 2, 1), 3, "EXPLICIT", [0, 0, 2, 0, 1, 1, 0, 0]),
    ("same_s3_even", (1, 10, 10, 8), (4, 4, 8, 1), 3, "SAME", []),
    ("empty_batch", (0, 5, 5, 2), (3, 3, 2, 2), 1, "SAME", []),
    ("mobilenet_block", (1, 14, 14, 32), (3, 3, 32, 1), 1, "SAME", []),
]
for name, xs, fs, s, pad, explicit in DW:
    for dtype, tname, tol in ((np.float32, "float32", F32), (np.float64, "float64", F64)):
        if name == "mobilenet_block" and dtype == np.float64:
            continue
        x, f = data(xs, dtype), data(fs, dtype)
        attrs = {"T": {"type": tname}, "strides": {"list_i": [1, s, s, 1]}, "padding": {"s": pad},
                 "explicit_paddings": {"list_i": explicit}, "data_format": {"s": "NHWC"},
                 "dilations": {"list_i": [1, 1, 1, 1]}}
        kw = dict(strides=[1, s, s, 1], padding=pad, explicit_paddings=explicit)
        y = tf.raw_ops.DepthwiseConv2dNative(input=x, filter=f, **kw).numpy()
        case("dw_%s_%s" % (name, tname), "DepthwiseConv2dNative", attrs, [x, f], [y], tol)
        dy = data(y.shape, dtype)
        isz, fsz = np.array(xs, np.int32), np.array(fs, np.int32)
        dx = tf.raw_ops.DepthwiseConv2dNativeBackpropInput(input_sizes=isz, filter=f, out_backprop=dy, **kw).numpy()
        case("dw_input_%s_%s" % (name, tname), "DepthwiseConv2dNativeBackpropInput", attrs, [isz, f, dy], [dx], tol)
        df = tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(input=x, filter_sizes=fsz, out_backprop=dy, **kw).numpy()
        if xs[0] == 0:
            # TensorFlow leaves the filter gradient of an empty batch uninitialized; it is zero.
            df = np.zeros_like(df)
        case("dw_filter_%s_%s" % (name, tname), "DepthwiseConv2dNativeBackpropFilter", attrs, [x, fsz, dy], [df],
             tol)

write("nn_norm", cases)
