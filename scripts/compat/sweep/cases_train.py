"""Sweep cases: compat.v1 RNNs, every optimizer, losses, metrics and feature columns
(helpers and the case order: cases_funcs.py)."""

import numpy as np

from cases_funcs import F, ints, u
from harness import Case

def rnn():
    x = u(2, 5, 3)

    def dyn(cell_fn, seq_len=False, time_major=False):
        def f(tf, x):
            cell = cell_fn(tf)
            kw = dict(sequence_length=[5, 3]) if seq_len else {}
            out, _ = tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float32, **kw)
            return out
        return f

    return [
        F("rnn.dynamic_rnn.lstm", dyn(lambda tf: tf.compat.v1.nn.rnn_cell.LSTMCell(4)), x),
        F("rnn.dynamic_rnn.lstm_seqlen", dyn(lambda tf: tf.compat.v1.nn.rnn_cell.LSTMCell(4), True), x),
        F("rnn.dynamic_rnn.gru", dyn(lambda tf: tf.compat.v1.nn.rnn_cell.GRUCell(4)), x),
        F("rnn.dynamic_rnn.basic_rnn", dyn(lambda tf: tf.compat.v1.nn.rnn_cell.BasicRNNCell(4)), x),
        F("rnn.dynamic_rnn.multi", dyn(lambda tf: tf.compat.v1.nn.rnn_cell.MultiRNNCell(
            [tf.compat.v1.nn.rnn_cell.LSTMCell(3), tf.compat.v1.nn.rnn_cell.GRUCell(2)])), x),
        F("rnn.bidirectional_dynamic_rnn", lambda tf, x: tf.concat(tf.compat.v1.nn.bidirectional_dynamic_rnn(
            tf.compat.v1.nn.rnn_cell.LSTMCell(2), tf.compat.v1.nn.rnn_cell.LSTMCell(2), x, dtype=tf.float32,
            sequence_length=[5, 2])[0], 2), x),
        F("rnn.static_rnn", lambda tf, x: tf.compat.v1.nn.static_rnn(
            tf.compat.v1.nn.rnn_cell.BasicLSTMCell(3), tf.unstack(x, axis=1), dtype=tf.float32)[0][-1], x),
    ]


def optimizers():
    def train_case(name, make_opt):
        xv, wv = u(4, 3), u(3, 2)  # drawn once: both graphs of a case see the same values

        def build():
            import tensorflow as tf
            x = tf.compat.v1.placeholder(tf.float32, (4, 3))
            w = tf.compat.v1.get_variable("w", initializer=tf.constant(wv))
            return {x: xv}, [tf.matmul(x, w)]

        def train(loss):
            import tensorflow as tf
            opt = make_opt(tf)
            var_list = tf.compat.v1.trainable_variables()
            if hasattr(opt, "get_updates"):  # tf_keras's optimizers in graph mode, as Keras 2's v1 training loop
                return tf.group(*opt.get_updates(loss, var_list))
            return opt.minimize(loss, var_list=var_list)

        return Case("train." + name, build, train=train)

    opts = {
        "GradientDescent": lambda tf: tf.compat.v1.train.GradientDescentOptimizer(0.1),
        "Momentum": lambda tf: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
        "Adagrad": lambda tf: tf.compat.v1.train.AdagradOptimizer(0.1),
        "AdagradDA": lambda tf: tf.compat.v1.train.AdagradDAOptimizer(
            0.1, tf.compat.v1.train.get_or_create_global_step()),
        "Adam": lambda tf: tf.compat.v1.train.AdamOptimizer(0.1),
        "Adadelta": lambda tf: tf.compat.v1.train.AdadeltaOptimizer(0.1),
        "RMSProp": lambda tf: tf.compat.v1.train.RMSPropOptimizer(0.1, centered=True),
        "Ftrl": lambda tf: tf.compat.v1.train.FtrlOptimizer(0.1, l2_regularization_strength=0.1),
        "ProximalGradientDescent": lambda tf: tf.compat.v1.train.ProximalGradientDescentOptimizer(0.1, 0.01),
        "ProximalAdagrad": lambda tf: tf.compat.v1.train.ProximalAdagradOptimizer(0.1, 0.01),
    }
    for k in ["SGD", "Adam", "Adamax", "Nadam", "RMSprop", "Adagrad", "Adadelta", "Ftrl"]:
        opts["keras." + k] = (lambda k: lambda tf: getattr(__import__("tf_keras").optimizers.legacy, k)(0.01))(k)
    return [train_case(n, o) for n, o in opts.items()]


def losses_metrics():
    y, p = u(4, 3, lo=0, hi=1), u(4, 3, lo=0.05, hi=0.95)
    cases = []
    for n in ["mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error",
              "mean_squared_logarithmic_error", "binary_crossentropy", "categorical_crossentropy", "hinge",
              "squared_hinge", "categorical_hinge", "huber", "log_cosh", "kl_divergence", "poisson",
              "cosine_similarity", "binary_focal_crossentropy"]:
        cases.append(F("losses." + n, lambda tf, a, b, n=n: getattr(__import__("tf_keras").losses, n)(a, b), y, p))
    cases.append(F("losses.sparse_categorical_crossentropy",
                   lambda tf, a, b: __import__("tf_keras").losses.sparse_categorical_crossentropy(a, b),
                   ints(4, hi=3), p))
    for n in ["AUC", "Precision", "Recall", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy",
              "TopKCategoricalAccuracy", "MeanIoU", "RootMeanSquaredError", "PrecisionAtRecall"]:
        def f(tf, a, b, n=n):
            keras = __import__("tf_keras")
            kw = {"MeanIoU": dict(num_classes=2), "PrecisionAtRecall": dict(recall=0.5),
                  "TopKCategoricalAccuracy": dict(k=2)}.get(n, {})
            m = getattr(keras.metrics, n)(**kw)
            if n == "MeanIoU":
                out = m(tf.cast(a > 0.5, tf.int32), tf.cast(b > 0.5, tf.int32))
            else:
                out = m(a, b)
            # A metric's state variables sit in no collection in graph mode: list them as local
            # variables so that the harness initializes them (as a user's init op would).
            for v in m.variables:
                tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.LOCAL_VARIABLES, v)
            return out
        cases.append(F("metrics." + n, f, (y > 0.5).astype(np.float32), p, grads=False))
    return cases


def feature_columns():
    def fc_case(name, make_cols, feats):
        def build():
            import tensorflow as tf
            fc = tf.compat.v1.feature_column
            feeds, d = {}, {}
            for k, v in feats.items():
                v = np.asarray(v)
                p = tf.compat.v1.placeholder(tf.string if v.dtype == object else tf.as_dtype(v.dtype), v.shape)
                feeds[p] = v
                d[k] = p
            return feeds, [fc.input_layer(d, make_cols(tf, fc))]
        return Case("feature_column." + name, build)

    feats = {"age": u(4, 1, lo=0, hi=90), "city": np.array([[b"paris"], [b"rome"], [b"oslo"], [b"rome"]], object),
             "id": np.array([[1], [3], [0], [2]], np.int64)}
    return [
        fc_case("numeric", lambda tf, fc: [fc.numeric_column("age")], feats),
        fc_case("bucketized", lambda tf, fc: [fc.bucketized_column(fc.numeric_column("age"), [18, 40, 65])], feats),
        fc_case("indicator_vocab", lambda tf, fc: [fc.indicator_column(
            fc.categorical_column_with_vocabulary_list("city", ["paris", "rome"]))], feats),
        fc_case("embedding_hash", lambda tf, fc: [fc.embedding_column(
            fc.categorical_column_with_hash_bucket("city", 10), 3)], feats),
        fc_case("embedding_identity", lambda tf, fc: [fc.embedding_column(
            fc.categorical_column_with_identity("id", 4), 2, combiner="sqrtn")], feats),
        fc_case("crossed", lambda tf, fc: [fc.indicator_column(fc.crossed_column(
            [fc.bucketized_column(fc.numeric_column("age"), [30]), "city"], 7))], feats),
    ]
