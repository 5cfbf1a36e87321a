"""Golden values for the candidate samplers of sampled losses: LogUniformCandidateSampler
(TensorFlow 2.21, eager raw ops, fixed seeds: unique and not, ranges small and large, one
and several true classes) and ComputeAccidentalHits; then (appended, with their own random
state) UniformCandidateSampler, LearnedUnigramCandidateSampler,
ThreadUnsafeUnigramCandidateSampler, FixedUnigramCandidateSampler (unigrams, distortion,
reserved ids, shards) and AllCandidateSampler. Every case has its own seeds: eager
TensorFlow reuses a kernel for equal attrs, and a sampler's state moves on with each run.
Run as the header of common.py says, with <family> = candidates."""
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

# The other samplers (their own random state, after the cases above).
rs2 = np.random.RandomState(43)
seed = 100
for op in ["UniformCandidateSampler", "LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler"]:
    for num_true, num_sampled, unique, range_max in [(1, 5, True, 20), (1, 8, False, 1000), (2, 16, True, 50000),
                                                     (3, 4, False, 7), (1, 16, True, 16), (2, 64, True, 300),
                                                     (1, 6, False, 1 << 40), (2, 3, True, 3)]:
        if op != "UniformCandidateSampler" and range_max >= (1 << 31) - 1:
            continue
        seed += 1
        truth = rs2.randint(0, range_max, (4, num_true)).astype(np.int64)
        case("%s_%d_%d_%d_%d" % (op, num_true, num_sampled, unique, range_max), op, [("true_classes", truth)], {},
             {"num_true": num_true, "num_sampled": num_sampled, "unique": unique, "range_max": range_max,
              "seed": seed, "seed2": 7 * seed})
for name, num_true, num_sampled, unique, unigrams, distortion, reserved, shards, shard in [
        ("plain", 1, 6, False, [1.0, 2.0, 3.0, 4.0, 10.0], 1.0, 0, 1, 0),
        ("unique", 2, 4, True, [5.0, 1.0, 0.5, 2.0, 7.0, 3.0], 1.0, 0, 1, 0),
        ("distortion", 1, 8, False, [1.0, 4.0, 9.0, 16.0, 0.25, 2.5, 100.0], 0.75, 0, 1, 0),
        ("reserved", 2, 5, True, [3.0, 1.0, 2.0, 6.0, 4.0], 1.0, 2, 1, 0),
        ("shard1of3", 1, 4, False, [float(k) for k in range(1, 13)], 0.5, 0, 3, 1),
        ("reserved_shard0of2", 1, 3, True, [2.0, 9.0, 4.0, 1.0, 8.0, 3.0], 1.0, 3, 2, 0),
        ("zeros_not_unique", 1, 10, False, [0.0, 1.0, 0.0, 3.0], 1.0, 0, 1, 0),
        ("many", 3, 40, True, list(rs2.gamma(0.5, 2.0, 200).round(3) + 0.001), 0.8, 0, 1, 0)]:
    seed += 1
    range_max = (len([i for i in range(reserved) if i % shards == shard]) +
                 len([k for k in range(len(unigrams))
                      if (len([i for i in range(reserved) if i % shards == shard]) + k) % shards == shard]))
    truth = rs2.randint(0, range_max, (3, num_true)).astype(np.int64)
    case("fixed_unigram_" + name, "FixedUnigramCandidateSampler", [("true_classes", truth)], {},
         {"num_true": num_true, "num_sampled": num_sampled, "unique": unique, "range_max": range_max,
          "vocab_file": "", "distortion": distortion, "num_reserved_ids": reserved, "num_shards": shards,
          "shard": shard, "unigrams": [float(u) for u in unigrams], "seed": seed, "seed2": 3 * seed})
for num_true, num_sampled, unique in [(1, 5, True), (2, 3, False)]:
    truth = rs2.randint(0, num_sampled, (2, num_true)).astype(np.int64)
    case("all_%d_%d_%d" % (num_true, num_sampled, unique), "AllCandidateSampler", [("true_classes", truth)], {},
         {"num_true": num_true, "num_sampled": num_sampled, "unique": unique, "seed": 0, "seed2": 0})
write("candidates", cases)
