"""Golden values for the 3-D convolution and pooling ops: Conv3D, Conv3DBackpropInputV2,
Conv3DBackpropFilterV2, MaxPool3D, AvgPool3D, MaxPool3DGrad (ties included: TensorFlow's
3-D kernel gives the gradient to every maximal cell), AvgPool3DGrad, MaxPool3DGradGrad
(TensorFlow 2.21, eager raw ops). Run as the header of common.py says, with
<family> = volume_ops."""
import numpy as np
import tensorflow as tf

from common import case_list, write

rs = np.random.RandomState(13)
cases, case = case_list()


def f32(*s):
    return rs.randn(*s).astype(np.float32)


def conv_attrs(s, pad):
    return {"strides": [1, *s, 1], "padding": pad, "data_format": "NDHWC", "dilations": [1, 1, 1, 1, 1]}


def pool_attrs(k, s, pad):
    return {"ksize": [1, *k, 1], "strides": [1, *s, 1], "padding": pad, "data_format": "NDHWC"}


F = {"T": "float32"}
for i, (xs, fs, s, pad) in enumerate([
    ((2, 4, 5, 5, 3), (3, 3, 3, 3, 4), (1, 1, 1), "SAME"),
    ((1, 6, 7, 5, 2), (2, 3, 2, 2, 3), (2, 2, 1), "VALID"),
    ((2, 5, 6, 6, 2), (3, 3, 3, 2, 5), (2, 2, 2), "SAME"),
    ((1, 3, 8, 8, 4), (1, 1, 1, 4, 6), (1, 1, 1), "VALID"),
]):
    x, f = f32(*xs), f32(*fs)
    y = tf.raw_ops.Conv3D(input=x, filter=f, **conv_attrs(s, pad)).numpy()
    dy = f32(*y.shape)
    a = conv_attrs(s, pad)
    case(f"conv3d_{i}", "Conv3D", [("input", x), ("filter", f)], F, a, rtol=1e-4, atol=1e-4)
    case(f"conv3d_input_{i}", "Conv3DBackpropInputV2",
         [("input_sizes", np.array(xs, np.int32)), ("filter", f), ("out_backprop", dy)], {**F, "Tshape": "int32"}, a,
         rtol=1e-4, atol=1e-4)
    case(f"conv3d_filter_{i}", "Conv3DBackpropFilterV2",
         [("input", x), ("filter_sizes", np.array(fs, np.int32)), ("out_backprop", dy)], F, a, rtol=1e-4, atol=1e-4)

for i, (xs, k, s, pad) in enumerate([
    ((2, 4, 5, 6, 3), (2, 2, 2), (2, 2, 2), "SAME"),
    ((1, 5, 6, 4, 2), (3, 2, 3), (1, 2, 1), "VALID"),
    ((2, 3, 4, 5, 2), (2, 3, 2), (2, 1, 2), "SAME"),
]):
    # Rounded values so that windows hold ties (the 3-D gradient's semantics).
    x = np.round(f32(*xs) * 2) / 2
    a = pool_attrs(k, s, pad)
    y = tf.raw_ops.MaxPool3D(input=x, **a).numpy()
    dy = f32(*y.shape)
    case(f"max_pool3d_{i}", "MaxPool3D", [("input", x)], F, a)
    case(f"avg_pool3d_{i}", "AvgPool3D", [("input", x)], F, a, rtol=1e-5, atol=1e-6)
    case(f"max_pool3d_grad_{i}", "MaxPool3DGrad", [("orig_input", x), ("orig_output", y), ("grad", dy)],
         {**F, "TInput": "float32"}, a, rtol=1e-5, atol=1e-6)
    case(f"avg_pool3d_grad_{i}", "AvgPool3DGrad", [("orig_input_shape", np.array(xs, np.int32)), ("grad", dy)], F, a,
         rtol=1e-5, atol=1e-6)
    case(f"max_pool3d_grad_grad_{i}", "MaxPool3DGradGrad", [("orig_input", x), ("orig_output", y), ("grad", f32(*xs))],
         F, a)

write("volume_ops", cases)
