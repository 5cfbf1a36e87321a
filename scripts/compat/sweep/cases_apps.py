"""Sweep cases: every `tf_keras.applications` model (weights=None, a small input, 5
classes), its gradient and a few SGD steps with its batch-norm moving-average updates."""

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


def app_case(name, side, batch=2, steps=2):
    state = {}

    def build():
        import tensorflow as tf
        import tf_keras as keras
        kw = dict(weights=None, input_shape=(side, side, 3), classes=5)
        if name.startswith("MobileNetV3") or name.startswith("EfficientNetV2") or name.startswith("RegNet") \
                or name.startswith("ResNetRS") or name.startswith("ConvNeXt"):
            kw["include_preprocessing"] = False
        model = getattr(keras.applications, name)(**kw)
        rng = np.random.default_rng(7)
        x = tf.compat.v1.placeholder(tf.float32, (batch, side, side, 3))
        y = model(x, training=True)
        state["updates"] = model.get_updates_for(x) + model.get_updates_for(None)
        return {x: rng.uniform(-1, 1, (batch, side, side, 3)).astype(np.float32)}, [y]

    def train(loss):
        import tensorflow as tf
        opt = tf.compat.v1.train.MomentumOptimizer(0.01, 0.9)
        with tf.control_dependencies(state.get("updates", [])):
            return opt.minimize(loss)

    return Case("applications." + name, build, train=train)


def cases():
    return [app_case(n, s) for n, s in MODELS]
