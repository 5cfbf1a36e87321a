"""Golden values for the image kernels from TensorFlow 2.21 (run once with the venv, see
common.py's header). Every case sets every attr the kernel reads."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from common import case_list, io_case, write  # noqa: E402

rng = np.random.RandomState(20251202)
cases, case = case_list(io_case)
raw = tf.raw_ops

F32 = {"rtol": 1e-5, "atol": 1e-5}
F64 = {"rtol": 1e-6, "atol": 1e-6}  # resize kernels compute in f32 even for f64 inputs
EXACT = {"rtol": 0, "atol": 0}
NAMES = {np.float32: "float32", np.float64: "float64", np.int32: "int32", np.uint8: "uint8",
         np.int64: "int64", np.int8: "int8", np.int16: "int16", np.uint16: "uint16"}


def data(shape, dtype=np.float32):
    if dtype in (np.float32, np.float64):
        return (np.round(rng.uniform(-1.0, 1.0, size=shape) * 64) / 64).astype(dtype)
    if dtype == np.uint8:
        return rng.randint(0, 256, size=shape).astype(dtype)
    return rng.randint(-100, 100, size=shape).astype(dtype)


def attrs_of(**kw):
    out = {}
    for k, v in kw.items():
        if isinstance(v, bool):
            out[k] = {"b": v}
        elif isinstance(v, int):
            out[k] = {"i": v}
        elif isinstance(v, float):
            out[k] = {"f": v}
        elif isinstance(v, str):
            out[k] = {"s": v}
        elif isinstance(v, type):
            out[k] = {"type": NAMES[v]}
        else:
            out[k] = v
    return out



MODES = [(False, False), (True, False), (False, True)]

# ---- Resize* forward -------------------------------------------------------------------
SHAPES = [((2, 4, 5, 3), (7, 9)), ((1, 6, 8, 1), (3, 5)), ((1, 3, 3, 2), (3, 3)), ((1, 1, 1, 2), (3, 2)),
          ((1, 5, 4, 4), (8, 2)), ((0, 3, 3, 1), (2, 2))]
for op in ("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea"):
    fn = getattr(raw, op)
    for (shape, size) in SHAPES:
        for ac, hp in MODES:
            if op == "ResizeArea" and hp:
                continue
            for dtype in (np.float32, np.float64, np.uint8, np.int32):
                if dtype not in (np.float32,) and shape[0] != 2 and shape != (1, 6, 8, 1):
                    continue
                x = data(shape, dtype)
                kw = {"align_corners": ac}
                if op != "ResizeArea":
                    kw["half_pixel_centers"] = hp
                out = fn(images=x, size=np.array(size, np.int32), **kw).numpy()
                tol = F32 if op != "ResizeNearestNeighbor" else EXACT
                case("%s_%s_%s_to_%s_ac%d_hp%d" % (op, NAMES[dtype], "x".join(map(str, shape)),
                                                   "x".join(map(str, size)), ac, hp),
                     op, attrs_of(T=dtype, **kw), [x, np.array(size, np.int32)], out, tol)

# ---- Resize gradients ------------------------------------------------------------------
GSHAPES = [((2, 4, 5, 3), (7, 9)), ((1, 6, 8, 1), (3, 5)), ((1, 1, 1, 2), (3, 2)), ((1, 5, 4, 2), (8, 2))]
for op, grad_op, dtypes in (("ResizeBilinear", "ResizeBilinearGrad", (np.float32, np.float64)),
                            ("ResizeBicubic", "ResizeBicubicGrad", (np.float32, np.float64))):
    for (shape, size) in GSHAPES:
        for ac, hp in MODES:
            for dtype in dtypes:
                orig = data(shape, dtype)
                g = data((shape[0], size[0], size[1], shape[3]), np.float32)
                out = getattr(raw, grad_op)(grads=g, original_image=orig, align_corners=ac,
                                            half_pixel_centers=hp).numpy()
                case("%s_%s_%s_from_%s_ac%d_hp%d" % (grad_op, NAMES[dtype], "x".join(map(str, shape)),
                                                     "x".join(map(str, size)), ac, hp),
                     grad_op, attrs_of(T=dtype, align_corners=ac, half_pixel_centers=hp), [g, orig], out,
                     F32 if dtype == np.float32 else F64)
for (shape, size) in GSHAPES:
    for ac, hp in MODES:
        for dtype in (np.float32, np.float64, np.int32):
            g = data((shape[0], size[0], size[1], shape[3]), dtype)
            osize = np.array(shape[1:3], np.int32)
            out = raw.ResizeNearestNeighborGrad(grads=g, size=osize, align_corners=ac,
                                                half_pixel_centers=hp).numpy()
            case("ResizeNearestNeighborGrad_%s_%s_from_%s_ac%d_hp%d" % (
                NAMES[dtype], "x".join(map(str, shape)), "x".join(map(str, size)), ac, hp),
                "ResizeNearestNeighborGrad", attrs_of(T=dtype, align_corners=ac, half_pixel_centers=hp),
                [g, osize], out, F32 if dtype != np.int32 else EXACT)


# ---- CropAndResize and its gradients -----------------------------------------------------
BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0], [0.7, 0.6, 0.2, 0.1], [-0.3, 0.25, 1.2, 0.75],
                  [0.5, 0.5, 0.5, 0.5]], np.float32)
BOX_IND = np.array([0, 1, 1, 0, 1], np.int32)
for crop in ((3, 4), (1, 1), (5, 2)):
    for method in ("bilinear", "nearest"):
        for dtype in (np.float32, np.float64, np.uint8, np.int32):
            if dtype != np.float32 and crop != (3, 4):
                continue
            img = data((2, 6, 5, 3), dtype)
            cs = np.array(crop, np.int32)
            out = raw.CropAndResize(image=img, boxes=BOXES, box_ind=BOX_IND, crop_size=cs, method=method,
                                    extrapolation_value=-0.5).numpy()
            case("CropAndResize_%s_%s_%dx%d" % (NAMES[dtype], method, crop[0], crop[1]), "CropAndResize",
                 attrs_of(T=dtype, method=method, extrapolation_value=-0.5), [img, BOXES, BOX_IND, cs], out, F32)
            if dtype not in (np.float32, np.float64):
                continue
            g = data((5, crop[0], crop[1], 3), np.float32)
            isz = np.array([2, 6, 5, 3], np.int32)
            gi = raw.CropAndResizeGradImage(grads=g, boxes=BOXES, box_ind=BOX_IND, image_size=isz, T=dtype,
                                            method=method).numpy()
            case("CropAndResizeGradImage_%s_%s_%dx%d" % (NAMES[dtype], method, crop[0], crop[1]),
                 "CropAndResizeGradImage", attrs_of(T=dtype, method=method), [g, BOXES, BOX_IND, isz], gi, F32)
            if method == "bilinear":
                gb = raw.CropAndResizeGradBoxes(grads=g, image=img, boxes=BOXES, box_ind=BOX_IND,
                                                method=method).numpy()
                case("CropAndResizeGradBoxes_%s_%dx%d" % (NAMES[dtype], crop[0], crop[1]), "CropAndResizeGradBoxes",
                     attrs_of(T=dtype, method=method), [g, img, BOXES, BOX_IND], gb, {"rtol": 1e-4, "atol": 1e-4})
img = data((1, 4, 4, 2))
e_boxes, e_ind = np.zeros((0, 4), np.float32), np.zeros((0,), np.int32)
case("CropAndResize_no_boxes", "CropAndResize", attrs_of(T=np.float32, method="bilinear", extrapolation_value=0.0),
     [img, e_boxes, e_ind, np.array([2, 2], np.int32)],
     raw.CropAndResize(image=img, boxes=e_boxes, box_ind=e_ind, crop_size=[2, 2]).numpy(), F32)


# ---- Colour ------------------------------------------------------------------------------
rgb = rng.uniform(0.0, 1.0, size=(2, 3, 4, 3)).astype(np.float32)
rgb[0, 0, 0] = [0.5, 0.5, 0.5]   # grey: hue 0
rgb[0, 0, 1] = [0.0, 0.0, 0.0]   # black
rgb[0, 0, 2] = [1.0, 0.2, 0.2]   # r max
rgb[0, 0, 3] = [0.2, 1.0, 0.2]   # g max
rgb[0, 1, 0] = [0.2, 0.2, 1.0]   # b max
rgb[0, 1, 1] = [1.0, 0.0, 0.5]   # negative raw hue
for dtype in (np.float32, np.float64):
    x = rgb.astype(dtype)
    # tf.constant: raw ops fed NumPy arrays of a new dtype may reuse the first call's T.
    hsv = raw.RGBToHSV(images=tf.constant(x)).numpy()
    assert hsv.dtype == dtype, hsv.dtype
    case("RGBToHSV_%s" % NAMES[dtype], "RGBToHSV", attrs_of(T=dtype), [x], hsv,
         F32 if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12})
    back = raw.HSVToRGB(images=tf.constant(hsv)).numpy()
    assert back.dtype == dtype, back.dtype
    case("HSVToRGB_%s" % NAMES[dtype], "HSVToRGB", attrs_of(T=dtype), [hsv], back,
         F32 if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12})
e = np.zeros((0, 3), np.float32)
case("RGBToHSV_empty", "RGBToHSV", attrs_of(T=np.float32), [e], raw.RGBToHSV(images=e).numpy(), F32)
for delta in (0.0, 0.25, -0.4, 0.9, 1.5):
    d = np.float32(delta)
    case("AdjustHue_%g" % delta, "AdjustHue", attrs_of(T=np.float32), [rgb, d],
         raw.AdjustHue(images=rgb, delta=d).numpy(), F32)
for scale in (0.0, 0.5, 1.0, 2.5):
    sc = np.float32(scale)
    case("AdjustSaturation_%g" % scale, "AdjustSaturation", attrs_of(T=np.float32), [rgb, sc],
         raw.AdjustSaturation(images=rgb, scale=sc).numpy(), F32)
for shape in ((2, 3, 4, 3), (4, 5, 1), (1, 2, 2, 2, 5)):
    x = data(shape)
    for f in (0.0, 0.5, 1.7, -1.0):
        fv = np.float32(f)
        case("AdjustContrastv2_%s_%g" % ("x".join(map(str, shape)), f), "AdjustContrastv2", attrs_of(T=np.float32),
             [x, fv], raw.AdjustContrastv2(images=x, contrast_factor=fv).numpy(), F32)

# ---- NonMaxSuppression ---------------------------------------------------------------------
nb = 12
centers = rng.uniform(0.0, 1.0, size=(nb, 2)).astype(np.float32)
sizes = rng.uniform(0.1, 0.4, size=(nb, 2)).astype(np.float32)
nboxes = np.concatenate([centers - sizes / 2, centers + sizes / 2], axis=1).astype(np.float32)
nboxes[3] = nboxes[3][[2, 3, 0, 1]]   # flipped corners
nboxes[5] = nboxes[4] + 0.01          # heavy overlap
nboxes[7] = [0.2, 0.2, 0.2, 0.6]      # empty box
nscores = rng.uniform(0.0, 1.0, size=(nb,)).astype(np.float32)
nscores[9] = nscores[2]               # tie
for max_out, iou_t, score_t in ((5, 0.5, 0.0), (20, 0.3, 0.2), (3, 1.0, -1.0), (0, 0.5, 0.0), (10, 0.0, 0.1)):
    args = [nboxes, nscores, np.int32(max_out), np.float32(iou_t), np.float32(score_t)]
    out = raw.NonMaxSuppressionV3(boxes=nboxes, scores=nscores, max_output_size=max_out, iou_threshold=iou_t,
                                  score_threshold=score_t).numpy()
    tag = "%d_%g_%g" % (max_out, iou_t, score_t)
    case("NonMaxSuppressionV3_" + tag, "NonMaxSuppressionV3", attrs_of(T=np.float32, T_threshold=np.float32),
         args, out, EXACT)
    for pad in (False, True):
        o = raw.NonMaxSuppressionV4(boxes=nboxes, scores=nscores, max_output_size=max_out, iou_threshold=iou_t,
                                    score_threshold=score_t, pad_to_max_output_size=pad)
        case("NonMaxSuppressionV4_%s_pad%d" % (tag, pad), "NonMaxSuppressionV4",
             attrs_of(T=np.float32, T_threshold=np.float32, pad_to_max_output_size=pad), args,
             [o[0].numpy(), o[1].numpy()], EXACT)
        for sigma in (0.0, 0.5):
            o = raw.NonMaxSuppressionV5(boxes=nboxes, scores=nscores, max_output_size=max_out, iou_threshold=iou_t,
                                        score_threshold=score_t, soft_nms_sigma=np.float32(sigma),
                                        pad_to_max_output_size=pad)
            case("NonMaxSuppressionV5_%s_sigma%g_pad%d" % (tag, sigma, pad), "NonMaxSuppressionV5",
                 attrs_of(T=np.float32, pad_to_max_output_size=pad), args + [np.float32(sigma)],
                 [o[0].numpy(), o[1].numpy(), o[2].numpy()], {"rtol": 1e-6, "atol": 1e-7})
eb, es = np.zeros((0, 4), np.float32), np.zeros((0,), np.float32)
case("NonMaxSuppressionV3_empty", "NonMaxSuppressionV3", attrs_of(T=np.float32, T_threshold=np.float32),
     [eb, es, np.int32(4), np.float32(0.5), np.float32(0.0)],
     raw.NonMaxSuppressionV3(boxes=eb, scores=es, max_output_size=4, iou_threshold=0.5,
                             score_threshold=0.0).numpy(), EXACT)


# ---- ImageProjectiveTransformV2 / V3 ---------------------------------------------------------
TRANSFORMS = {
    "shift": np.array([[1, 0, -1.5, 0, 1, 2.25, 0, 0]], np.float32),
    "rotate": np.array([[0.8, -0.6, 1.2, 0.6, 0.8, -0.9, 0, 0]], np.float32),
    "zoom_persp": np.array([[1.7, 0.1, -2.0, -0.2, 0.6, 0.5, 0.02, -0.03]], np.float32),
    "per_image": np.array([[1, 0, 3.5, 0, 1, -4.0, 0, 0], [-1, 0, 4, 0, -1, 5, 0, 0]], np.float32),
}
for tname, tr in TRANSFORMS.items():
    for interp in ("NEAREST", "BILINEAR"):
        for mode in ("REFLECT", "WRAP", "CONSTANT", "NEAREST"):
            for dtype in (np.float32, np.float64, np.uint8, np.int32):
                if dtype != np.float32 and tname not in ("rotate",):
                    continue
                img = data((2, 5, 6, 2), dtype)
                osz = np.array([6, 7], np.int32)
                fill = np.float32(3.0)
                out = raw.ImageProjectiveTransformV3(images=img, transforms=tr, output_shape=osz, fill_value=fill,
                                                     interpolation=interp, fill_mode=mode).numpy()
                case("ImageProjectiveTransformV3_%s_%s_%s_%s" % (tname, interp, mode, NAMES[dtype]),
                     "ImageProjectiveTransformV3", attrs_of(dtype=dtype, interpolation=interp, fill_mode=mode),
                     [img, tr, osz, fill], out, F32 if dtype != np.uint8 and dtype != np.int32 else EXACT)
                if dtype == np.float32 and interp == "BILINEAR":
                    out2 = raw.ImageProjectiveTransformV2(images=img, transforms=tr, output_shape=osz,
                                                          interpolation=interp, fill_mode=mode).numpy()
                    case("ImageProjectiveTransformV2_%s_%s" % (tname, mode), "ImageProjectiveTransformV2",
                         attrs_of(dtype=dtype, interpolation=interp, fill_mode=mode), [img, tr, osz], out2, F32)
img = data((1, 1, 4, 1))
tr = TRANSFORMS["shift"]
for mode in ("REFLECT", "WRAP"):
    out = raw.ImageProjectiveTransformV3(images=img, transforms=tr, output_shape=[3, 5], fill_value=0.0,
                                         interpolation="BILINEAR", fill_mode=mode).numpy()
    case("ImageProjectiveTransformV3_height1_%s" % mode, "ImageProjectiveTransformV3",
         attrs_of(dtype=np.float32, interpolation="BILINEAR", fill_mode=mode),
         [img, tr, np.array([3, 5], np.int32), np.float32(0.0)], out, F32)


# ---- ExtractImagePatches -----------------------------------------------------------------------
for (shape, k, st, rt, pad) in [((2, 5, 6, 2), 3, 1, 1, "SAME"), ((2, 5, 6, 2), 2, 2, 1, "VALID"),
                                ((1, 7, 7, 1), 3, 2, 2, "SAME"), ((1, 7, 8, 3), 2, 3, 2, "VALID"),
                                ((1, 3, 3, 1), 3, 1, 1, "VALID"), ((1, 4, 4, 2), (1, 3), (2, 1), (1, 2), "SAME")]:
    kk = k if isinstance(k, tuple) else (k, k)
    ss = st if isinstance(st, tuple) else (st, st)
    rr = rt if isinstance(rt, tuple) else (rt, rt)
    for dtype in (np.float32, np.float64, np.int32, np.uint8):
        if dtype != np.float32 and shape != (2, 5, 6, 2):
            continue
        x = data(shape, dtype)
        ks, sts, rts = [1, kk[0], kk[1], 1], [1, ss[0], ss[1], 1], [1, rr[0], rr[1], 1]
        out = raw.ExtractImagePatches(images=x, ksizes=ks, strides=sts, rates=rts, padding=pad).numpy()
        case("ExtractImagePatches_%s_%s_k%s_s%s_r%s_%s" % (NAMES[dtype], "x".join(map(str, shape)), kk, ss, rr, pad),
             "ExtractImagePatches", {"T": {"type": NAMES[dtype]}, "ksizes": {"list_i": ks}, "strides": {"list_i": sts},
                                     "rates": {"list_i": rts}, "padding": {"s": pad}}, [x], out, EXACT)


# ---- DrawBoundingBoxesV2 -----------------------------------------------------------------------
dimg = data((2, 7, 8, 3))
dboxes = np.array([[[0.1, 0.2, 0.6, 0.9], [0.5, -0.3, 1.4, 0.5], [0.8, 0.8, 0.2, 0.9]],
                   [[-0.5, -0.5, 1.5, 1.5], [0.3, 0.3, 0.3, 0.3], [1.2, 0.0, 1.5, 1.0]]], np.float32)
for colors in (np.zeros((0, 4), np.float32), np.array([[0.25, 0.5, 0.75], [1.0, 0.0, -1.0]], np.float32)):
    out = raw.DrawBoundingBoxesV2(images=dimg, boxes=dboxes, colors=colors).numpy()
    case("DrawBoundingBoxesV2_colors%d" % len(colors), "DrawBoundingBoxesV2", attrs_of(T=np.float32),
         [dimg, dboxes, colors], out, EXACT)
gimg = data((1, 5, 5, 1))
gb = dboxes[:1]
out = raw.DrawBoundingBoxesV2(images=gimg, boxes=gb, colors=np.zeros((0, 4), np.float32)).numpy()
case("DrawBoundingBoxesV2_gray", "DrawBoundingBoxesV2", attrs_of(T=np.float32),
     [gimg, gb, np.zeros((0, 4), np.float32)], out, EXACT)


# ---- ScaleAndTranslate and its gradient ----------------------------------------------------------
for kernel in ("lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle", "keyscubic", "mitchellcubic"):
    for (shape, size, scale, trans) in [((2, 6, 5, 2), (4, 9), (0.7, 1.8), (0.3, -0.5)),
                                        ((1, 4, 7, 1), (8, 3), (2.0, 0.45), (0.0, 0.0))]:
        for aa in (True, False):
            x = data(shape)
            sc, tr = np.array(scale, np.float32), np.array(trans, np.float32)
            out = raw.ScaleAndTranslate(images=x, size=size, scale=sc, translation=tr, kernel_type=kernel,
                                        antialias=aa).numpy()
            tag = "%s_%s_aa%d" % (kernel, "x".join(map(str, shape)), aa)
            case("ScaleAndTranslate_" + tag, "ScaleAndTranslate", attrs_of(T=np.float32, kernel_type=kernel, antialias=aa),
                 [x, np.array(size, np.int32), sc, tr], out, F32)
            g = data((shape[0], size[0], size[1], shape[3]))
            gout = raw.ScaleAndTranslateGrad(grads=g, original_image=x, scale=sc, translation=tr, kernel_type=kernel,
                                             antialias=aa).numpy()
            case("ScaleAndTranslateGrad_" + tag, "ScaleAndTranslateGrad",
                 attrs_of(T=np.float32, kernel_type=kernel, antialias=aa), [g, x, sc, tr], gout, F32)
x = data((1, 5, 5, 3), np.uint8)
out = raw.ScaleAndTranslate(images=x, size=[3, 3], scale=[0.6, 0.6], translation=[0.0, 0.0]).numpy()
case("ScaleAndTranslate_uint8", "ScaleAndTranslate", attrs_of(T=np.uint8, kernel_type="lanczos3", antialias=True),
     [x, np.array([3, 3], np.int32), np.array([0.6, 0.6], np.float32), np.array([0, 0], np.float32)], out,
     {"rtol": 1e-5, "atol": 1e-3})

if __name__ == "__main__" or True:
    write("image", cases)
