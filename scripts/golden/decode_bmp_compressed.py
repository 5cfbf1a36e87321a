"""Golden values for DecodeBmp (and DecodeImage of BMP and GIF files) and DecodeCompressed from
TensorFlow 2.21's CPU kernels, written to crates/kernels/tests/golden/decode_bmp_compressed.json,
and the error class and message TensorFlow gives for each bad input (printed; the kernel unit
tests in crates/kernels/src/image/bmp.rs and crates/kernels/src/decode_compressed.rs assert
them). Run it as every generator here runs (common.py's header says how)."""
import gzip
import os
import struct
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import blob, case_list, print_error_classes, raw_op_case, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20261206)
cases, case = case_list(raw_op_case)


def bmp(width, height, bpp, extra=0, pixels=None):
    """A BMP file (BITMAPINFOHEADER) of random pixels, rows padded to 4 bytes, `extra` bytes
    (a palette, say) between the headers and the pixels; negative height is top-down."""
    ch = bpp // 8
    row = (ch * width + 3) // 4 * 4
    if pixels is None:
        pixels = rng.randint(0, 256, (abs(height), row)).astype(np.uint8).tobytes()
    offset = 54 + extra
    size = offset + len(pixels)
    head = b"BM" + struct.pack("<IHHI", size, 0, 0, offset)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, bpp, 0, len(pixels), 2835, 2835, 0, 0)
    return head + info + bytes(rng.randint(0, 256, extra).astype(np.uint8)) + pixels


# DecodeBmp: 8-, 24- and 32-bit files, widths that need row padding, bottom-up and top-down.
files = []
for bpp in (8, 24, 32):
    for w, h in [(1, 1), (2, 3), (3, -2), (5, 4), (7, -3)]:
        files.append(("%dbit_%dx%d" % (bpp, w, h), bmp(w, h, bpp)))
files.append(("24bit_palette_gap", bmp(3, 2, 24, extra=12)))
files.append(("8bit_palette", bmp(4, 3, 8, extra=1024)))
for name, f in files:
    for ch in (0, 3, 4):
        case("DecodeBmp_%s_c%d" % (name, ch), "DecodeBmp", [("contents", blob(f))], {}, attrs={"channels": ch})

# DecodeImage dispatches BMP files: every dtype (bottom-up files only: TensorFlow's
# conversion buffer for the other dtypes is sized with the signed height).
for name, f in files:
    if "x-" in name:
        continue
    for ch in (0, 4):
        for dtype in ("uint8", "uint16", "float32"):
            case("DecodeImage_bmp_%s_c%d_%s" % (name, ch, dtype), "DecodeImage", [("contents", blob(f))],
                 {"dtype": dtype}, attrs={"channels": ch, "expand_animations": True}, rtol=0.0, atol=0.0)

# DecodeImage converts 8-bit GIF samples the same way (×256 to uint16, × float(1/255)).
import io  # noqa: E402

from PIL import Image  # noqa: E402

buf = io.BytesIO()
Image.fromarray(rng.randint(0, 256, (3, 5, 3)).astype(np.uint8)).save(buf, format="GIF")
for dtype in ("uint8", "uint16", "float32"):
    for expand in (True, False):
        case("DecodeImage_gif_%s_%d" % (dtype, expand), "DecodeImage", [("contents", blob(buf.getvalue()))],
             {"dtype": dtype}, attrs={"channels": 0, "expand_animations": expand}, rtol=0.0, atol=0.0)

# DecodeCompressed: none, zlib and gzip; empty strings, several shapes, truncated streams
# (what inflated so far), trailing bytes after a zlib stream, concatenated gzip members,
# stored blocks (level 0) and the gzip header's optional fields.
texts = [b"", b"hello", b"The quick brown fox jumps over the lazy dog. " * 40,
         bytes(rng.randint(0, 256, 3000).astype(np.uint8)), b"\0" * 5000]


def gz(data, level=6, name=None, mtime=0):
    return gzip.compress(data, compresslevel=level, mtime=mtime) if name is None else _gz_named(data, name)


def _gz_named(data, name):
    """A gzip member with FEXTRA, FNAME and FCOMMENT set."""
    body = zlib.compressobj(6, zlib.DEFLATED, -15)
    raw = body.compress(data) + body.flush()
    extra = b"ab\x03\x00xyz"
    head = b"\x1f\x8b\x08" + bytes([0x04 | 0x08 | 0x10]) + struct.pack("<I", 0) + b"\x00\x03"
    head += struct.pack("<H", len(extra)) + extra + name + b"\0" + b"a comment\0"
    return head + raw + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def arr(vals, shape):
    a = np.empty(len(vals), dtype=object)
    a[:] = vals
    return a.reshape(shape)


for kind in ("", "ZLIB", "GZIP"):
    enc = (lambda d, lvl=6: d) if kind == "" else (zlib.compress if kind == "ZLIB" else
                                                     (lambda d, lvl=6: gzip.compress(d, compresslevel=lvl, mtime=0)))
    vals = [enc(t) for t in texts]
    case("DecodeCompressed_%s_vector" % (kind or "none"), "DecodeCompressed", [("bytes", arr(vals, [5]))], {},
         attrs={"compression_type": kind})
    case("DecodeCompressed_%s_scalar" % (kind or "none"), "DecodeCompressed", [("bytes", blob(vals[2]))], {},
         attrs={"compression_type": kind})
    case("DecodeCompressed_%s_matrix" % (kind or "none"), "DecodeCompressed",
         [("bytes", arr(vals[:4] + [enc(b"x"), enc(b"")], [2, 3]))], {}, attrs={"compression_type": kind})
    case("DecodeCompressed_%s_empty_shape" % (kind or "none"), "DecodeCompressed",
         [("bytes", arr([], [0, 2]))], {}, attrs={"compression_type": kind})

z = zlib.compress(texts[2])
g = gzip.compress(texts[2], mtime=0)
odd = [
    ("ZLIB", "truncated", [z[:-2], z[:-4], z[:len(z) // 2], z[:2], z[:1], b""]),
    ("ZLIB", "trailing_bytes", [z + b"junk", zlib.compress(b"a") + zlib.compress(b"b"), z + b"\0" * 10]),
    ("ZLIB", "levels", [zlib.compress(texts[3], 0), zlib.compress(texts[2], 1), zlib.compress(texts[2], 9)]),
    ("GZIP", "truncated", [g[:-2], g[:-8], g[:len(g) // 2], g[:10], g[:3], b""]),
    ("GZIP", "members", [gzip.compress(b"ab", mtime=0) + gzip.compress(b"cd", mtime=0),
                         gzip.compress(b"", mtime=0) + g, g + g[:5], gzip.compress(b"", mtime=0) + b"junk",
                         gzip.compress(b"x", mtime=0) + gzip.compress(b"", mtime=0) + g]),
    ("GZIP", "header_fields", [_gz_named(texts[1], b"name.txt"), _gz_named(texts[2], b"")]),
    ("GZIP", "levels", [gzip.compress(texts[3], 0, mtime=0), gzip.compress(texts[4], 9, mtime=0)]),
]
for kind, name, vals in odd:
    case("DecodeCompressed_%s_%s" % (kind, name), "DecodeCompressed", [("bytes", arr(vals, [len(vals)]))], {},
         attrs={"compression_type": kind})

write("decode_bmp_compressed", cases)

good = bmp(3, 2, 24)
png = tf.io.encode_png(np.zeros((2, 2, 3), np.uint8)).numpy()
bad_adler = z[:-1] + bytes([z[-1] ^ 1])
bad_crc = g[:-8] + bytes([g[-8] ^ 1]) + g[-7:]
bad_len = g[:-4] + bytes([g[-4] ^ 1]) + g[-3:]
print_error_classes([
    ("DecodeBmp short", lambda: R.DecodeBmp(contents=good[:31])),
    ("DecodeBmp empty", lambda: R.DecodeBmp(contents=b"")),
    ("DecodeBmp unknown", lambda: R.DecodeBmp(contents=b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")),
    ("DecodeBmp png", lambda: R.DecodeBmp(contents=png)),
    ("DecodeBmp channels 1", lambda: R.DecodeBmp(contents=good, channels=1)),
    ("DecodeImage bmp channels 1", lambda: R.DecodeImage(contents=good, channels=1)),
    ("DecodeBmp channels 2", lambda: R.DecodeBmp(contents=good, channels=2)),
    ("DecodeBmp 16 bit", lambda: R.DecodeBmp(contents=bmp(3, 2, 16))),
    ("DecodeBmp width 0", lambda: R.DecodeBmp(contents=good[:18] + struct.pack("<i", 0) + good[22:])),
    ("DecodeBmp width -1", lambda: R.DecodeBmp(contents=good[:18] + struct.pack("<i", -1) + good[22:])),
    ("DecodeBmp height 0", lambda: R.DecodeBmp(contents=good[:22] + struct.pack("<i", 0) + good[26:])),
    ("DecodeBmp header -1", lambda: R.DecodeBmp(contents=good[:10] + struct.pack("<i", -1) + good[14:])),
    ("DecodeBmp huge", lambda: R.DecodeBmp(contents=good[:18] + struct.pack("<ii", 1 << 20, 1 << 10) + good[26:])),
    ("DecodeBmp one byte short", lambda: R.DecodeBmp(contents=good[:-1])),
    ("DecodeBmp one byte long", lambda: R.DecodeBmp(contents=good + b"x")),
    ("DecodePng bmp", lambda: R.DecodePng(contents=good)),
    ("DecodeCompressed bad type", lambda: R.DecodeCompressed(bytes=b"x", compression_type="LZ4")),
    ("DecodeCompressed ZSTD", lambda: R.DecodeCompressed(bytes=b"x", compression_type="ZSTD")),
    ("DecodeCompressed zlib header", lambda: R.DecodeCompressed(bytes=b"notzlib", compression_type="ZLIB")),
    ("DecodeCompressed zlib method", lambda: R.DecodeCompressed(bytes=b"\x07\x19xx", compression_type="ZLIB")),
    ("DecodeCompressed zlib window", lambda: R.DecodeCompressed(bytes=b"\x88\x1cxx", compression_type="ZLIB")),
    ("DecodeCompressed zlib dict", lambda: R.DecodeCompressed(bytes=b"\x78\xbbxxxxxx", compression_type="ZLIB")),
    ("DecodeCompressed zlib adler", lambda: R.DecodeCompressed(bytes=bad_adler, compression_type="ZLIB")),
    ("DecodeCompressed zlib block", lambda: R.DecodeCompressed(bytes=b"\x78\x9c\xff\xff", compression_type="ZLIB")),
    ("DecodeCompressed gzip header", lambda: R.DecodeCompressed(bytes=b"notgzip", compression_type="GZIP")),
    ("DecodeCompressed gzip zlib", lambda: R.DecodeCompressed(bytes=z, compression_type="GZIP")),
    ("DecodeCompressed gzip method", lambda: R.DecodeCompressed(bytes=b"\x1f\x8b\x07\x00" + g[4:], compression_type="GZIP")),
    ("DecodeCompressed gzip flags", lambda: R.DecodeCompressed(bytes=b"\x1f\x8b\x08\x20" + g[4:], compression_type="GZIP")),
    ("DecodeCompressed gzip crc", lambda: R.DecodeCompressed(bytes=bad_crc, compression_type="GZIP")),
    ("DecodeCompressed gzip len", lambda: R.DecodeCompressed(bytes=bad_len, compression_type="GZIP")),
    ("DecodeCompressed gzip junk", lambda: R.DecodeCompressed(bytes=g + b"junk", compression_type="GZIP")),
    ("DecodeCompressed gzip zeros", lambda: R.DecodeCompressed(bytes=g + b"\0\0\0", compression_type="GZIP")),
    ("DecodeCompressed gzip 1f", lambda: R.DecodeCompressed(bytes=g + b"\x1f", compression_type="GZIP")),
])
