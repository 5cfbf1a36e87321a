"""Sweep cases: every `tf_keras.layers` layer, built on placeholders in graph mode, called
in training mode where the layer has one (its random layers with fixed seeds)."""

import numpy as np

from harness import Case


def _rng(name):
    return np.random.default_rng(sum(map(ord, name)))


def _input(tf, name, shape, dtype="float32", lo=-1.0, hi=1.0, vocab=None):
    rng = _rng(name + str(shape))
    if dtype == "float32":
        v = rng.uniform(lo, hi, size=shape).astype(np.float32)
    elif dtype in ("int32", "int64"):
        v = rng.integers(0, vocab or 10, size=shape).astype(dtype)
    elif dtype == "string":
        words = np.array(vocab or ["a", "b", "c", "dog", "cat", "x y"], dtype=object)
        v = words[rng.integers(0, len(words), size=shape)].astype(bytes)
    else:
        raise ValueError(dtype)
    p = tf.compat.v1.placeholder({"string": tf.string}.get(dtype, dtype), shape)
    return p, v


def layer_case(name, make, shapes, call=None, training=True, dtype="float32", random=False, grads=True, soft=False,
               **kw):
    """A case calling `make(keras)` on placeholders of `shapes` (one shape, or a list)."""

    def build():
        import tensorflow as tf
        import tf_keras as keras
        multi = isinstance(shapes, list)
        feeds, xs = {}, []
        for i, s in enumerate(shapes if multi else [shapes]):
            p, v = _input(tf, f"{name}{i}", s, dtype, **kw)
            feeds[p] = v
            xs.append(p)
        layer = make(keras)
        args = {} if call is None else dict(call)
        if training is not None:
            args["training"] = training
        try:
            y = layer(xs if multi else xs[0], **args)
        except TypeError:
            args.pop("training", None)
            y = layer(xs if multi else xs[0], **args)
        ys = list(y) if isinstance(y, (list, tuple)) else [y]
        return feeds, ys

    return Case("layers." + name, build, grads=grads, random=random, soft=soft)


def cases():
    L = layer_case
    img = (2, 8, 8, 3)
    seq = (2, 5, 4)
    vol = (1, 6, 6, 6, 2)
    c = [
        L("Dense", lambda k: k.layers.Dense(4, activation="relu"), (3, 6)),
        L("Dense.3d", lambda k: k.layers.Dense(4), (2, 3, 6)),
        L("EinsumDense", lambda k: k.layers.EinsumDense("abc,cd->abd", output_shape=(None, 4), bias_axes="d"), seq),
        L("Activation.softplus", lambda k: k.layers.Activation("softplus"), (3, 5)),
        L("Activation.selu", lambda k: k.layers.Activation("selu"), (3, 5)),
        L("Activation.gelu", lambda k: k.layers.Activation("gelu"), (3, 5)),
        L("Activation.swish", lambda k: k.layers.Activation("swish"), (3, 5)),
        L("Activation.hard_sigmoid", lambda k: k.layers.Activation("hard_sigmoid"), (3, 5)),
        L("Activation.mish", lambda k: k.layers.Activation("mish"), (3, 5)),
        L("Activation.softsign", lambda k: k.layers.Activation("softsign"), (3, 5)),
        L("Activation.elu", lambda k: k.layers.Activation("elu"), (3, 5)),
        L("Activation.exponential", lambda k: k.layers.Activation("exponential"), (3, 5)),
        L("Activation.tanh", lambda k: k.layers.Activation("tanh"), (3, 5)),
        L("ReLU", lambda k: k.layers.ReLU(max_value=0.5, negative_slope=0.1, threshold=0.05), (3, 5)),
        L("LeakyReLU", lambda k: k.layers.LeakyReLU(0.3), (3, 5)),
        L("PReLU", lambda k: k.layers.PReLU(), (3, 5)),
        L("ELU", lambda k: k.layers.ELU(), (3, 5)),
        L("ThresholdedReLU", lambda k: k.layers.ThresholdedReLU(0.2), (3, 5)),
        L("Softmax", lambda k: k.layers.Softmax(), (3, 5)),
        L("Conv1D", lambda k: k.layers.Conv1D(3, 3, padding="same"), seq),
        L("Conv1D.causal_dilated", lambda k: k.layers.Conv1D(3, 2, padding="causal", dilation_rate=2), seq),
        L("Conv2D", lambda k: k.layers.Conv2D(4, 3, strides=2, padding="same"), img),
        L("Conv2D.dilated", lambda k: k.layers.Conv2D(4, 3, dilation_rate=2), img),
        L("Conv2D.groups", lambda k: k.layers.Conv2D(6, 3, groups=3), img),
        L("Conv2D.groups2", lambda k: k.layers.Conv2D(4, 3, strides=2, groups=2), (2, 7, 7, 4)),
        L("Conv3D", lambda k: k.layers.Conv3D(3, 2), vol),
        L("Conv1DTranspose", lambda k: k.layers.Conv1DTranspose(3, 3, strides=2), seq),
        L("Conv2DTranspose", lambda k: k.layers.Conv2DTranspose(3, 3, strides=2, padding="same"), img),
        L("Conv3DTranspose", lambda k: k.layers.Conv3DTranspose(2, 2, strides=2), vol),
        L("DepthwiseConv1D", lambda k: k.layers.DepthwiseConv1D(3, depth_multiplier=2), seq),
        L("DepthwiseConv2D", lambda k: k.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same"), img),
        L("SeparableConv1D", lambda k: k.layers.SeparableConv1D(4, 3), seq),
        L("SeparableConv2D", lambda k: k.layers.SeparableConv2D(4, 3, padding="same"), img),
        L("LocallyConnected1D", lambda k: k.layers.LocallyConnected1D(2, 2), seq),
        L("LocallyConnected2D", lambda k: k.layers.LocallyConnected2D(2, 3), img),
        L("MaxPooling1D", lambda k: k.layers.MaxPooling1D(2), seq),
        L("MaxPooling2D", lambda k: k.layers.MaxPooling2D(2), img),
        L("MaxPooling3D", lambda k: k.layers.MaxPooling3D(2), vol),
        L("AveragePooling1D", lambda k: k.layers.AveragePooling1D(2), seq),
        L("AveragePooling2D", lambda k: k.layers.AveragePooling2D(3, strides=2, padding="same"), img),
        L("AveragePooling3D", lambda k: k.layers.AveragePooling3D(2), vol),
        L("GlobalMaxPooling1D", lambda k: k.layers.GlobalMaxPooling1D(), seq),
        L("GlobalMaxPooling2D", lambda k: k.layers.GlobalMaxPooling2D(), img),
        L("GlobalMaxPooling3D", lambda k: k.layers.GlobalMaxPooling3D(), vol),
        L("GlobalAveragePooling1D", lambda k: k.layers.GlobalAveragePooling1D(), seq),
        L("GlobalAveragePooling2D", lambda k: k.layers.GlobalAveragePooling2D(), img),
        L("GlobalAveragePooling3D", lambda k: k.layers.GlobalAveragePooling3D(), vol),
        L("BatchNormalization.train", lambda k: k.layers.BatchNormalization(), img),
        L("BatchNormalization.infer", lambda k: k.layers.BatchNormalization(), img, training=False),
        L("BatchNormalization.unfused", lambda k: k.layers.BatchNormalization(fused=False), img),
        L("BatchNormalization.2d", lambda k: k.layers.BatchNormalization(), (4, 6)),
        L("BatchNormalization.renorm", lambda k: k.layers.BatchNormalization(renorm=True), (4, 6)),
        L("LayerNormalization", lambda k: k.layers.LayerNormalization(), seq),
        L("LayerNormalization.multi_axis", lambda k: k.layers.LayerNormalization(axis=[1, 2]), img),
        L("GroupNormalization", lambda k: k.layers.GroupNormalization(groups=2), (2, 4, 4, 4)),
        L("UnitNormalization", lambda k: k.layers.UnitNormalization(), (3, 5)),
        L("SimpleRNN", lambda k: k.layers.SimpleRNN(3), seq, soft=True),
        L("SimpleRNN.seq", lambda k: k.layers.SimpleRNN(3, return_sequences=True), seq, soft=True),
        L("LSTM", lambda k: k.layers.LSTM(3), seq, soft=True),
        L("LSTM.seq_state", lambda k: k.layers.LSTM(3, return_sequences=True, return_state=True), seq, soft=True),
        L("LSTM.unroll", lambda k: k.layers.LSTM(3, unroll=True), seq, soft=True),
        L("GRU", lambda k: k.layers.GRU(3), seq, soft=True),
        L("GRU.reset_before_false", lambda k: k.layers.GRU(3, reset_after=False, return_sequences=True), seq, soft=True),
        L("Bidirectional.LSTM", lambda k: k.layers.Bidirectional(k.layers.LSTM(3)), seq, soft=True),
        L("Bidirectional.GRU.concat_seq", lambda k: k.layers.Bidirectional(k.layers.GRU(2, return_sequences=True)), seq,
          soft=True),
        L("RNN.stacked_cells", lambda k: k.layers.RNN([k.layers.LSTMCell(3), k.layers.GRUCell(2)]), seq, soft=True),
        L("ConvLSTM1D", lambda k: k.layers.ConvLSTM1D(2, 2), (1, 3, 5, 2), soft=True),
        L("ConvLSTM2D", lambda k: k.layers.ConvLSTM2D(2, 2), (1, 3, 5, 5, 2), soft=True),
        L("ConvLSTM3D", lambda k: k.layers.ConvLSTM3D(2, 2), (1, 2, 4, 4, 4, 1), soft=True),
        L("TimeDistributed", lambda k: k.layers.TimeDistributed(k.layers.Dense(2)), seq),
        L("MultiHeadAttention", lambda k: _MHA(k), [seq, (2, 3, 4)]),
        L("Attention", lambda k: k.layers.Attention(), [seq, (2, 3, 4)]),
        L("Attention.scaled_causal", lambda k: k.layers.Attention(use_scale=True, score_mode="concat"), [seq, seq],
          call={"use_causal_mask": True}),
        L("AdditiveAttention", lambda k: k.layers.AdditiveAttention(), [seq, (2, 3, 4)]),
        L("Dropout", lambda k: k.layers.Dropout(0.5, seed=3), (3, 5), random=True),
        L("Dropout.infer", lambda k: k.layers.Dropout(0.5), (3, 5), training=False),
        L("SpatialDropout1D", lambda k: k.layers.SpatialDropout1D(0.5, seed=3), seq, random=True),
        L("SpatialDropout2D", lambda k: k.layers.SpatialDropout2D(0.5, seed=3), img, random=True),
        L("SpatialDropout3D", lambda k: k.layers.SpatialDropout3D(0.5, seed=3), vol, random=True),
        L("GaussianNoise", lambda k: k.layers.GaussianNoise(0.1, seed=3), (3, 5), random=True),
        L("GaussianDropout", lambda k: k.layers.GaussianDropout(0.1, seed=3), (3, 5), random=True),
        L("AlphaDropout", lambda k: k.layers.AlphaDropout(0.1, seed=3), (3, 5), random=True),
        L("ActivityRegularization", lambda k: k.layers.ActivityRegularization(0.1, 0.1), (3, 5)),
        L("Masking", lambda k: k.layers.Masking(0.0), seq),
        L("Embedding", lambda k: k.layers.Embedding(10, 3), (3, 4), dtype="int32"),
        L("Embedding.mask_zero", lambda k: k.layers.Embedding(10, 3, mask_zero=True), (3, 4), dtype="int32"),
        L("Flatten", lambda k: k.layers.Flatten(), img),
        L("Reshape", lambda k: k.layers.Reshape((-1, 3)), img),
        L("Permute", lambda k: k.layers.Permute((2, 1)), seq),
        L("RepeatVector", lambda k: k.layers.RepeatVector(3), (2, 4)),
        L("Cropping1D", lambda k: k.layers.Cropping1D((1, 1)), seq),
        L("Cropping2D", lambda k: k.layers.Cropping2D(((1, 2), (2, 1))), img),
        L("Cropping3D", lambda k: k.layers.Cropping3D(1), vol),
        L("ZeroPadding1D", lambda k: k.layers.ZeroPadding1D(2), seq),
        L("ZeroPadding2D", lambda k: k.layers.ZeroPadding2D(((1, 0), (2, 1))), img),
        L("ZeroPadding3D", lambda k: k.layers.ZeroPadding3D(1), vol),
        L("UpSampling1D", lambda k: k.layers.UpSampling1D(2), seq),
        L("UpSampling2D.nearest", lambda k: k.layers.UpSampling2D(2), img),
        L("UpSampling2D.bilinear", lambda k: k.layers.UpSampling2D(2, interpolation="bilinear"), img),
        L("UpSampling3D", lambda k: k.layers.UpSampling3D(2), vol),
        L("Add", lambda k: k.layers.Add(), [(3, 4), (3, 4)]),
        L("Subtract", lambda k: k.layers.Subtract(), [(3, 4), (3, 4)]),
        L("Multiply", lambda k: k.layers.Multiply(), [(3, 4), (3, 4)]),
        L("Average", lambda k: k.layers.Average(), [(3, 4), (3, 4)]),
        L("Maximum", lambda k: k.layers.Maximum(), [(3, 4), (3, 4)]),
        L("Minimum", lambda k: k.layers.Minimum(), [(3, 4), (3, 4)]),
        L("Concatenate", lambda k: k.layers.Concatenate(axis=1), [(3, 4), (3, 2)]),
        L("Dot", lambda k: k.layers.Dot(axes=1, normalize=True), [(3, 4), (3, 4)]),
        L("Lambda", lambda k: k.layers.Lambda(lambda x: x * 2.0 + 1.0), (3, 4)),
        L("Identity", lambda k: k.layers.Identity(), (3, 4)),
        L("Rescaling", lambda k: k.layers.Rescaling(1 / 255.0, offset=-1), img),
        L("Resizing.bilinear", lambda k: k.layers.Resizing(5, 6), img),
        L("Resizing.nearest", lambda k: k.layers.Resizing(5, 6, interpolation="nearest"), img),
        L("Resizing.bicubic", lambda k: k.layers.Resizing(5, 6, interpolation="bicubic"), img),
        L("Resizing.area", lambda k: k.layers.Resizing(5, 6, interpolation="area"), img),
        L("Resizing.crop_to_aspect", lambda k: k.layers.Resizing(4, 6, crop_to_aspect_ratio=True), img),
        L("CenterCrop", lambda k: k.layers.CenterCrop(4, 5), img),
        L("Normalization", lambda k: k.layers.Normalization(mean=[0.1, 0.2, 0.3], variance=[1.0, 2.0, 4.0]), img),
        L("Discretization", lambda k: k.layers.Discretization(bin_boundaries=[-0.5, 0.0, 0.5]), (3, 4)),
        L("CategoryEncoding.multi_hot", lambda k: k.layers.CategoryEncoding(10, output_mode="multi_hot"), (3, 4),
          dtype="int32"),
        L("CategoryEncoding.count", lambda k: k.layers.CategoryEncoding(10, output_mode="count"), (3, 4),
          dtype="int32"),
        L("CategoryEncoding.one_hot", lambda k: k.layers.CategoryEncoding(10, output_mode="one_hot"), (3,),
          dtype="int32"),
        L("Hashing", lambda k: k.layers.Hashing(7), (3, 2), dtype="string"),
        L("Hashing.salted", lambda k: k.layers.Hashing(7, salt=[1, 2]), (3, 2), dtype="string"),
        L("Hashing.int", lambda k: k.layers.Hashing(7), (3, 2), dtype="int64"),
        L("HashedCrossing", lambda k: k.layers.HashedCrossing(5), [(3,), (3,)], dtype="string"),
        L("StringLookup", lambda k: k.layers.StringLookup(vocabulary=["a", "b", "dog"]), (3, 2), dtype="string"),
        L("StringLookup.one_hot", lambda k: k.layers.StringLookup(vocabulary=["a", "b"], output_mode="one_hot"),
          (3,), dtype="string"),
        L("IntegerLookup", lambda k: k.layers.IntegerLookup(vocabulary=[1, 2, 3]), (3, 2), dtype="int64"),
        L("TextVectorization", lambda k: k.layers.TextVectorization(vocabulary=["a", "b", "dog", "cat"]), (3,),
          dtype="string"),
        L("TextVectorization.tf_idf",
          lambda k: k.layers.TextVectorization(vocabulary=["a", "b"], idf_weights=[0.5, 1.0], output_mode="tf_idf"),
          (3,), dtype="string"),
        L("RandomFlip", lambda k: k.layers.RandomFlip(seed=3), img, random=True),
        L("RandomRotation", lambda k: k.layers.RandomRotation(0.2, seed=3), img, random=True),
        L("RandomZoom", lambda k: k.layers.RandomZoom(0.2, seed=3), img, random=True),
        L("RandomTranslation", lambda k: k.layers.RandomTranslation(0.2, 0.2, seed=3), img, random=True),
        L("RandomContrast", lambda k: k.layers.RandomContrast(0.2, seed=3), img, random=True),
        L("RandomBrightness", lambda k: k.layers.RandomBrightness(0.2, seed=3), img, random=True),
        L("RandomCrop", lambda k: k.layers.RandomCrop(5, 5, seed=3), img, random=True),
        L("RandomHeight", lambda k: k.layers.RandomHeight(0.2, seed=3), img, random=True),
        L("RandomWidth", lambda k: k.layers.RandomWidth(0.2, seed=3), img, random=True),
        L("SpectralNormalization", lambda k: k.layers.SpectralNormalization(k.layers.Dense(3)), (3, 4)),
    ]
    return c


def _MHA(k):
    mha = k.layers.MultiHeadAttention(num_heads=2, key_dim=3)

    class Call:
        def __call__(self, xs, **kw):
            return mha(xs[0], xs[1], **kw)

    return Call()
