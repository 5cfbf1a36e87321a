//! Values from TensorFlow 2.21 (the same calls through `tf.raw_ops`).

use ferroflow_core::{attr, Code, Tensor};

use crate::testutil::{node, run_kernel};

/// Two classes over four shared boxes: boxes 0-2 overlap, box 3 stands apart; equal scores
/// within and across classes.
fn inputs(per_class: i32, total: i32, score_t: f32) -> Vec<Tensor> {
    let boxes = vec![0.0f32, 0.0, 1.0, 1.0, 0.0, 0.1, 1.0, 1.1, 0.0, -0.1, 1.0, 0.9, 0.0, 10.0, 1.0, 11.0];
    let scores = vec![0.9f32, 0.75, 0.75, 0.9, 0.6, 0.75, 0.95, 0.75];
    vec![
        Tensor::new(vec![1, 4, 1, 4], boxes).unwrap(),
        Tensor::new(vec![1, 4, 2], scores).unwrap(),
        Tensor::scalar(per_class),
        Tensor::scalar(total),
        Tensor::scalar(0.5f32),
        Tensor::scalar(score_t),
    ]
}

fn run(pad: bool, clip: bool, inputs: Vec<Tensor>) -> Result<Vec<Tensor>, ferroflow_core::Status> {
    let n = node("CombinedNonMaxSuppression", &[("pad_per_class", attr::bool(pad)), ("clip_boxes", attr::bool(clip))]);
    run_kernel(n, inputs, 4)
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.as_slice::<f32>().unwrap().to_vec()
}

#[test]
fn per_class_selection_merged_by_score_and_padded() {
    let out = run(false, true, inputs(2, 5, 0.0)).unwrap();
    assert_eq!(out[0].dims(), &[1, 5, 4]);
    #[rustfmt::skip]
    let want = [0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.1, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
    assert_eq!(f32s(&out[0]), want);
    assert_eq!(f32s(&out[1]), [0.95, 0.9, 0.9, 0.75, 0.0]);
    assert_eq!(f32s(&out[2]), [0.0, 0.0, 1.0, 1.0, 0.0]);
    assert_eq!(out[3].as_slice::<i32>().unwrap(), [4]);
    // pad_per_class: at most per_class * classes = 4 rows.
    let out = run(true, true, inputs(2, 5, 0.0)).unwrap();
    assert_eq!(out[0].dims(), &[1, 4, 4]);
    assert_eq!(f32s(&out[1]), [0.95, 0.9, 0.9, 0.75]);
}

#[test]
fn score_threshold_total_cap_and_unclipped_boxes() {
    let out = run(false, false, inputs(3, 3, 0.7)).unwrap();
    assert_eq!(f32s(&out[0]), [0.0, 10.0, 1.0, 11.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.1, 1.0, 1.1]);
    assert_eq!(f32s(&out[1]), [0.95, 0.9, 0.9]);
    assert_eq!(f32s(&out[2]), [0.0, 0.0, 1.0]);
    assert_eq!(out[3].as_slice::<i32>().unwrap(), [3]);
}

#[test]
fn bad_inputs_are_invalid_arguments() {
    let mut bad_q = inputs(2, 5, 0.0);
    bad_q[0] = Tensor::new(vec![1, 2, 2, 4], vec![0f32; 16]).unwrap();
    bad_q[1] = Tensor::new(vec![1, 2, 3], vec![0f32; 6]).unwrap();
    let mut bad_rank = inputs(2, 5, 0.0);
    bad_rank[1] = Tensor::new(vec![4, 2], vec![0f32; 8]).unwrap();
    let mut bad_iou = inputs(2, 5, 0.0);
    bad_iou[4] = Tensor::scalar(1.5f32);
    let mut bad_scalar = inputs(2, 5, 0.0);
    bad_scalar[3] = Tensor::vec(vec![5i32]);
    for (i, want) in [
        (bad_q, "third dimension of boxes must be either 1 or num classes"),
        (bad_rank, "scores must be 3-D [batch, num_boxes, num_classes], got shape [4,2]"),
        (inputs(0, 5, 0.0), "max_size_per_class must be positive"),
        (inputs(2, 0, 0.0), "max_total_size must be > 0"),
        (bad_iou, "iou_threshold must be in [0, 1]"),
        (bad_scalar, "max_total_size must be 0-D, got shape [1]"),
    ] {
        let e = run(false, true, i).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument, "{e}");
        assert!(e.message.contains(want), "{e} (want {want})");
    }
}
