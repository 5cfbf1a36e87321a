"""Golden V1 checkpoint (TensorFlow 1's table-of-SavedTensorSlices format) from TensorFlow
2.21's `SaveSlices` kernel, written to crates/kernels/tests/data/checkpoint/v1.json: the
file's bytes (hex) for tensors of every dtype the format holds (whole tensors, a scalar, an
empty one, and a float64 tensor saved as two row slices), the inputs that wrote it, and what
`RestoreSlice` reads back from it (whole tensors and sub-slices crossing the stored ones),
plus the error class and message of restoring a missing name and a wrong dtype.
crates/kernels/tests/unit/io/checkpoint_v1.rs reads TensorFlow's file and writes its own.
Run it as every generator here runs (common.py's header says how)."""
import json
import os
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

R = tf.raw_ops
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "kernels", "tests", "data", "checkpoint",
                   "v1.json")


def msg(e):
    """An error's message without the eager wrapper's function-node prefix and op suffix."""
    m = e.message.split(" [Op:")[0]
    return m.split("}} ", 1)[1] if m.startswith("{{") else m


def enc(a):
    """A numpy array as JSON: dtype name, shape, flat values (bytes as hex, complex as pairs)."""
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.dtype == object or a.dtype.kind == "S":
        vals = [bytes(x).hex() for x in flat]
        name = "string"
    elif a.dtype.kind == "c":
        vals = [[float(x.real), float(x.imag)] for x in flat]
        name = a.dtype.name
    elif a.dtype.kind == "b":
        vals = [bool(x) for x in flat]
        name = "bool"
    elif a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        vals = [float(x) for x in flat]
        name = a.dtype.name
    else:
        vals = [int(x) for x in flat]
        name = a.dtype.name
    return {"dtype": name, "shape": list(a.shape), "values": vals}


d = np.arange(8, dtype=np.float64).reshape(4, 2) * 1.5 - 2.0
items = [
    ("a", "", tf.constant([[1.5, -2.0, 3.25], [0.0, 1e-3, -7.0]], tf.float32)),
    ("b", "", tf.constant(-1234567890123, tf.int64)),
    ("c", "", tf.constant([b"x", b"", b"\xff\x00z"])),
    ("d", "4 2 0,2:-", tf.constant(d[:2])),
    ("d", "4 2 2,2:-", tf.constant(d[2:])),
    ("e", "", tf.constant([[True, False], [False, True]])),
    ("f", "", tf.constant([0.5, -65504.0, 1e-4], tf.float16)),
    ("g", "", tf.constant([-128, 0, 5, 127], tf.int8)),
    ("h", "", tf.constant([0, 200, 255], tf.uint8)),
    ("i", "", tf.constant([-32768, 7, 32767], tf.int16)),
    ("j", "", tf.constant([1 + 2j, -3.5 - 0.25j], tf.complex64)),
    ("l", "", tf.zeros([0, 3], tf.int32)),
    ("m", "", tf.constant([[1e300, -1e-300]], tf.float64)),
    ("n", "", tf.constant([2 ** 31 - 1, -5], tf.int32)),
    ("o", "", tf.constant([1 - 1j], tf.complex128)),
]
path = os.path.join(tempfile.mkdtemp(), "model.ckpt")
R.SaveSlices(filename=path, tensor_names=[n for n, _, _ in items], shapes_and_slices=[s for _, s, _ in items],
             data=[t for _, _, t in items])
raw = open(path, "rb").read()

restores = []
for name, spec, dtype in [(n, "", t.dtype) for n, s, t in items if s == ""] + [
        ("d", "", tf.float64), ("d", "4 2 1,2:-", tf.float64), ("d", "4 2 1,3:1,1", tf.float64),
        ("d", "4 2 2,2:0,2", tf.float64)]:
    if name == "d" and spec == "" and any(r["name"] == "d" and r["spec"] == "" for r in restores):
        continue
    out = R.RestoreSlice(file_pattern=path, tensor_name=name, shape_and_slice=spec, dt=dtype)
    restores.append({"name": name, "spec": spec, "want": enc(out.numpy())})

errors = []
for name, dtype in [("zz", tf.float32), ("a", tf.float64)]:
    try:
        R.Restore(file_pattern=path, tensor_name=name, dt=dtype)
        errors.append(None)
    except tf.errors.OpError as e:
        errors.append({"name": name, "class": type(e).__name__, "message": msg(e)})

# The dtypes the format cannot hold.
for dtype in (tf.bfloat16, tf.uint16, tf.uint32, tf.uint64, tf.qint16, tf.quint16):
    try:
        R.SaveSlices(filename=path + ".bad", tensor_names=["x"], shapes_and_slices=[""],
                     data=[tf.cast(tf.zeros([2]), dtype) if not dtype.is_quantized else
                           tf.raw_ops.Cast(x=tf.zeros([2], tf.int32), DstT=dtype)])
        errors.append({"save_dtype": dtype.name, "class": None})
    except tf.errors.OpError as e:
        errors.append({"save_dtype": dtype.name, "class": type(e).__name__, "message": msg(e)})

doc = {
    "file_hex": raw.hex(),
    "save": [{"name": n, "spec": s, "tensor": enc(t.numpy())} for n, s, t in items],
    "restores": restores,
    "errors": errors,
}
with open(OUT, "w") as f:
    json.dump(doc, f, indent=1)
print("wrote", OUT, len(raw), "bytes of checkpoint,", len(restores), "restores")
for e in errors:
    print(e)
