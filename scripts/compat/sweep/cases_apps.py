"""Sweep cases: every `tf_keras.applications` model (weights=None, a small input, 5
classes) in inference mode, with the gradient of the loss with respect to the input and
every weight.

Inference mode, because a model in training mode at this size is not a check at all: its
batch norms normalise a batch of 2 images over 1x1 or 2x2 feature maps, so their variances
are near zero, gradients reach 1e11, and TensorFlow's own result moves by order one when its
input moves by 1e-6 (ferroflow's grouped RegNet differed from TensorFlow by 0.7 in training
mode and equalled it to 1e-6 in inference mode, with the same weights). Training steps are
left out for the same reason (with this loss they diverge to NaN within three steps in
TensorFlow too). Batch norm in training mode, its gradients and its moving-average updates
are checked by the `layers.BatchNormalization` cases. The weights are seeded
(`tf_keras.utils.set_random_seed(1)`), so every run checks the same model."""

import numpy as np

from harness import Case

# (model, input side): the smallest input each model accepts.
MODELS = [
    ("ConvNeXtTiny", 32), ("DenseNet121", 32), ("EfficientNetB0", 32), ("EfficientNetV2B0", 32),
    ("InceptionResNetV2", 75), ("InceptionV3", 75), ("MobileNet", 32), ("MobileNetV2", 32),
    ("MobileNetV3Small", 32), ("MobileNetV3Large", 32), ("NASNetMobile", 32), ("RegNetX002", 32),
    ("RegNetY002", 32), ("ResNet50", 32), ("ResNet50V2", 32), ("ResNetRS50", 32), ("VGG16", 32),
    ("Xception", 71),
]
# The other sizes of each family build from the same layers (the sweep checks one of each).
FAMILY = {
    "ConvNeXtTiny": "ConvNeXt{Small,Base,Large,XLarge}", "DenseNet121": "DenseNet{169,201}",
    "EfficientNetB0": "EfficientNetB1-B7", "EfficientNetV2B0": "EfficientNetV2{B1-B3,S,M,L}",
    "NASNetMobile": "NASNetLarge", "RegNetX002": "RegNetX004-X320", "RegNetY002": "RegNetY004-Y320",
    "ResNet50": "ResNet{101,152}", "ResNet50V2": "ResNet{101,152}V2", "ResNetRS50": "ResNetRS{101-420}",
    "VGG16": "VGG19",
}


def app_case(name, side, batch=2):
    def build():
        import tensorflow as tf
        import tf_keras as keras
        keras.utils.set_random_seed(1)
        kw = dict(weights=None, input_shape=(side, side, 3), classes=5)
        if name.startswith("MobileNetV3") or name.startswith("EfficientNetV2") or name.startswith("RegNet") \
                or name.startswith("ResNetRS") or name.startswith("ConvNeXt"):
            kw["include_preprocessing"] = False
        model = getattr(keras.applications, name)(**kw)
        rng = np.random.default_rng(7)
        x = tf.compat.v1.placeholder(tf.float32, (batch, side, side, 3))
        y = model(x, training=False)
        return {x: rng.uniform(-1, 1, (batch, side, side, 3)).astype(np.float32)}, [y]

    return Case("applications." + name, build)


def cases():
    return [app_case(n, s) for n, s in MODELS]
