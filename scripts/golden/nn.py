"""Golden values for the nn kernels from TensorFlow 2.21 (run once with the venv:
`.venv/bin/python scripts/golden/nn.py`). Every case sets every attr the kernel reads."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from common import case_list, io_case, write  # noqa: E402

rng = np.random.RandomState(20240521)
cases, case = case_list(io_case)

F32 = {"rtol": 1e-5, "atol": 1e-6}
F64 = {"rtol": 1e-12, "atol": 1e-12}
# Long f32 reductions (convolutions, big products) are summed in a different order.
F32_SUM = {"rtol": 1e-4, "atol": 1e-4}


def data(shape, dtype=np.float32, scale=1.0):
    """Inputs on a 1/64 grid so they print short and are exact in every dtype."""
    x = np.round(rng.uniform(-1.0, 1.0, size=shape) * scale * 64) / 64
    return x.astype(dtype)


def tname(dtype):
    return {np.float32: "float32", np.float64: "float64", np.int32: "int32", np.int64: "int64"}[dtype]



def tol_for(dtype, big=False):
    if dtype == np.float64:
        return F64
    if dtype in (np.int32, np.int64):
        return {"rtol": 0, "atol": 0}
    return F32_SUM if big else F32


# ---- MatMul ----------------------------------------------------------------------------
for dtype in (np.float32, np.float64, np.int32, np.int64):
    for ta in (False, True):
        for tb in (False, True):
            a = data((4, 3) if ta else (3, 4), dtype) if dtype in (np.float32, np.float64) else \
                rng.randint(-9, 9, size=(4, 3) if ta else (3, 4)).astype(dtype)
            b = data((5, 4) if tb else (4, 5), dtype) if dtype in (np.float32, np.float64) else \
                rng.randint(-9, 9, size=(5, 4) if tb else (4, 5)).astype(dtype)
            out = tf.raw_ops.MatMul(a=a, b=b, transpose_a=ta, transpose_b=tb).numpy()
            case("matmul_%s_ta%d_tb%d" % (tname(dtype), ta, tb), "MatMul",
                 {"T": {"type": tname(dtype)}, "transpose_a": {"b": ta}, "transpose_b": {"b": tb}},
                 [a, b], out, tol_for(dtype))
a, b = data((4, 784)), data((784, 16))
case("matmul_mnist_hidden", "MatMul",
     {"T": {"type": "float32"}, "transpose_a": {"b": False}, "transpose_b": {"b": False}},
     [a, b], tf.raw_ops.MatMul(a=a, b=b).numpy(), F32_SUM)
a, b = data((0, 3)), data((3, 2))
case("matmul_empty_rows", "MatMul",
     {"T": {"type": "float32"}, "transpose_a": {"b": False}, "transpose_b": {"b": False}},
     [a, b], tf.raw_ops.MatMul(a=a, b=b).numpy(), F32)

# ---- BatchMatMulV2 -----------------------------------------------------------------------
for (xs, ys, ax, ay) in [((2, 3, 4), (2, 4, 5), False, False), ((2, 1, 4, 3), (3, 5, 4), True, True),
                         ((3, 2, 4), (4, 6), False, False), ((4, 3), (2, 5, 3), False, True)]:
    for dtype in (np.float32, np.float64):
        x, y = data(xs, dtype), data(ys, dtype)
        out = tf.raw_ops.BatchMatMulV2(x=x, y=y, adj_x=ax, adj_y=ay).numpy()
        case("batch_matmul_%s_%s_%s" % (tname(dtype), "x".join(map(str, xs)), "x".join(map(str, ys))),
             "BatchMatMulV2", {"T": {"type": tname(dtype)}, "adj_x": {"b": ax}, "adj_y": {"b": ay}},
             [x, y], out, tol_for(dtype))

# ---- BiasAdd, BiasAddGrad ---------------------------------------------------------------
for shape, fmt in [((5, 3), "NHWC"), ((2, 4, 4, 3), "NHWC"), ((2, 3, 2, 2), "NCHW"), ((50, 10), "NHWC")]:
    for dtype in (np.float32, np.float64):
        v = data(shape, dtype)
        c = shape[1] if fmt == "NCHW" else shape[-1]
        bias = data((c,), dtype)
        attrs = {"T": {"type": tname(dtype)}, "data_format": {"s": fmt}}
        name = "%s_%s_%s" % (tname(dtype), fmt, "x".join(map(str, shape)))
        case("bias_add_" + name, "BiasAdd", attrs, [v, bias],
             tf.raw_ops.BiasAdd(value=v, bias=bias, data_format=fmt).numpy(), tol_for(dtype))
        case("bias_add_grad_" + name, "BiasAddGrad", attrs, [v],
             tf.raw_ops.BiasAddGrad(out_backprop=v, data_format=fmt).numpy(), tol_for(dtype))
v = rng.randint(-9, 9, size=(3, 4)).astype(np.int32)
bias = rng.randint(-9, 9, size=(4,)).astype(np.int32)
case("bias_add_int32", "BiasAdd", {"T": {"type": "int32"}, "data_format": {"s": "NHWC"}}, [v, bias],
     tf.raw_ops.BiasAdd(value=v, bias=bias).numpy(), tol_for(np.int32))

# ---- Rectifiers ----------------------------------------------------------------------------
for dtype in (np.float32, np.float64):
    x = data((4, 7), dtype, scale=8.0)
    x[0, 0], x[0, 1], x[0, 2] = 0.0, 6.0, -0.0
    g = data((4, 7), dtype)
    attrs = {"T": {"type": tname(dtype)}}
    case("relu_" + tname(dtype), "Relu", attrs, [x], tf.raw_ops.Relu(features=x).numpy(), tol_for(dtype))
    case("relu6_" + tname(dtype), "Relu6", attrs, [x], tf.raw_ops.Relu6(features=x).numpy(), tol_for(dtype))
    case("elu_" + tname(dtype), "Elu", attrs, [x], tf.raw_ops.Elu(features=x).numpy(), tol_for(dtype))
    case("relu_grad_" + tname(dtype), "ReluGrad", attrs, [g, x],
         tf.raw_ops.ReluGrad(gradients=g, features=x).numpy(), tol_for(dtype))
    case("relu6_grad_" + tname(dtype), "Relu6Grad", attrs, [g, x],
         tf.raw_ops.Relu6Grad(gradients=g, features=x).numpy(), tol_for(dtype))
    o = tf.raw_ops.Elu(features=x).numpy()
    case("elu_grad_" + tname(dtype), "EluGrad", attrs, [g, o],
         tf.raw_ops.EluGrad(gradients=g, outputs=o).numpy(), tol_for(dtype))
for dtype in (np.int32, np.int64):
    x = rng.randint(-10, 10, size=(3, 5)).astype(dtype)
    g = rng.randint(-10, 10, size=(3, 5)).astype(dtype)
    attrs = {"T": {"type": tname(dtype)}}
    case("relu_" + tname(dtype), "Relu", attrs, [x], tf.raw_ops.Relu(features=x).numpy(), tol_for(dtype))
    case("relu6_" + tname(dtype), "Relu6", attrs, [x], tf.raw_ops.Relu6(features=x).numpy(), tol_for(dtype))
    case("relu_grad_" + tname(dtype), "ReluGrad", attrs, [g, x],
         tf.raw_ops.ReluGrad(gradients=g, features=x).numpy(), tol_for(dtype))

# ---- Softmax, LogSoftmax ---------------------------------------------------------------
for shape in [(7,), (4, 10), (2, 3, 5), (50, 10)]:
    for dtype in (np.float32, np.float64):
        x = data(shape, dtype, scale=20.0)
        attrs = {"T": {"type": tname(dtype)}}
        name = "%s_%s" % (tname(dtype), "x".join(map(str, shape)))
        case("softmax_" + name, "Softmax", attrs, [x], tf.raw_ops.Softmax(logits=x).numpy(), tol_for(dtype))
        case("log_softmax_" + name, "LogSoftmax", attrs, [x], tf.raw_ops.LogSoftmax(logits=x).numpy(),
             tol_for(dtype))

# ---- Cross-entropy -------------------------------------------------------------------------
for dtype in (np.float32, np.float64):
    attrs = {"T": {"type": tname(dtype)}}
    for ls, ys in [((6, 10), (6, 10)), ((4, 5), (1, 5)), ((1, 5), (3, 5)), ((3, 4), (3, 1))]:
        logits = data(ls, dtype, scale=10.0)
        labels = np.abs(data(ys, dtype))
        labels = labels / np.maximum(labels.sum(axis=-1, keepdims=True), 1e-3)
        labels = labels.astype(dtype)
        loss, bp = tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=logits, labels=labels)
        case("xent_%s_%s_%s" % (tname(dtype), "x".join(map(str, ls)), "x".join(map(str, ys))),
             "SoftmaxCrossEntropyWithLogits", attrs, [logits, labels], [loss.numpy(), bp.numpy()], tol_for(dtype))
    for ltype in (np.int32, np.int64):
        logits = data((50, 10), dtype, scale=10.0)
        labels = rng.randint(0, 10, size=(50,)).astype(ltype)
        loss, bp = tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits, labels=labels)
        case("sparse_xent_%s_%s" % (tname(dtype), tname(ltype)), "SparseSoftmaxCrossEntropyWithLogits",
             {"T": {"type": tname(dtype)}, "Tlabels": {"type": tname(ltype)}}, [logits, labels],
             [loss.numpy(), bp.numpy()], tol_for(dtype))


# ---- Conv2D and gradients ----------------------------------------------------------------
def conv_attrs(dtype, s, padding):
    return {"T": {"type": tname(dtype)}, "strides": {"list_i": [1, s, s, 1]}, "padding": {"s": padding},
            "data_format": {"s": "NHWC"}, "dilations": {"list_i": [1, 1, 1, 1]},
            "explicit_paddings": {"list_i": []}, "use_cudnn_on_gpu": {"b": True}}


conv_shapes = [
    # (input, filter, stride, padding, dtypes, with gradients)
    ((2, 28, 28, 1), (5, 5, 1, 32), 1, "SAME", (np.float32,), False),
    ((2, 14, 14, 4), (5, 5, 4, 8), 1, "SAME", (np.float32, np.float64), True),
    ((2, 7, 7, 3), (3, 3, 3, 4), 2, "SAME", (np.float32, np.float64), True),
    ((2, 8, 8, 3), (3, 3, 3, 4), 2, "SAME", (np.float32,), True),
    ((1, 9, 8, 2), (4, 3, 2, 3), 3, "SAME", (np.float64,), True),
    ((2, 10, 10, 3), (5, 5, 3, 4), 1, "VALID", (np.float32, np.float64), True),
    ((2, 9, 9, 2), (3, 3, 2, 5), 2, "VALID", (np.float32,), True),
    ((2, 5, 5, 6), (1, 1, 6, 4), 1, "SAME", (np.float32, np.float64), True),
    ((2, 5, 5, 6), (1, 1, 6, 4), 2, "VALID", (np.float32,), True),
]
for xs, fs, s, p, dtypes, grads in conv_shapes:
    for dtype in dtypes:
        x, f = data(xs, dtype), data(fs, dtype)
        attrs = conv_attrs(dtype, s, p)
        y = tf.raw_ops.Conv2D(input=x, filter=f, strides=[1, s, s, 1], padding=p).numpy()
        name = "%s_%s_%s_s%d_%s" % (tname(dtype), "x".join(map(str, xs)), "x".join(map(str, fs)), s, p)
        tol = tol_for(dtype, big=True)
        case("conv2d_" + name, "Conv2D", attrs, [x, f], y, tol)
        if not grads:
            continue
        dy = data(y.shape, dtype)
        dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=np.array(xs, np.int32), filter=f, out_backprop=dy,
                                            strides=[1, s, s, 1], padding=p).numpy()
        case("conv2d_backprop_input_" + name, "Conv2DBackpropInput", attrs,
             [np.array(xs, np.int32), f, dy], dx, tol)
        dw = tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=np.array(fs, np.int32), out_backprop=dy,
                                             strides=[1, s, s, 1], padding=p).numpy()
        case("conv2d_backprop_filter_" + name, "Conv2DBackpropFilter", attrs,
             [x, np.array(fs, np.int32), dy], dw, tol)
x = rng.randint(-3, 4, size=(1, 5, 5, 2)).astype(np.int32)
f = rng.randint(-3, 4, size=(3, 3, 2, 2)).astype(np.int32)
case("conv2d_int32", "Conv2D", conv_attrs(np.int32, 1, "SAME"), [x, f],
     tf.raw_ops.Conv2D(input=x, filter=f, strides=[1, 1, 1, 1], padding="SAME").numpy(), tol_for(np.int32))


# ---- Pooling -------------------------------------------------------------------------------
def pool_attrs(dtype, k, s, padding, explicit=True):
    a = {"T": {"type": tname(dtype)}, "ksize": {"list_i": [1, k[0], k[1], 1]},
         "strides": {"list_i": [1, s[0], s[1], 1]}, "padding": {"s": padding}, "data_format": {"s": "NHWC"}}
    if explicit:
        a["explicit_paddings"] = {"list_i": []}
    return a


pool_shapes = [
    ((2, 28, 28, 2), (2, 2), (2, 2), "SAME"),
    ((2, 14, 14, 3), (2, 2), (2, 2), "VALID"),
    ((2, 7, 7, 3), (2, 2), (2, 2), "SAME"),
    ((1, 7, 6, 2), (3, 3), (2, 2), "SAME"),
    ((2, 8, 8, 2), (3, 2), (1, 2), "VALID"),
    ((1, 5, 5, 3), (3, 3), (1, 1), "SAME"),
]


def pool_cases():
    """For each of pool_shapes and float dtype: the case name's suffix, the dtype, the input
    shape, k, s, padding, the raw ops' window arguments, an input x of distinct values (so
    the max of every window is unique) and its MaxPool."""
    for xs, k, s, p in pool_shapes:
        for dtype in (np.float32, np.float64):
            x = (rng.permutation(int(np.prod(xs))).reshape(xs) / 64.0 - 3.0).astype(dtype)
            window = dict(ksize=[1, k[0], k[1], 1], strides=[1, s[0], s[1], 1], padding=p)
            name = "%s_%s_k%dx%d_s%dx%d_%s" % (tname(dtype), "x".join(map(str, xs)), k[0], k[1], s[0], s[1], p)
            y = tf.raw_ops.MaxPool(input=tf.constant(x), **window).numpy()
            yield name, dtype, xs, k, s, p, window, x, y


TIES_WINDOW = dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")


def ties():
    """Ties (ReLU zeros): an input whose first 2x2 window is all zeros, and its MaxPool."""
    x = np.maximum(data((1, 4, 4, 2)), 0).astype(np.float32)
    x[0, :2, :2, :] = 0.0
    return x, tf.raw_ops.MaxPool(input=tf.constant(x), **TIES_WINDOW).numpy()


for name, dtype, xs, k, s, p, window, x, y in pool_cases():
    case("max_pool_" + name, "MaxPool", pool_attrs(dtype, k, s, p), [x], y, tol_for(dtype))
    g = data(y.shape, dtype)
    dx = tf.raw_ops.MaxPoolGrad(orig_input=tf.constant(x), orig_output=tf.constant(y), grad=tf.constant(g),
                                **window).numpy()
    case("max_pool_grad_" + name, "MaxPoolGrad", pool_attrs(dtype, k, s, p), [x, y, g], dx, tol_for(dtype))
    a = tf.raw_ops.AvgPool(value=x, **window).numpy()
    case("avg_pool_" + name, "AvgPool", pool_attrs(dtype, k, s, p, False), [x], a, tol_for(dtype))
    ga = data(a.shape, dtype)
    da = tf.raw_ops.AvgPoolGrad(orig_input_shape=np.array(xs, np.int32), grad=ga, **window).numpy()
    case("avg_pool_grad_" + name, "AvgPoolGrad", pool_attrs(dtype, k, s, p, False),
         [np.array(xs, np.int32), ga], da, tol_for(dtype))
# Which maximum receives the gradient.
x, y = ties()
g = data(y.shape)
dx = tf.raw_ops.MaxPoolGrad(orig_input=tf.constant(x), orig_output=tf.constant(y), grad=tf.constant(g),
                            **TIES_WINDOW).numpy()
case("max_pool_grad_ties", "MaxPoolGrad", pool_attrs(np.float32, (2, 2), (2, 2), "VALID"), [x, y, g], dx, F32)
x = rng.randint(-50, 50, size=(1, 4, 4, 2)).astype(np.int32)
case("max_pool_int32", "MaxPool", pool_attrs(np.int32, (2, 2), (2, 2), "SAME"), [x],
     tf.raw_ops.MaxPool(input=tf.constant(x), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME").numpy(),
     tol_for(np.int32))

# MaxPoolGradGrad: the incoming gradient (shaped like the input) at each window's maximum;
# one tie case for which maximum is picked.
for name, dtype, xs, k, s, p, window, x, y in pool_cases():
    gg = data(xs, dtype)
    out = tf.raw_ops.MaxPoolGradGrad(orig_input=tf.constant(x), orig_output=tf.constant(y), grad=tf.constant(gg),
                                     **window).numpy()
    case("max_pool_grad_grad_" + name, "MaxPoolGradGrad", pool_attrs(dtype, k, s, p, False), [x, y, gg], out,
         tol_for(dtype))
x, y = ties()
gg = data(x.shape)
out = tf.raw_ops.MaxPoolGradGrad(orig_input=tf.constant(x), orig_output=tf.constant(y), grad=tf.constant(gg),
                                 **TIES_WINDOW).numpy()
case("max_pool_grad_grad_ties", "MaxPoolGradGrad", pool_attrs(np.float32, (2, 2), (2, 2), "VALID", False),
     [x, y, gg], out, F32)

write("nn", cases)
