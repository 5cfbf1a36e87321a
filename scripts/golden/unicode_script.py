"""The Unicode Script property as TensorFlow 2.21 reports it (`tf.strings.unicode_script`,
ICU's UScriptCode numbers), written once as a range table to
crates/kernels/src/string/unicode_script_ranges.txt: one line per run of code points with
the same script, `<first code point> <script>` in hex and decimal, in increasing order (a
run lasts until the next line's first code point; after the last, to 0x10FFFF). Also
prints what TensorFlow gives outside 0..0x10FFFF (-1, ICU's USCRIPT_INVALID_CODE), which
crates/kernels/src/string/unicode_script.rs asserts.
Run it as every generator here runs (common.py's header says how)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "kernels", "src", "string",
                   "unicode_script_ranges.txt")
cps = np.arange(0, 0x110000, dtype=np.int32)
scripts = tf.strings.unicode_script(tf.constant(cps)).numpy()
starts = np.concatenate([[0], np.nonzero(np.diff(scripts))[0] + 1])
with open(OUT, "w") as f:
    f.write("# Unicode Script (ICU UScriptCode) of every code point, from TensorFlow 2.21's\n"
            "# tf.strings.unicode_script: <first code point, hex> <script>; see scripts/golden/unicode_script.py\n")
    for s in starts:
        f.write("%x %d\n" % (s, scripts[s]))
print("wrote", OUT, len(starts), "runs")
print("outside:", tf.strings.unicode_script(tf.constant([-1, -100, 0x110000, 0x7fffffff, -2**31], tf.int32)).numpy())
print("samples:", tf.strings.unicode_script(tf.constant([65, 0x416, 0x4e00, 0x300, 0xd800, 0xe000, 0x1f600, 0x10ffff], tf.int32)).numpy())
