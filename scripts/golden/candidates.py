"""Golden values for the candidate samplers of sampled losses: LogUniformCandidateSampler
(TensorFlow 2.21, eager raw ops, fixed seeds: unique and not, ranges small and large, one
and several true classes) and ComputeAccidentalHits. Run as the header of common.py says,
with <family> = candidates."""
import numpy as np
from common import case_list, write

rs = np.random.RandomState(41)
cases, case = case_list()
seed = 0
for num_true, num_sampled, unique, range_max in [(1, 5, True, 20), (1, 8, False, 1000), (2, 16, True, 50000),
                                                 (3, 4, False, 7), (1, 20, True, 20), (2, 64, True, 300)]:
    seed += 1
    truth = rs.randint(0, range_max, (4, num_true)).astype(np.int64)
    case("log_uniform_%d_%d_%d_%d" % (num_true, num_sampled, unique, range_max), "LogUniformCandidateSampler",
         [("true_classes", truth)], {},
         {"num_true": num_true, "num_sampled": num_sampled, "unique": unique, "range_max": range_max,
          "seed": seed, "seed2": 11 * seed})
truth = np.array([[1, 4], [2, 2], [7, 0]], np.int64)
sampled = np.array([4, 9, 2, 0, 4], np.int64)
case("accidental_hits", "ComputeAccidentalHits", [("true_classes", truth), ("sampled_candidates", sampled)], {},
     {"num_true": 2, "seed": 0, "seed2": 0})
case("accidental_hits_none", "ComputeAccidentalHits",
     [("true_classes", truth), ("sampled_candidates", np.array([5, 6], np.int64))], {},
     {"num_true": 2, "seed": 0, "seed2": 0})
write("candidates", cases)
