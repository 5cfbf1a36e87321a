use ferroflow_core::{DataType, Tensor};

use super::*;
use crate::ops::test_util::ph;
use crate::ops::{constant, dilation2d, erosion2d, placeholder, Dilation2dAttrs};

fn int(s: &Scope, dims: &[i64]) -> Output {
    placeholder(s, DataType::Int32, Some(dims))
}

fn nms_inputs(s: &Scope, boxes: &[i64], scores: &[i64], per_class: Output, total: Output) -> CombinedNmsInputs {
    CombinedNmsInputs {
        boxes: ph(s, boxes),
        scores: ph(s, scores),
        max_output_size_per_class: per_class,
        max_total_size: total,
        iou_threshold: constant(s, 0.5f32),
        score_threshold: constant(s, 0.0f32),
    }
}

#[test]
fn shapes_follow_tensorflow() {
    let s = Scope::new_root();
    let shape = |o: &Output| s.graph().shape_of(o);
    let a = SampleBoxAttrs::default();
    let [begin, size, bbox] =
        sample_distorted_bounding_box_v2(&s, int(&s, &[3]), ph(&s, &[2, -1, 4]), constant(&s, 0.1f32), (1, 2), &a);
    assert_eq!((shape(&begin), shape(&size), shape(&bbox)), (Some(vec![3]), Some(vec![3]), Some(vec![1, 1, 4])));
    let seed = constant(&s, Tensor::vec(vec![1i64, 2]));
    let [b2, ..] =
        stateless_sample_distorted_bounding_box(&s, int(&s, &[3]), ph(&s, &[1, 1, 4]), constant(&s, 0.5f32), seed, &a);
    assert_eq!(shape(&b2), Some(vec![3]));
    // CombinedNonMaxSuppression: [batch, max_total_size, ...], or per class when padded.
    let c = |v: i32| constant(&s, v);
    let o = combined_non_max_suppression(&s, nms_inputs(&s, &[2, 10, 1, 4], &[2, 10, 3], c(4), c(7)), false, true);
    assert_eq!(shape(&o[0]), Some(vec![2, 7, 4]));
    assert_eq!(shape(&o[3]), Some(vec![2]));
    let o = combined_non_max_suppression(&s, nms_inputs(&s, &[-1, 10, 3, 4], &[2, 10, 3], c(2), c(7)), true, true);
    assert_eq!((shape(&o[0]), shape(&o[1])), (Some(vec![2, 6, 4]), Some(vec![2, 6])));
    let o = combined_non_max_suppression(&s, nms_inputs(&s, &[2, 10, 1, 4], &[2, 10, -1], c(2), c(7)), true, true);
    assert_eq!(shape(&o[2]), Some(vec![2, -1]));
    // Glimpses: [batch, size, depth].
    let size = constant(&s, Tensor::vec(vec![4i32, 5]));
    let g = extract_glimpse_v2(&s, ph(&s, &[3, 9, 11, 2]), size, ph(&s, &[-1, 2]), true, true, "zero");
    assert_eq!(shape(&g), Some(vec![3, 4, 5, 2]));
    let g = extract_glimpse_v2(&s, ph(&s, &[3, 9, 11, 2]), int(&s, &[2]), ph(&s, &[3, 2]), true, true, "zero");
    assert_eq!(shape(&g), Some(vec![3, -1, -1, 2]));
    // Dilation: windows as a convolution's.
    let d =
        |strides: [i64; 4], rates: [i64; 4], padding: &str| Dilation2dAttrs { strides, rates, padding: padding.into() };
    let y = dilation2d(&s, ph(&s, &[2, 9, 10, 3]), ph(&s, &[3, 2, 3]), &d([1, 2, 3, 1], [1, 2, 1, 1], "VALID"));
    assert_eq!(shape(&y), Some(vec![2, 3, 3, 3]));
    let y = dilation2d(&s, ph(&s, &[2, 9, 10, 3]), ph(&s, &[3, 2, 3]), &d([1, 2, 3, 1], [1, 2, 1, 1], "SAME"));
    assert_eq!(shape(&y), Some(vec![2, 5, 4, 3]));
    let y = dilation2d(&s, ph(&s, &[2, -1, 10, 3]), ph(&s, &[3, 2, 3]), &d([1, 1, 1, 1], [1, 1, 1, 1], "SAME"));
    assert_eq!(shape(&y), Some(vec![2, -1, -1, 3]));
    let e = erosion2d(&s, ph(&s, &[1, 5, 5, 1]), ph(&s, &[2, 2, 1]), &d([1, 1, 1, 1], [1, 1, 1, 1], "VALID"));
    assert_eq!(shape(&e), Some(vec![1, 4, 4, 1]));
    s.status().unwrap();
}

#[test]
fn bad_shapes_and_attrs_are_errors() {
    let d1 = Dilation2dAttrs { strides: [1; 4], rates: [1; 4], padding: "VALID".into() };
    type Build = Box<dyn Fn(&Scope)>;
    let cases: Vec<(&str, Build)> = vec![
        (
            "image_size must be 1-dimensional",
            Box::new(|s| {
                let a = SampleBoxAttrs::default();
                sample_distorted_bounding_box_v2(
                    s,
                    int(s, &[3, 1]),
                    ph(s, &[1, 1, 4]),
                    constant(s, 0.1f32),
                    (0, 0),
                    &a,
                );
            }),
        ),
        (
            "Dimension must be 4 but is 3",
            Box::new(|s| {
                let a = SampleBoxAttrs::default();
                sample_distorted_bounding_box_v2(s, int(s, &[3]), ph(s, &[1, 1, 3]), constant(s, 0.1f32), (0, 0), &a);
            }),
        ),
        (
            "third dimension of boxes must be either 1 or equal to the third dimension of scores",
            Box::new(|s| {
                let i = nms_inputs(s, &[1, 4, 2, 4], &[1, 4, 3], constant(s, 2i32), constant(s, 3i32));
                combined_non_max_suppression(s, i, false, true);
            }),
        ),
        (
            "max_total_size should be > 0",
            Box::new(|s| {
                let i = nms_inputs(s, &[1, 4, 1, 4], &[1, 4, 3], constant(s, 2i32), constant(s, 0i32));
                combined_non_max_suppression(s, i, false, true);
            }),
        ),
        (
            "Computed output size would be negative: -1",
            Box::new(move |s| {
                dilation2d(s, ph(s, &[1, 5, 6, 2]), ph(s, &[7, 2, 2]), &d1);
            }),
        ),
        (
            "offsets must be 2-dimensional",
            Box::new(|s| {
                extract_glimpse_v2(s, ph(s, &[3, 9, 11, 2]), int(s, &[2]), ph(s, &[3]), true, true, "zero");
            }),
        ),
    ];
    crate::ops::test_util::assert_invalid_builds(cases);
}
