"""Golden values for the categorical samplers Multinomial and StatelessMultinomial
(TensorFlow 2.21, eager raw ops, fixed seeds): every logit type, both output types,
rows with -inf and +inf logits, one-class rows, zero samples, and sample counts that are
and are not multiples of four (the stream TensorFlow reserves per row). Run as the header
of common.py says, with <family> = sampling_ops."""
import numpy as np
import tensorflow as tf

from common import case_list, write

rs = np.random.RandomState(39)
cases, case = case_list()


logits = rs.normal(0, 2, (4, 7))
logits[1, 2] = -np.inf
logits[2, :] = [0, -np.inf, 3, np.inf, 1, np.nan, -1]
seed = 0
for dt in ["float32", "float64", "float16", "bfloat16"]:
    for out in ["int32", "int64"]:
        for ns in [1, 5, 8, 13]:
            seed += 1
            arr = logits.astype(np.float32).astype(tf.as_dtype(dt).as_numpy_dtype)
            case("multinomial_%s_%s_%d" % (dt, out, ns), "Multinomial",
                 [("logits", arr), ("num_samples", np.array(ns, np.int32))],
                 {"T": dt, "output_dtype": out}, {"seed": seed, "seed2": 7 * seed})
            case("stateless_multinomial_%s_%s_%d" % (dt, out, ns), "StatelessMultinomial",
                 [("logits", arr), ("num_samples", np.array(ns, np.int32)),
                  ("seed", np.array([seed, -3 * seed], np.int64 if ns % 2 else np.int32))],
                 {"T": dt, "output_dtype": out, "Tseed": "int64" if ns % 2 else "int32"})
# Many classes, more rows, zero samples, one class.
big = rs.normal(0, 1, (5, 120)).astype(np.float32)
case("multinomial_120_classes", "Multinomial", [("logits", big), ("num_samples", np.array(33, np.int32))],
     {"T": "float32", "output_dtype": "int64"}, {"seed": 123, "seed2": 0})
case("stateless_multinomial_120_classes", "StatelessMultinomial",
     [("logits", big), ("num_samples", np.array(33, np.int32)), ("seed", np.array([5, 6], np.int64))],
     {"T": "float32", "output_dtype": "int64", "Tseed": "int64"})
case("multinomial_zero_samples", "Multinomial", [("logits", big), ("num_samples", np.array(0, np.int32))],
     {"T": "float32", "output_dtype": "int64"}, {"seed": 4, "seed2": 4})
case("stateless_multinomial_one_class", "StatelessMultinomial",
     [("logits", np.zeros((3, 1), np.float64)), ("num_samples", np.array(6, np.int32)),
      ("seed", np.array([1, 2], np.int64))], {"T": "float64", "output_dtype": "int32", "Tseed": "int64"})

write("sampling_ops", cases)
