"""Golden values for the string kernels (TensorFlow 2.21, eager raw ops).
Run from the repo root: .venv/bin/python -P scripts/golden/strings.py (-P: this folder holds
array.py and random.py, which would shadow the standard library)"""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from common import attr_json, tensor, write  # noqa: E402

cases = []


T = tensor


def case(name, op, args, attrs=None, types=None):
    attrs = attrs or {}
    kw = {k: tf.constant(v) for k, v in args}
    kw.update(attrs)
    if types and "out_type" in types:
        kw["out_type"] = tf.as_dtype(types["out_type"])
    out = getattr(tf.raw_ops, op)(**kw)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    ja = {k: attr_json(v) for k, v in attrs.items()}
    for k, v in (types or {}).items():
        ja[k] = {"type": v}
    cases.append({"name": name, "op": op, "attrs": ja, "inputs": [T(np.asarray(v, dtype=object) if
                                                                    isinstance(v, list) else v) for _, v in args],
                  "outputs": [T(o.numpy()) for o in outs]})
    if all(o.dtype.is_integer for o in outs):
        cases[-1].update(rtol=0, atol=0)  # hashes: exact


def S(*v, shape=None):
    a = np.array([x.encode() for x in v], dtype=object)
    return a.reshape(shape) if shape else a


WORDS = S("", "a", "abc", "hello", "feature_12", "0123456789abcdef", "seventeen chars!!",
          "a string of thirty-two bytes....", "x" * 33, "the quick brown fox jumps over the lazy dog. 0123456789",
          "y" * 64, "z" * 65, "the quick brown fox jumps over the lazy dog, again and again and again!!",
          "ütf-8 wörds, ✓", "q" * 130, "w" * 200)
case("hash_fast_lengths", "StringToHashBucketFast", [("input", WORDS)], {"num_buckets": 1000003})
case("hash_fast_big", "StringToHashBucketFast", [("input", WORDS)], {"num_buckets": 2 ** 62})
case("hash_fast_2d", "StringToHashBucketFast", [("input", S("a", "b", "c", "d", shape=(2, 2)))], {"num_buckets": 10})
case("hash_legacy", "StringToHashBucket", [("string_tensor", WORDS)], {"num_buckets": 77777})
case("hash_strong", "StringToHashBucketStrong", [("input", WORDS)], {"num_buckets": 1000, "key": [1, 2]})
case("hash_strong_big_key", "StringToHashBucketStrong", [("input", WORDS)],
     {"num_buckets": 2 ** 40, "key": [123456789012345, -5]})

MIXED = S("  Hello World\t", "ABC def", "", "\n x \r", "ÄÖÜ äöü", "MiXeD 123")
case("lower", "StringLower", [("input", MIXED)], {"encoding": ""})
case("upper", "StringUpper", [("input", MIXED)], {"encoding": ""})
case("lower_utf8", "StringLower", [("input", MIXED)], {"encoding": "utf-8"})
case("upper_utf8", "StringUpper", [("input", MIXED)], {"encoding": "utf-8"})
case("strip", "StringStrip", [("input", MIXED)])

LINES = S("a b  c", "", " lead and trail ", "one", "x,,y,z", "a<>b<>c<>")
case("split_v2_ws", "StringSplitV2", [("input", LINES), ("sep", np.array(b"", dtype=object))], {"maxsplit": -1})
case("split_v2_ws_max", "StringSplitV2", [("input", LINES), ("sep", np.array(b"", dtype=object))], {"maxsplit": 1})
case("split_v2_sep", "StringSplitV2", [("input", LINES), ("sep", np.array(b",", dtype=object))], {"maxsplit": -1})
case("split_v2_multi", "StringSplitV2", [("input", LINES), ("sep", np.array(b"<>", dtype=object))], {"maxsplit": -1})
case("split_v2_max2", "StringSplitV2", [("input", LINES), ("sep", np.array(b" ", dtype=object))], {"maxsplit": 2})
case("split_v1_skip", "StringSplit", [("input", LINES), ("delimiter", np.array(b" ,", dtype=object))],
     {"skip_empty": True})
case("split_v1_keep", "StringSplit", [("input", LINES), ("delimiter", np.array(b" ,", dtype=object))],
     {"skip_empty": False})
case("split_v1_chars", "StringSplit", [("input", S("abc", "", "de")), ("delimiter", np.array(b"", dtype=object))],
     {"skip_empty": True})

case("substr_scalar", "Substr", [("input", S("hello", "world!", "abc")), ("pos", np.int32(1)), ("len", np.int32(3))],
     {"unit": "BYTE"}, {"T": "int32"})
case("substr_neg", "Substr", [("input", S("hello", "world!", "abc")), ("pos", np.int64(-2)), ("len", np.int64(5))],
     {"unit": "BYTE"}, {"T": "int64"})
case("substr_elementwise", "Substr", [("input", S("hello", "world!", "abc")), ("pos", np.array([0, 5, 3], np.int32)),
                                      ("len", np.array([2, 1, 4], np.int32))], {"unit": "BYTE"}, {"T": "int32"})
case("substr_utf8", "Substr", [("input", S("ÄÖÜ äöü", "héllo")), ("pos", np.int32(1)), ("len", np.int32(3))],
     {"unit": "UTF8_CHAR"}, {"T": "int32"})

NUMS = S("1.5", " -2 ", "1e3", "7", "0.1", "-0")
case("to_number_f32", "StringToNumber", [("string_tensor", NUMS)], {}, {"out_type": "float32"})
case("to_number_f64", "StringToNumber", [("string_tensor", NUMS)], {}, {"out_type": "float64"})
case("to_number_i32", "StringToNumber", [("string_tensor", S("12", "-7", " 3", "+4", "2147483647"))], {},
     {"out_type": "int32"})
case("to_number_i64", "StringToNumber", [("string_tensor", S("9007199254740993", "-1"))], {}, {"out_type": "int64"})

FL = np.array([1.5, -0.25, 1234.5678, 0.0, 1e-7, -3e10], np.float32)
AS = {"precision": -1, "scientific": False, "shortest": False, "width": -1, "fill": ""}
case("as_string_f32", "AsString", [("input", FL)], AS, {"T": "float32"})
case("as_string_f64_prec", "AsString", [("input", FL.astype(np.float64))], dict(AS, precision=2), {"T": "float64"})
case("as_string_sci", "AsString", [("input", FL)], dict(AS, scientific=True, precision=3), {"T": "float32"})
case("as_string_shortest", "AsString", [("input", FL.astype(np.float64))], dict(AS, shortest=True), {"T": "float64"})
case("as_string_i32_width", "AsString", [("input", np.array([5, -12, 300], np.int32))], dict(AS, width=5, fill="0"),
     {"T": "int32"})
case("as_string_i64", "AsString", [("input", np.array([2 ** 40, -1], np.int64))], dict(AS, width=4), {"T": "int64"})
case("as_string_bool", "AsString", [("input", np.array([True, False]))], AS, {"T": "bool"})

B = S("", "f", "fo", "foo", "foob", "hello world", "ü?>~")
case("encode_b64", "EncodeBase64", [("input", B)], {"pad": False})
case("encode_b64_pad", "EncodeBase64", [("input", B)], {"pad": True})
case("decode_b64", "DecodeBase64", [("input", S("", "Zg", "Zm8=", "Zm9v", "aGVsbG8gd29ybGQ", "w7w_Pn4"))])

TXT = S("hello world", "aaa bbb aaa", "no match here", "")
case("static_regex_all", "StaticRegexReplace", [("input", TXT)],
     {"pattern": "a+", "rewrite": "<\\0>", "replace_global": True})
case("static_regex_first", "StaticRegexReplace", [("input", TXT)],
     {"pattern": "(\\w+) (\\w+)", "rewrite": "\\2 \\1 $", "replace_global": False})
case("regex_replace", "RegexReplace", [("input", TXT), ("pattern", np.array(b"[aeiou]", dtype=object)),
                                       ("rewrite", np.array(b"_", dtype=object))], {"replace_global": True})

# DecodeCSV: quotes, defaults, na_value, select_cols, int/float/string columns.
CSV = S('1,2.5,"a,b",7', ',,plain,', '3,-1e2,"say ""hi""",9', '4, 0.5 ,x,10')
DEF = [np.array([0], np.int32), np.array([9.5], np.float32), np.array([b"?"], dtype=object), np.array([-1], np.int64)]


def csv_case(name, records, defaults, **attrs):
    kw = dict(records=tf.constant(records), record_defaults=[tf.constant(d) for d in defaults], **attrs)
    out = tf.raw_ops.DecodeCSV(**kw)
    types = [T(d)["dtype"] for d in defaults]
    ja = {k: attr_json(v) for k, v in attrs.items()}
    ja["OUT_TYPE"] = {"list_type": types}
    cases.append({"name": name, "op": "DecodeCSV", "attrs": ja, "inputs": [T(records)] + [T(d) for d in defaults],
                  "outputs": [T(o.numpy()) for o in out]})


csv_case("csv_basic", CSV, DEF, field_delim=",", use_quote_delim=True, na_value="", select_cols=[])
csv_case("csv_na", S("1;NA;z", "NA;2.25;"), [np.array([5], np.int64), np.array([1.0], np.float64),
                                             np.array([b"d"], dtype=object)],
         field_delim=";", use_quote_delim=False, na_value="NA", select_cols=[])
csv_case("csv_select", S("a,1,b,2", "c,3,d,4").reshape(2, 1), [np.array([0], np.int32), np.array([0], np.int64)],
         field_delim=",", use_quote_delim=True, na_value="", select_cols=[1, 3])

write("strings", cases)
