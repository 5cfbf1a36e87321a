"""Golden values for the image ops of object-detection and ImageNet input pipelines
(TensorFlow 2.21, eager raw ops): the bounding-box samplers SampleDistortedBoundingBox, ...V2
and StatelessSampleDistortedBoundingBox (exact draws: fixed seeds, one run per kernel, every
integer type, aspect and area ranges, coverage, attempts, boxes or the whole image),
CombinedNonMaxSuppression (ties within and across classes, q = 1 and per-class boxes, padding,
clipping, thresholds), Dilation2D and its two backprops (float32 and float64, SAME and VALID,
strides, rates, windows outside the image, tied maxima) and ExtractGlimpse / ExtractGlimpseV2
with zero noise. Every value is compared exactly. Run as the header of common.py says, with
<family> = image_detect; it also prints the error class TensorFlow gives each bad input."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import case_list, print_error_classes, write  # noqa: E402

R = tf.raw_ops
rs = np.random.RandomState(20260611)
cases, case = case_list()
EXACT = {"rtol": 0.0, "atol": 0.0}

# ---------------------------------------------------------------- bounding-box samplers
NP = {"uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64}


def boxes_of(n, batch=1):
    """`n` random valid boxes (corners ordered), shaped [batch, n / batch, 4]."""
    y = np.sort(rs.uniform(0, 1, (n, 2)), axis=1)
    x = np.sort(rs.uniform(0, 1, (n, 2)), axis=1)
    b = np.stack([y[:, 0], x[:, 0], y[:, 1], x[:, 1]], axis=1).astype(np.float32)
    return b.reshape(batch, n // batch, 4)


SAMPLER = [
    # (T, image size, boxes, min covered, aspect range, area range, attempts, use image)
    ("int32", [480, 640, 3], boxes_of(1), 0.1, [0.75, 1.33], [0.05, 1.0], 100, False),
    ("int64", [224, 224, 3], boxes_of(3), 0.5, [0.75, 1.33], [0.08, 1.0], 100, False),
    ("uint8", [200, 150, 3], boxes_of(4, 2), 0.3, [0.5, 2.0], [0.1, 0.9], 20, False),
    ("int16", [1000, 37, 1], boxes_of(2), 0.0, [3.0, 4.0], [0.05, 1.0], 50, False),
    ("int8", [100, 120, 3], np.zeros((1, 0, 4), np.float32), 0.1, [0.75, 1.33], [0.05, 1.0], 100, True),
    ("int32", [333, 517, 3], np.zeros((2, 0, 4), np.float32), 0.9, [1.0, 1.0], [0.5, 0.5], 10, True),
    ("int32", [64, 64, 3], boxes_of(1), 1.0, [0.75, 1.33], [0.01, 0.02], 1, False),  # falls back to the image
    ("int64", [31, 1, 3], boxes_of(2), 0.1, [0.1, 10.0], [0.05, 1.0], 100, False),
    ("int32", [7, 9, 3], np.array([[[0.0, 0.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5]]], np.float32), 0.7, [0.2, 5.0],
     [0.3, 1.0], 100, False),
    ("int32", [640, 480, 3], boxes_of(6, 3), 0.05, [0.9, 1.1], [0.95, 1.0], 100, False),
]
# Random settings, to reach the rounding corners of the crop arithmetic.
for k in range(24):
    lo_ar = float(np.float32(rs.uniform(0.2, 2.0)))
    lo_area = float(np.float32(rs.uniform(0.01, 0.8)))
    SAMPLER.append(("int32", [int(rs.randint(1, 900)), int(rs.randint(1, 900)), 3], boxes_of(int(rs.randint(1, 4))),
                    float(np.float32(rs.choice([0.0, 0.1, 0.3, 0.6]))),
                    [lo_ar, float(np.float32(lo_ar * rs.uniform(1.0, 3.0)))],
                    [lo_area, float(np.float32(min(1.0, lo_area * rs.uniform(1.0, 4.0))))],
                    int(rs.choice([1, 5, 100])), False))

seed = 100
for i, (t, size, boxes, cover, aspect, area, attempts, use_image) in enumerate(SAMPLER):
    common = {"aspect_ratio_range": aspect, "area_range": area, "max_attempts": attempts,
              "use_image_if_no_bounding_boxes": use_image}
    image_size = np.array(size, NP[t])
    seed += 1
    case("sample_v1_%d" % i, "SampleDistortedBoundingBox", [("image_size", image_size), ("bounding_boxes", boxes)],
         {"T": t}, dict(common, seed=seed, seed2=3 * seed, min_object_covered=cover), **EXACT)
    seed += 1
    case("sample_v2_%d" % i, "SampleDistortedBoundingBoxV2",
         [("image_size", image_size), ("bounding_boxes", boxes), ("min_object_covered", np.float32(cover))],
         {"T": t}, dict(common, seed=seed, seed2=-7 * seed), **EXACT)
    st = "int64" if i % 2 else "int32"
    case("sample_stateless_%d" % i, "StatelessSampleDistortedBoundingBox",
         [("image_size", image_size), ("bounding_boxes", boxes), ("min_object_covered", np.float32(cover)),
          ("seed", np.array([i * 1000 + 17, -i - 3], NP[st]))], {"T": t, "Tseed": st}, common, **EXACT)

# ---------------------------------------------------------------- combined NMS


def nms_case(name, boxes, scores, per_class, total, iou, score_t, pad, clip):
    case(name, "CombinedNonMaxSuppression",
         [("boxes", boxes.astype(np.float32)), ("scores", scores.astype(np.float32)),
          ("max_output_size_per_class", np.int32(per_class)), ("max_total_size", np.int32(total)),
          ("iou_threshold", np.float32(iou)), ("score_threshold", np.float32(score_t))],
         {}, {"pad_per_class": pad, "clip_boxes": clip}, **EXACT)


def random_boxes(batch, n, q, spread=1.0):
    c = rs.uniform(-0.1 * spread, 1.1 * spread, (batch, n, q, 2))
    hw = rs.uniform(0.05, 0.5, (batch, n, q, 2))
    return np.concatenate([c - hw / 2, c + hw / 2], axis=-1)[..., [0, 1, 2, 3]]


# Hand-made: two classes sharing boxes, equal scores within and across classes.
hb = np.array([[[[0, 0, 1, 1]], [[0, 0.1, 1, 1.1]], [[0, -0.1, 1, 0.9]], [[0, 10, 1, 11]], [[0, 10.1, 1, 11.1]],
                [[0, 100, 1, 101]]]], np.float32)
hs = np.array([[[0.9, 0.75], [0.75, 0.9], [0.6, 0.75], [0.95, 0.5], [0.5, 0.95], [0.3, 0.75]]], np.float32)
for pad in (False, True):
    for clip in (True, False):
        nms_case("nms_hand_pad%d_clip%d" % (pad, clip), hb, hs, 3, 7, 0.5, 0.0, pad, clip)
nms_case("nms_hand_total2", hb, hs, 4, 2, 0.5, 0.4, False, True)
nms_case("nms_hand_pad_small", hb, hs, 1, 10, 0.5, 0.0, True, True)
nms_case("nms_hand_high_threshold", hb, hs, 10, 12, 0.5, 0.8, True, False)
# All scores tied: the heap's and the sort's orders decide everything.
tb = random_boxes(2, 24, 1)
nms_case("nms_all_tied", tb, np.full((2, 24, 3), 0.5), 10, 40, 0.6, 0.1, False, True)
nms_case("nms_all_tied_pad", tb, np.full((2, 24, 3), 0.5), 6, 40, 0.6, 0.1, True, False)
# Quantized scores (many ties), q = 1 and per-class boxes, more than 16 results to sort.
for i, (batch, n, classes, q, per_class, total, iou, st, pad, clip) in enumerate([
        (2, 30, 4, 1, 8, 20, 0.5, 0.05, False, True), (1, 40, 3, 3, 12, 30, 0.4, 0.0, True, True),
        (3, 17, 5, 5, 3, 100, 0.7, 0.2, False, False), (2, 50, 2, 1, 50, 64, 0.3, 0.1, True, False),
        (1, 8, 6, 1, 20, 5, 0.9, -1.0, False, True), (2, 25, 4, 4, 6, 9, 0.5, 0.35, True, True)]):
    b = random_boxes(batch, n, q, spread=1.0 + 0.3 * (i % 2))
    s = np.round(rs.uniform(0, 1, (batch, n, classes)) * 10) / 10
    nms_case("nms_quantized_%d" % i, b, s, per_class, total, iou, st, pad, clip)
# Distinct scores.
b = random_boxes(2, 20, 1)
nms_case("nms_distinct", b, rs.uniform(0, 1, (2, 20, 3)), 5, 12, 0.45, 0.2, False, True)
nms_case("nms_no_boxes", np.zeros((2, 0, 1, 4)), np.zeros((2, 0, 3)), 5, 4, 0.5, 0.0, False, True)

# ---------------------------------------------------------------- dilation


def dilation_cases(tag, x, f, strides, rates, padding, dt):
    x, f = x.astype(dt), f.astype(dt)
    attrs = {"strides": [1, strides[0], strides[1], 1], "rates": [1, rates[0], rates[1], 1], "padding": padding}
    out = R.Dilation2D(input=x, filter=f, **attrs).numpy()
    t = str(np.dtype(dt))
    case("dilation_" + tag, "Dilation2D", [("input", x), ("filter", f)], {"T": t}, attrs, **EXACT)
    dy = rs.uniform(-1, 1, out.shape).astype(dt)
    case("dilation_input_" + tag, "Dilation2DBackpropInput", [("input", x), ("filter", f), ("out_backprop", dy)],
         {"T": t}, attrs, **EXACT)
    case("dilation_filter_" + tag, "Dilation2DBackpropFilter", [("input", x), ("filter", f), ("out_backprop", dy)],
         {"T": t}, attrs, **EXACT)


for dt in (np.float32, np.float64):
    for i, (xs, fs, strides, rates, padding) in enumerate([
            ((2, 7, 8, 3), (3, 2, 3), (1, 1), (1, 1), "SAME"), ((2, 7, 8, 3), (3, 2, 3), (1, 1), (1, 1), "VALID"),
            ((1, 9, 10, 2), (2, 3, 2), (2, 2), (1, 1), "SAME"), ((1, 9, 10, 2), (2, 3, 2), (2, 3), (2, 1), "VALID"),
            ((2, 6, 5, 1), (3, 3, 1), (1, 2), (2, 2), "SAME"), ((1, 11, 9, 2), (2, 2, 2), (3, 2), (3, 4), "SAME"),
            ((1, 2, 3, 2), (2, 2, 2), (1, 1), (3, 3), "SAME")]):  # windows with no pixel inside the image
        x = rs.uniform(-2, 2, xs)
        f = rs.uniform(-1, 1, fs)
        dilation_cases("%s_%d_%s" % (np.dtype(dt).name, i, padding), x, f, strides, rates, padding, dt)
# Tied maxima (small integers): the first maximum takes the gradient.
dilation_cases("ties_f32", rs.randint(0, 3, (1, 6, 6, 2)), rs.randint(0, 2, (3, 3, 2)), (1, 1), (1, 1), "SAME",
               np.float32)
dilation_cases("int32_valid", rs.randint(-50, 50, (2, 5, 6, 2)), rs.randint(-9, 9, (2, 3, 2)), (1, 2), (2, 1),
               "VALID", np.int32)

# ---------------------------------------------------------------- glimpses
gx = rs.uniform(-1, 1, (3, 9, 11, 2)).astype(np.float32)
for i, (op, size, offsets, centered, normalized) in enumerate([
        ("ExtractGlimpseV2", [4, 5], [[0.0, 0.0], [0.3, -0.4], [-0.9, 0.95]], True, True),
        ("ExtractGlimpseV2", [4, 5], [[0.1, 0.2], [0.5, 0.5], [0.99, 0.01]], False, True),
        ("ExtractGlimpseV2", [3, 3], [[1.0, 2.0], [-2.5, 7.6], [8.0, 10.0]], False, False),
        ("ExtractGlimpseV2", [6, 4], [[0.0, 0.0], [-3.0, 2.0], [4.0, -5.5]], True, False),
        ("ExtractGlimpseV2", [12, 14], [[0.0, 0.0], [0.1, -0.1], [-0.5, 0.5]], True, True),
        ("ExtractGlimpseV2", [2, 2], [[20.0, 3.0], [-20.0, 3.0], [3.0, 30.0]], False, False),
        ("ExtractGlimpse", [4, 5], [[0.0, 0.0], [0.3, -0.4], [-0.9, 0.95]], True, True),
        ("ExtractGlimpse", [3, 3], [[1.0, 2.0], [-2.5, 7.6], [8.0, 10.0]], False, False),
        ("ExtractGlimpse", [5, 2], [[0.5, 0.5], [0.2, 0.9], [0.0, 1.0]], False, True),
        ("ExtractGlimpse", [6, 4], [[0.0, 0.0], [-3.0, 2.0], [4.0, -5.5]], True, False)]):
    attrs = {"centered": centered, "normalized": normalized, "uniform_noise": False, "noise": "zero"}
    case("glimpse_%s_%d" % (op, i), op, [("input", gx), ("size", np.array(size, np.int32)),
                                         ("offsets", np.array(offsets, np.float32))], {}, attrs, **EXACT)
# Fully inside the image: no noise at all, whatever its kind.
case("glimpse_inside_uniform", "ExtractGlimpseV2",
     [("input", gx), ("size", np.array([3, 4], np.int32)), ("offsets", np.zeros((3, 2), np.float32))], {},
     {"centered": True, "normalized": True, "uniform_noise": True, "noise": "uniform"}, **EXACT)

write("image_detect", cases)

img = np.array([10, 10, 3], np.int32)
box = np.full((1, 1, 4), 0.5, np.float32)
print_error_classes([
    ("sampler no boxes", lambda: R.SampleDistortedBoundingBoxV2(
        image_size=img, bounding_boxes=np.zeros((1, 0, 4), np.float32), min_object_covered=0.1)),
    ("sampler box > 1", lambda: R.SampleDistortedBoundingBoxV2(
        image_size=img, bounding_boxes=np.full((1, 1, 4), 1.5, np.float32), min_object_covered=0.1)),
    ("sampler area > 1", lambda: R.SampleDistortedBoundingBoxV2(
        image_size=img, bounding_boxes=box, min_object_covered=0.1, area_range=[0.5, 1.3])),
    ("sampler aspect 0", lambda: R.SampleDistortedBoundingBox(
        image_size=img, bounding_boxes=box, aspect_ratio_range=[0.0, 1.0])),
    ("sampler attempts 0", lambda: R.SampleDistortedBoundingBox(image_size=img, bounding_boxes=box, max_attempts=0)),
    ("sampler covered < 0", lambda: R.SampleDistortedBoundingBoxV2(
        image_size=img, bounding_boxes=box, min_object_covered=-0.5)),
    ("sampler image_size [2]", lambda: R.SampleDistortedBoundingBoxV2(
        image_size=np.array([10, 10], np.int32), bounding_boxes=box, min_object_covered=0.1)),
    ("sampler negative height", lambda: R.SampleDistortedBoundingBoxV2(
        image_size=np.array([-1, 10, 3], np.int32), bounding_boxes=box, min_object_covered=0.1)),
    ("sampler boxes rank 2", lambda: R.SampleDistortedBoundingBoxV2(
        image_size=img, bounding_boxes=np.full((1, 4), 0.5, np.float32), min_object_covered=0.1)),
    ("stateless seed [3]", lambda: R.StatelessSampleDistortedBoundingBox(
        image_size=img, bounding_boxes=box, min_object_covered=0.1, seed=np.array([1, 2, 3]))),
    ("nms q 2 of 3", lambda: R.CombinedNonMaxSuppression(
        boxes=np.zeros((1, 2, 2, 4), np.float32), scores=np.zeros((1, 2, 3), np.float32), max_output_size_per_class=2,
        max_total_size=2, iou_threshold=0.5, score_threshold=0.0)),
    ("nms per class 0", lambda: R.CombinedNonMaxSuppression(
        boxes=np.zeros((1, 2, 1, 4), np.float32), scores=np.zeros((1, 2, 3), np.float32), max_output_size_per_class=0,
        max_total_size=2, iou_threshold=0.5, score_threshold=0.0)),
    ("nms iou 1.5", lambda: R.CombinedNonMaxSuppression(
        boxes=np.zeros((1, 2, 1, 4), np.float32), scores=np.zeros((1, 2, 3), np.float32), max_output_size_per_class=2,
        max_total_size=2, iou_threshold=1.5, score_threshold=0.0)),
    ("dilation negative size", lambda: R.Dilation2D(
        input=np.zeros((1, 5, 6, 2), np.float32), filter=np.zeros((7, 2, 2), np.float32), strides=[1, 1, 1, 1],
        rates=[1, 1, 1, 1], padding="VALID")),
    ("dilation depth stride", lambda: R.Dilation2D(
        input=np.zeros((1, 5, 6, 2), np.float32), filter=np.zeros((2, 2, 2), np.float32), strides=[1, 1, 1, 2],
        rates=[1, 1, 1, 1], padding="VALID")),
    ("dilation depths differ", lambda: R.Dilation2D(
        input=np.zeros((1, 5, 6, 2), np.float32), filter=np.zeros((2, 2, 3), np.float32), strides=[1, 1, 1, 1],
        rates=[1, 1, 1, 1], padding="VALID")),
    ("dilation backprop size", lambda: R.Dilation2DBackpropInput(
        input=np.zeros((1, 5, 6, 2), np.float32), filter=np.zeros((2, 2, 2), np.float32),
        out_backprop=np.zeros((1, 5, 6, 2), np.float32), strides=[1, 1, 1, 1], rates=[1, 1, 1, 1], padding="VALID")),
    ("glimpse negative size", lambda: R.ExtractGlimpseV2(
        input=gx, size=[-1, 2], offsets=np.zeros((3, 2), np.float32), noise="zero", uniform_noise=False)),
    ("glimpse noise and uniform", lambda: R.ExtractGlimpseV2(
        input=gx, size=[2, 2], offsets=np.zeros((3, 2), np.float32), noise="zero", uniform_noise=True)),
    ("glimpse offsets batch", lambda: R.ExtractGlimpseV2(
        input=gx, size=[2, 2], offsets=np.zeros((2, 2), np.float32), noise="zero", uniform_noise=False)),
])
