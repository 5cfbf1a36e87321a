"""Test images and TensorFlow 2.21's decodes of them, for crates/kernels/tests/image_codecs.rs
(run once with the venv like the golden generators). Writes small PNG / JPEG / GIF files
(made by TensorFlow, the palette PNG and the GIF by Pillow) to
crates/kernels/tests/data/image/ and expected.json there: for each file and decode op
configuration, TensorFlow's output."""
import io
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from PIL import Image  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "kernels", "tests", "data", "image")
os.makedirs(OUT, exist_ok=True)
rng = np.random.RandomState(7)
files = {}


def save(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    files[name] = data


def smooth(h, w, c):
    """A smooth image with a little noise (what JPEG is for)."""
    y, x = np.mgrid[0:h, 0:w]
    chans = [128 + 90 * np.sin(x / 3.0 + k) * np.cos(y / 4.0 - k) for k in range(c)]
    img = np.stack(chans, -1) + rng.randint(-6, 7, size=(h, w, c))
    return np.clip(img, 0, 255).astype(np.uint8)


save("rgb8.png", tf.io.encode_png(rng.randint(0, 256, size=(5, 7, 3)).astype(np.uint8)).numpy())
save("rgba8.png", tf.io.encode_png(rng.randint(0, 256, size=(4, 3, 4)).astype(np.uint8)).numpy())
save("gray8.png", tf.io.encode_png(rng.randint(0, 256, size=(3, 6, 1)).astype(np.uint8)).numpy())
save("graya8.png", tf.io.encode_png(rng.randint(0, 256, size=(3, 2, 2)).astype(np.uint8)).numpy())
save("rgb16.png", tf.io.encode_png(rng.randint(0, 65536, size=(4, 5, 3)).astype(np.uint16)).numpy())
save("gray16.png", tf.io.encode_png(rng.randint(0, 65536, size=(2, 3, 1)).astype(np.uint16)).numpy())
pal = Image.fromarray(rng.randint(0, 4, size=(4, 5)).astype(np.uint8), mode="P")
pal.putpalette([255, 0, 0, 0, 255, 0, 0, 0, 255, 30, 60, 90])
buf = io.BytesIO()
pal.save(buf, format="PNG", transparency=2)
save("palette_trns.png", buf.getvalue())

save("rgb.jpg", tf.io.encode_jpeg(smooth(16, 24, 3), quality=90).numpy())
save("rgb444.jpg", tf.io.encode_jpeg(smooth(13, 10, 3), quality=95, chroma_downsampling=False).numpy())
save("progressive.jpg", tf.io.encode_jpeg(smooth(9, 17, 3), quality=80, progressive=True).numpy())
save("gray.jpg", tf.io.encode_jpeg(smooth(11, 8, 1), quality=85).numpy())

frames = []
for k in range(3):
    f = Image.fromarray(rng.randint(0, 4, size=(6, 5)).astype(np.uint8), mode="P")
    f.putpalette([0, 0, 0, 200, 10, 10, 10, 200, 10, 10, 10, 200])
    frames.append(f)
buf = io.BytesIO()
frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], transparency=0, disposal=1, duration=50)
save("anim.gif", buf.getvalue())


def t(a):
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": [float(v) for v in a.reshape(-1)]}


cases = []
for name, data in files.items():
    if name.endswith(".png"):
        for ch in (0, 1, 3, 4):
            for dt in (tf.uint8, tf.uint16):
                cases.append({"file": name, "op": "DecodePng", "channels": ch, "dtype": dt.name,
                              "out": t(tf.io.decode_png(data, channels=ch, dtype=dt).numpy())})
        cases.append({"file": name, "op": "DecodeImage", "channels": 0, "dtype": "float32",
                      "out": t(tf.io.decode_image(data, dtype=tf.float32).numpy())})
    elif name.endswith(".jpg"):
        for ch in (0, 1, 3):
            cases.append({"file": name, "op": "DecodeJpeg", "channels": ch, "dtype": "uint8",
                          "out": t(tf.io.decode_jpeg(data, channels=ch).numpy())})
        cases.append({"file": name, "op": "ExtractJpegShape", "channels": 0, "dtype": "int32",
                      "out": t(tf.io.extract_jpeg_shape(data).numpy())})
        cases.append({"file": name, "op": "DecodeImage", "channels": 0, "dtype": "uint8",
                      "out": t(tf.io.decode_image(data).numpy())})
    else:
        cases.append({"file": name, "op": "DecodeGif", "channels": 0, "dtype": "uint8",
                      "out": t(tf.io.decode_gif(data).numpy())})
        cases.append({"file": name, "op": "DecodeImage", "channels": 0, "dtype": "uint8",
                      "out": t(tf.io.decode_image(data).numpy())})
        cases.append({"file": name, "op": "DecodeImage", "channels": 3, "dtype": "float32", "expand": False,
                      "out": t(tf.io.decode_image(data, channels=3, dtype=tf.float32,
                                                  expand_animations=False).numpy())})
with open(os.path.join(OUT, "expected.json"), "w") as f:
    json.dump({"generator": "scripts/golden/image_codecs.py (TensorFlow 2.21)", "cases": cases}, f)
print("wrote", len(files), "files and", len(cases), "cases to", OUT)
