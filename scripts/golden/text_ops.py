"""Golden values for the tf.strings ops ReduceJoin, StringNGrams, UnicodeDecode,
UnicodeDecodeWithOffsets, UnicodeEncode, UnicodeTranscode, StringFormat and Fingerprint
(TensorFlow 2.21, eager raw ops): axis orders, keep_dims and empty axes; n-gram widths
with and without padding and short sequences; malformed UTF-8 (invalid bytes, truncated,
surrogate and overlong sequences) under replace and ignore, control characters, UTF-16-BE
and UTF-32-BE, invalid code points to encode; tensor summaries of every printable type with
elision per dimension; fingerprints of numeric and string rows. Run as the header of
common.py says, with <family> = text_ops."""
import numpy as np

from common import case_list, raw_op_case, tensor, write

cases, case = case_list()
rs_f = np.random.RandomState(43)


def s(*v):
    return np.array([x.encode() if isinstance(x, str) else x for x in v], dtype=object)


words = s(*[str(i) for i in range(24)]).reshape(2, 3, 4)
for axes in [[0], [1], [-1], [0, 2], [2, 0], [0, 1, 2], [2, 1, 0], [1, 0, 2], []]:
    for keep in [False, True]:
        name = "reduce_join_%s_%s" % ("_".join(str(a) for a in axes) or "none", "keep" if keep else "drop")
        case(name, "ReduceJoin", [("inputs", words), ("reduction_indices", np.array(axes, np.int32))], {},
             {"keep_dims": keep, "separator": "." if len(axes) % 2 else ""})
case("reduce_join_scalar_axis", "ReduceJoin", [("inputs", words[0]), ("reduction_indices", np.array(1, np.int32))],
     {}, {"keep_dims": False, "separator": ", "})
case("reduce_join_empty_axis", "ReduceJoin",
     [("inputs", np.zeros((2, 0), dtype=object)), ("reduction_indices", np.array([1], np.int32))], {},
     {"keep_dims": False, "separator": "-"})

tokens = s("the", "quick", "brown", "fox", "jumps", "a", "b", "x")
for splits, sname in [([0, 5, 7, 7, 8], "rows"), ([0, 8], "one")]:
    for widths in [[1], [2], [3], [2, 3], [1, 4]]:
        for pad_width, pads in [(0, ("", "")), (1, ("<s>", "</s>")), (-1, ("L", "R")), (2, ("L", ""))]:
            for short in [False, True]:
                if short and pad_width < 0:
                    continue
                name = "ngrams_%s_w%s_p%d_%s%s" % (sname, "".join(map(str, widths)), pad_width, pads[0] or "none",
                                                  "_short" if short else "")
                case(name, "StringNGrams", [("data", tokens), ("data_splits", np.array(splits, np.int64))],
                     {"Tsplits": "int64"},
                     {"separator": " " if pad_width != 2 else "_", "ngram_widths": widths, "left_pad": pads[0],
                      "right_pad": pads[1], "pad_width": pad_width, "preserve_short_sequences": short})
case("ngrams_short_wide", "StringNGrams", [("data", tokens), ("data_splits", np.array([0, 2, 8], np.int32))],
     {"Tsplits": "int32"}, {"separator": "+", "ngram_widths": [5], "left_pad": "<", "right_pad": ">",
                            "pad_width": 1, "preserve_short_sequences": True})

texts = s(b"a\x00b\x1f\x7f\xc2\x85\xe2\x80\x8bc", b"x\xff\xfey\xe2\x82z\xf0\x9f\x98\x80", b"\xed\xa0\x80q",
          b"\xc0\xafr", "", "h\u00e9llo w\u00f6rld \u4e16\u754c", b"\xf0\x9f\x98")
for errors in ["replace", "ignore"]:
    for controls in [False, True]:
        # TensorFlow's kernel aborts on int32 row splits (a failed CHECK); ferroflow's gives them.
        for tsplits in ["int64"]:
            attrs = {"input_encoding": "UTF-8", "errors": errors, "replacement_char": 63 if controls else 65533,
                     "replace_control_characters": controls}
            name = "%s_%s_%s" % (errors, "controls" if controls else "keep", tsplits)
            case("decode_" + name, "UnicodeDecode", [("input", texts)], {"Tsplits": tsplits}, attrs)
            case("decode_offsets_" + name, "UnicodeDecodeWithOffsets", [("input", texts.reshape(7, 1))],
                 {"Tsplits": tsplits}, attrs)
u16 = s(b"\x00a\xd8\x3d\xde\x00\xdc\x00\x00b", b"\xd8\x00\x00c", b"\x00d\x00")
u32 = s(b"\x00\x00\x00a\x00\x01\xf6\x00\x00\x11\x00\x00\x00\x00\xd8\x00\x00\x00\x00b", b"\x00\x00\x00c\x00\x00")
for enc, inp in [("UTF-16-BE", u16), ("UTF-32-BE", u32)]:
    case("decode_" + enc, "UnicodeDecodeWithOffsets", [("input", inp)], {"Tsplits": "int64"},
         {"input_encoding": enc, "errors": "replace", "replacement_char": 65533, "replace_control_characters": False})

cps = np.array([104, 105, 0x1F600, -5, 0x110000, 0xD800, 0x7F, 0xE9, 0x4E16, 0], np.int32)
for enc in ["UTF-8", "UTF-16-BE", "UTF-32-BE"]:
    for errors in ["replace", "ignore"]:
        case("encode_%s_%s" % (enc, errors), "UnicodeEncode",
             [("input_values", cps), ("input_splits", np.array([0, 3, 7, 7, 10], np.int64))], {"Tsplits": "int64"},
             {"errors": errors, "output_encoding": enc, "replacement_char": 0x2D})
for out_enc in ["UTF-8", "UTF-16-BE", "UTF-32-BE"]:
    case("transcode_utf8_" + out_enc, "UnicodeTranscode", [("input", texts.reshape(7, 1))], {},
         {"input_encoding": "UTF-8", "output_encoding": out_enc, "errors": "replace", "replacement_char": 65533,
          "replace_control_characters": True})
case("transcode_utf16_utf8", "UnicodeTranscode", [("input", u16)], {},
     {"input_encoding": "UTF-16-BE", "output_encoding": "UTF-8", "errors": "ignore", "replacement_char": 65533,
      "replace_control_characters": False})

# StringFormat: every printable type, elision per dimension, empty dims, strings with
# escapes, unprintable types.
fmt = [("floats", [np.array([1.5, 2.0, -0.0, 1e-7, 123456789.0, np.nan, np.inf, 0.1, 1 / 3.0, 1e10, 1e-5],
                            np.float32)], 3),
       ("doubles", [np.array([0.1, 1 / 3.0, 1e16, 123456.789, -2.5e-300, 5.0])], -1),
       ("matrix", [np.arange(12).reshape(3, 4).astype(np.int32)], 3),
       ("elided_1d", [np.arange(10, dtype=np.int64)], 3),
       ("elided_2d", [np.arange(100, dtype=np.int64).reshape(10, 10)], 2),
       ("elided_3d", [np.arange(27, dtype=np.int32).reshape(3, 3, 3)], 1),
       ("cube", [np.arange(1, 9, dtype=np.int32).reshape(2, 2, 2)], 3),
       ("all", [np.arange(10, dtype=np.int32)], -1),
       ("zero_summarize", [np.arange(4, dtype=np.int32)], 0),
       ("empty_rows", [np.zeros((3, 0), np.float32)], 3),
       ("empty_cols", [np.zeros((0, 3), np.float32)], 3),
       ("empty", [np.zeros((0,), np.float32)], 3),
       ("scalars", [np.array(3.25), np.array(7, np.int8), np.array(1 / 3.0, np.float32), np.array(True)], 3),
       ("small_types", [np.array([1.5], np.float16), np.array([255], np.uint8), np.array([-3], np.int16),
                        np.array([9], np.uint16), np.array([True, False])], 3),
       ("strings", [np.array([b"ab", b"c d", b"q\x01\xff\"\\\n\t'"], dtype=object)], 3),
       ("complex", [np.array([1 + 2j, 3j], np.complex64)], 3)]
for name, inputs, summarize in fmt:
    template = " | ".join(["{}"] * len(inputs)) + " end"
    c = raw_op_case("format_" + name, "StringFormat", [("inputs", inputs)], {},
                    {"template": "x=" + template, "placeholder": "{}", "summarize": summarize})
    # The list(type) attr TensorFlow infers from the inputs.
    c["attrs"]["T"] = {"list_type": [tensor(np.asarray(i))["dtype"] for i in inputs]}
    cases.append(c)

# Fingerprint: numeric rows as bytes, one string per row, several strings per row.
for name, data in [("f32", rs_f.normal(0, 1, (4, 3)).astype(np.float32)), ("i64_1d", np.arange(5, dtype=np.int64)),
                   ("u8", np.arange(24, dtype=np.uint8).reshape(2, 3, 4)),
                   ("strings", s("a", "", "hello world", "\u4e16")),
                   ("string_rows", s("a", "b", "c", "d", "e", "f").reshape(2, 3)),
                   ("bool", np.array([[True, False], [False, False]]))]:
    case("fingerprint_" + name, "Fingerprint", [("data", data), ("method", np.array(b"farmhash64", dtype=object))],
         {"T": tensor(data)["dtype"]})

write("text_ops", cases)
