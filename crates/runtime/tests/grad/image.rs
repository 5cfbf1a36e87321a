//! Numeric checks of the image gradients: ResizeBilinear, ResizeNearestNeighbor and
//! ResizeBicubic (every align_corners / half_pixel_centers mode, up- and downsampling,
//! float and double images), ScaleAndTranslate, CropAndResize (image and boxes) and
//! AdjustContrastv2 (images and factor). The resizes compute in
//! f32, so the checks use the f32 step and tolerance.

use crate::util::*;
use ferroflow_core::Tensor;
use ferroflow_graph::{ops, Output, Scope};

const MODES: [(bool, bool); 3] = [(false, false), (true, false), (false, true)];

/// (input shape, output size) cases: upsampling, downsampling, mixed, a 1×1 image.
const SIZES: [([usize; 4], [usize; 2]); 4] =
    [([2, 3, 4, 2], [5, 7]), ([1, 6, 5, 1], [3, 2]), ([1, 4, 3, 3], [2, 6]), ([1, 1, 1, 2], [2, 3])];

type Resize = fn(&Scope, Output, Output, bool, bool) -> Output;

fn check_resize(name: &str, f: Resize) {
    for (i, (shape, size)) in SIZES.into_iter().enumerate() {
        for (ac, hp) in MODES {
            for f32_input in [false, true] {
                let x = uniform(&shape, 10 + i as u64);
                let x = if f32_input { to_f32(&x) } else { x };
                for mode in [Mode::Static, Mode::Dims] {
                    let e = check_multi(
                        |s, v| vec![f(s, v[0].clone(), i32_const(s, &size), ac, hp)],
                        std::slice::from_ref(&x),
                        &[0],
                        EPS32,
                        mode,
                    );
                    ok(&format!("{name} {shape:?} -> {size:?} ac={ac} hp={hp} f32={f32_input} {mode:?}"), e, TOL32);
                }
            }
        }
    }
}

#[test]
fn resize_bilinear() {
    check_resize("ResizeBilinear", ops::resize_bilinear);
}

#[test]
fn resize_nearest_neighbor() {
    check_resize("ResizeNearestNeighbor", ops::resize_nearest_neighbor);
}

#[test]
fn resize_bicubic() {
    check_resize("ResizeBicubic", ops::resize_bicubic);
}

/// Boxes whose sample points stay at least 0.05 pixels from the pixel grid, so a step of
/// `EPS32` in a coordinate never crosses a kink of the bilinear interpolation.
fn boxes() -> Tensor {
    Tensor::new(vec![3, 4], vec![0.11f32, 0.07, 0.83, 0.91, 0.62, 0.33, 0.19, 0.04, 0.27, 0.52, 0.68, 0.77]).unwrap()
}

#[test]
fn crop_and_resize() {
    let image = uniform(&[2, 6, 5, 2], 31);
    let ind = Tensor::vec(vec![1i32, 0, 1]);
    for (method, crop) in [("bilinear", [3usize, 4]), ("bilinear", [1, 1]), ("nearest", [4, 3])] {
        for f32_image in [false, true] {
            let img = if f32_image { to_f32(&image) } else { image.clone() };
            let vals = [img, boxes(), ind.clone()];
            // Nearest crops only differentiate the image (TensorFlow's boxes gradient for
            // them is the bilinear one, not the derivative of the nearest sampling).
            let diff: &[usize] = if method == "nearest" { &[0] } else { &[0, 1] };
            for mode in [Mode::Static, Mode::Dims] {
                let e = check_multi(
                    |s, v| vec![ops::crop_and_resize(s, x(v, 0), x(v, 1), x(v, 2), i32_const(s, &crop), method, 0.0)],
                    &vals,
                    diff,
                    EPS32,
                    mode,
                );
                ok(&format!("CropAndResize {method} {crop:?} f32={f32_image} {mode:?}"), e, TOL32);
            }
        }
    }
}

#[test]
fn scale_and_translate() {
    let scale = Tensor::vec(vec![0.7f32, 1.6]);
    let translation = Tensor::vec(vec![0.3f32, -0.4]);
    for kernel in ["lanczos3", "triangle", "mitchellcubic"] {
        for antialias in [true, false] {
            let vals = [to_f32(&uniform(&[2, 5, 4, 2], 50)), scale.clone(), translation.clone()];
            for mode in [Mode::Static, Mode::Dims] {
                let e = check_multi(
                    |s, v| {
                        vec![ops::scale_and_translate(
                            s,
                            x(v, 0),
                            i32_const(s, &[4, 6]),
                            x(v, 1),
                            x(v, 2),
                            kernel,
                            antialias,
                        )]
                    },
                    &vals,
                    &[0],
                    EPS32,
                    mode,
                );
                ok(&format!("ScaleAndTranslate {kernel} antialias={antialias} {mode:?}"), e, TOL32);
            }
        }
    }
}

#[test]
fn adjust_contrast() {
    let cases: [(&[usize], f32); 3] = [(&[2, 3, 4, 3], 1.7), (&[3, 2, 2], -0.4), (&[1, 2, 2, 3, 2], 0.0)];
    for (shape, factor) in cases {
        let vals = [to_f32(&uniform(shape, 70)), Tensor::scalar(factor)];
        for mode in [Mode::Static, Mode::Rank] {
            let e = check_multi(|s, v| vec![ops::adjust_contrast(s, x(v, 0), x(v, 1))], &vals, &[0, 1], EPS32, mode);
            ok(&format!("AdjustContrastv2 {shape:?} factor {factor} {mode:?}"), e, TOL32);
        }
    }
}
