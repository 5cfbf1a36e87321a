"""TensorFlow 2.21 timings of the nn ops benchmarked by `cargo bench -p ferroflow-kernels --bench nn`
(same shapes, float32), for the speed comparison. Each op runs inside a warmed-up tf.function
on tensors passed as arguments (nothing is constant-folded); the reported time is the median
(and the minimum) of several timing rounds, and the per-call overhead of an empty tf.function (Identity of a
scalar) is shown so it can be subtracted for the small ops.

    .venv/bin/python scripts/bench/tf_nn_ops.py [filter]
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

rng = np.random.RandomState(0)


def t(*shape):
    return tf.constant(rng.uniform(-0.5, 0.5, size=shape).astype(np.float32))


def fetch(out):
    return out.numpy() if not isinstance(out, (list, tuple)) else [o.numpy() for o in out]


def bench(name, fn, args, min_time=1.0, rounds=7):
    f = tf.function(fn)
    for _ in range(3):
        fetch(f(*args))
    # Calibrate the number of calls per round to ~min_time / rounds.
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < min_time / rounds:
        f(*args)
        n += 1
    fetch(f(*args))
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            out = f(*args)
        fetch(out)
        times.append((time.perf_counter() - start) / n)
    times.sort()
    return times[0], times[len(times) // 2]


def conv_cases(cases, group, name, xs, fs):
    """Appends the forward pass, input gradient and filter gradient of a SAME, stride-1
    convolution of an `xs` input with an `fs` filter."""
    s1 = [1, 1, 1, 1]
    x, f, dy = t(*xs), t(*fs), t(xs[0], xs[1], xs[2], fs[3])
    xsz, fsz = tf.constant(xs, tf.int32), tf.constant(fs, tf.int32)
    cases.append(("%s/%s_forward" % (group, name),
                  lambda x, f: tf.raw_ops.Conv2D(input=x, filter=f, strides=s1, padding="SAME"), [x, f]))
    cases.append(("%s/%s_backprop_input" % (group, name),
                  lambda sz, f, dy: tf.raw_ops.Conv2DBackpropInput(input_sizes=sz, filter=f, out_backprop=dy,
                                                                   strides=s1, padding="SAME"), [xsz, f, dy]))
    cases.append(("%s/%s_backprop_filter" % (group, name),
                  lambda x, sz, dy: tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=sz, out_backprop=dy,
                                                                    strides=s1, padding="SAME"), [x, fsz, dy]))


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    s1 = [1, 1, 1, 1]
    cases = []
    cases.append(("overhead/identity", lambda a: tf.identity(a), [tf.constant(1.0)]))
    cases.append(("matmul/100x784x256", lambda a, b: tf.raw_ops.MatMul(a=a, b=b), [t(100, 784), t(784, 256)]))
    cases.append(("matmul/1024x1024x1024", lambda a, b: tf.raw_ops.MatMul(a=a, b=b), [t(1024, 1024), t(1024, 1024)]))
    # The six products of an LSTM(256) step over 64 features at batch 32 (m, k, n, ta, tb).
    for m, k, n, ta, tb in [(32, 64, 1024, 0, 0), (32, 256, 1024, 0, 0), (32, 1024, 64, 0, 1),
                            (32, 1024, 256, 0, 1), (64, 32, 1024, 1, 0), (256, 32, 1024, 1, 0)]:
        a = t(k, m) if ta else t(m, k)
        b = t(n, k) if tb else t(k, n)
        cases.append(("matmul_lstm/%dx%dx%d_ta%d_tb%d" % (m, k, n, ta, tb),
                      lambda a, b, ta=ta, tb=tb: tf.raw_ops.MatMul(a=a, b=b, transpose_a=bool(ta), transpose_b=bool(tb)),
                      [a, b]))
    # The products of ResNet50's 3x3 convolutions at 8x8x256 by im2col, and the input gradients
    # of its 1x1 layers at 4x4 and 8x8 (m, k, n, ta, tb).
    for m, k, n, ta, tb in [(512, 2304, 256, 0, 0), (512, 256, 2304, 0, 1), (2304, 512, 256, 1, 0),
                            (128, 512, 2048, 0, 1), (128, 2048, 512, 0, 1), (512, 256, 1024, 0, 1),
                            (512, 1024, 256, 0, 1)]:
        a = t(k, m) if ta else t(m, k)
        b = t(n, k) if tb else t(k, n)
        cases.append(("matmul_resnet/%dx%dx%d_ta%d_tb%d" % (m, k, n, ta, tb),
                      lambda a, b, ta=ta, tb=tb: tf.raw_ops.MatMul(a=a, b=b, transpose_a=bool(ta), transpose_b=bool(tb)),
                      [a, b]))
    for name, xs, fs in [("conv1", (50, 28, 28, 1), (5, 5, 1, 32)), ("conv2", (50, 14, 14, 32), (5, 5, 32, 64))]:
        conv_cases(cases, "conv2d", name, xs, fs)
    # ResNet50's 3x3 layers of its four stages and three of its 1x1 layers at 128x128, batch 8
    # (criterion group conv2d_resnet).
    for name, xs, fs in [("s2", (8, 32, 32, 64), (3, 3, 64, 64)), ("s3", (8, 16, 16, 128), (3, 3, 128, 128)),
                         ("s4", (8, 8, 8, 256), (3, 3, 256, 256)), ("s5", (8, 4, 4, 512), (3, 3, 512, 512)),
                         ("s3_1x1_512_to_128", (8, 16, 16, 512), (1, 1, 512, 128)),
                         ("s4_1x1_1024_to_256", (8, 8, 8, 1024), (1, 1, 1024, 256)),
                         ("s4_1x1_256_to_1024", (8, 8, 8, 256), (1, 1, 256, 1024)),
                         ("s5_1x1_2048_to_512", (8, 4, 4, 2048), (1, 1, 2048, 512)),
                         ("s5_1x1_512_to_2048", (8, 4, 4, 512), (1, 1, 512, 2048))]:
        conv_cases(cases, "conv2d_resnet", name, xs, fs)
    x = t(50, 28, 28, 32)
    k = [1, 2, 2, 1]
    y = tf.raw_ops.MaxPool(input=x, ksize=k, strides=k, padding="SAME")
    gy = t(50, 14, 14, 32)
    cases.append(("pool/max_pool_50x28x28x32",
                  lambda x: tf.raw_ops.MaxPool(input=x, ksize=k, strides=k, padding="SAME"), [x]))
    cases.append(("pool/max_pool_grad_50x28x28x32",
                  lambda x, y, g: tf.raw_ops.MaxPoolGrad(orig_input=x, orig_output=y, grad=g, ksize=k, strides=k,
                                                         padding="SAME"), [x, y, gy]))
    # MobileNetV2's stride-1 depthwise layers and training-mode batch norm (criterion group
    # depthwise_mnv2).
    s2 = [1, 2, 2, 1]
    for xs in [(16, 81, 81, 96), (16, 41, 41, 144)]:
        dy = t(xs[0], (xs[1] - 3) // 2 + 1, (xs[2] - 3) // 2 + 1, xs[3])
        cases.append(("depthwise_mnv2/%dx%dx%d_backprop_input_s2" % xs[1:],
                      lambda sz, f, dy: tf.raw_ops.DepthwiseConv2dNativeBackpropInput(
                          input_sizes=sz, filter=f, out_backprop=dy, strides=s2, padding="VALID"),
                      [tf.constant(xs, tf.int32), t(3, 3, xs[3], 1), dy]))
        cases.append(("depthwise_mnv2/%dx%dx%d_forward_s2" % xs[1:],
                      lambda x, f: tf.raw_ops.DepthwiseConv2dNative(input=x, filter=f, strides=s2, padding="VALID"),
                      [t(*xs), t(3, 3, xs[3], 1)]))
    for xs in [(16, 40, 40, 144), (16, 10, 10, 576), (16, 5, 5, 960)]:
        cases.append(("depthwise_mnv2/%dx%dx%d_forward" % xs[1:],
                      lambda x, f: tf.raw_ops.DepthwiseConv2dNative(input=x, filter=f, strides=s1, padding="SAME"),
                      [t(*xs), t(3, 3, xs[3], 1)]))
        cases.append(("depthwise_mnv2/%dx%dx%d_backprop_filter" % xs[1:],
                      lambda x, sz, dy: tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(
                          input=x, filter_sizes=sz, out_backprop=dy, strides=s1, padding="SAME"),
                      [t(*xs), tf.constant([3, 3, xs[3], 1], tf.int32), t(*xs)]))
    for xs, oc in [((16, 40, 40, 144), 24), ((16, 80, 80, 96), 24), ((16, 40, 40, 24), 144)]:
        cases.append(("depthwise_mnv2/conv1x1_%dx%dx%d_to_%d" % (xs[1], xs[2], xs[3], oc),
                      lambda x, f: tf.raw_ops.Conv2D(input=x, filter=f, strides=s1, padding="SAME"),
                      [t(*xs), t(1, 1, xs[3], oc)]))
    for xs in [(16, 40, 40, 144), (16, 80, 80, 96)]:
        x, dy, c = t(*xs), t(*xs), xs[3]
        sc, of, empty = t(c), t(c), tf.constant([], tf.float32)
        fwd = lambda x, sc, of, e: tf.raw_ops.FusedBatchNormV3(x=x, scale=sc, offset=of, mean=e, variance=e,
                                                                 epsilon=0.001, is_training=True)[:3]
        cases.append(("depthwise_mnv2/batch_norm_%dx%dx%d" % xs[1:], fwd, [x, sc, of, empty]))
        o = tf.raw_ops.FusedBatchNormV3(x=x, scale=sc, offset=of, mean=empty, variance=empty, epsilon=0.001,
                                        is_training=True)
        grad = lambda dy, x, sc, m, v, r: tf.raw_ops.FusedBatchNormGradV3(
            y_backprop=dy, x=x, scale=sc, reserve_space_1=m, reserve_space_2=v, reserve_space_3=r, epsilon=0.001,
            is_training=True)[:3]
        cases.append(("depthwise_mnv2/batch_norm_grad_%dx%dx%d" % xs[1:], grad, [dy, x, sc, o[3], o[4], o[5]]))
    print("TensorFlow %s, intra-op threads %d (0 = all cores)" % (tf.__version__,
                                                                  tf.config.threading.get_intra_op_parallelism_threads()))
    for name, fn, args in cases:
        if flt not in name and not name.startswith("overhead"):
            continue
        best, med = bench(name, fn, args)
        print("%-36s min %10.1f us   median %10.1f us" % (name, best * 1e6, med * 1e6))


if __name__ == "__main__":
    main()
