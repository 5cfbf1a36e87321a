//! Values from TensorFlow 2.21 (the same calls through `tf.raw_ops`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, Code, DataType, Tensor};

use crate::testutil::{node, run_kernel};

fn boxes() -> Tensor {
    Tensor::new(vec![1, 1, 4], vec![0.1f32, 0.2, 0.7, 0.9]).unwrap()
}

fn sampler(op: &str, t: DataType, extra: &[(&str, ferroflow_core::proto::AttrValue)]) -> NodeDef {
    let mut attrs = vec![
        ("T", attr::ty(t)),
        ("aspect_ratio_range", attr::list_float(&[0.75, 1.33])),
        ("area_range", attr::list_float(&[0.05, 1.0])),
        ("max_attempts", attr::int(100)),
        ("use_image_if_no_bounding_boxes", attr::bool(false)),
    ];
    for (k, v) in extra {
        match attrs.iter_mut().find(|(n, _)| n == k) {
            Some(a) => a.1 = v.clone(),
            None => attrs.push((k, v.clone())),
        }
    }
    node(op, &attrs)
}

fn values(out: &[Tensor]) -> (Vec<f64>, Vec<f64>, Vec<f32>) {
    (out[0].to_f64_vec().unwrap(), out[1].to_f64_vec().unwrap(), out[2].as_slice::<f32>().unwrap().to_vec())
}

#[test]
fn stateless_draws_are_tensorflows_for_either_seed_type() {
    let want = (vec![3.0, 52.0, 0.0], vec![428.0, 389.0, -1.0], vec![0.00625f32, 0.08125, 0.8979167, 0.6890625]);
    for (t, seed) in [(DataType::Int32, Tensor::vec(vec![1i32, 2])), (DataType::Int64, Tensor::vec(vec![1i64, 2]))] {
        let n = sampler("StatelessSampleDistortedBoundingBox", t, &[("Tseed", attr::ty(seed.dtype()))]);
        let size =
            if t == DataType::Int32 { Tensor::vec(vec![480i32, 640, 3]) } else { Tensor::vec(vec![480i64, 640, 3]) };
        let out = run_kernel(n, vec![size, boxes(), Tensor::scalar(0.1f32), seed], 3).unwrap();
        assert_eq!(out[0].dtype(), t);
        assert_eq!(values(&out), want);
        assert_eq!(out[2].dims(), &[1, 1, 4]);
    }
}

#[test]
fn stateful_runs_advance_the_stream() {
    let n = sampler(
        "SampleDistortedBoundingBoxV2",
        DataType::Int32,
        &[
            ("seed", attr::int(7)),
            ("seed2", attr::int(11)),
            ("area_range", attr::list_float(&[0.2, 0.8])),
            ("aspect_ratio_range", attr::list_float(&[0.5, 2.0])),
        ],
    );
    let kernel = crate::create_kernel(&n).unwrap();
    let run = || {
        let inputs = vec![Tensor::vec(vec![300i32, 200, 3]), boxes(), Tensor::scalar(0.5f32)];
        let inputs = inputs.into_iter().map(crate::Value::Tensor).collect();
        let step = crate::testutil::test_step(std::sync::Arc::new(crate::ResourceMgr::new()));
        let mut ctx = crate::OpContext::new(std::sync::Arc::new(n.clone()), inputs, 3, step);
        kernel.compute(&mut ctx).unwrap();
        let out: Vec<Tensor> = ctx.take_outputs().unwrap().into_iter().map(|v| v.tensor().unwrap()).collect();
        out
    };
    let (first, second) = (run(), run());
    assert_eq!(values(&first).0, [44.0, 56.0, 0.0]);
    assert_eq!(values(&first).1, [227.0, 121.0, -1.0]);
    assert_eq!(values(&second).0, [4.0, 42.0, 0.0]);
    assert_eq!(values(&second).1, [174.0, 140.0, -1.0]);
    assert_eq!(values(&second).2, [0.013333334f32, 0.21, 0.5933333, 0.91]);
}

#[test]
fn whole_image_when_no_crop_fits_and_when_no_boxes() {
    // min_object_covered 1 of a box with crops of 1-2% of the image, one attempt: the image.
    let n = sampler(
        "SampleDistortedBoundingBox",
        DataType::UInt8,
        &[
            ("seed", attr::int(3)),
            ("seed2", attr::int(4)),
            ("min_object_covered", attr::float(1.0)),
            ("area_range", attr::list_float(&[0.01, 0.02])),
            ("max_attempts", attr::int(1)),
        ],
    );
    let out = run_kernel(n, vec![Tensor::vec(vec![200u8, 100, 3]), boxes()], 3).unwrap();
    // size[2] is T(-1): 255 for uint8.
    assert_eq!(values(&out), (vec![0.0, 0.0, 0.0], vec![200.0, 100.0, 255.0], vec![0.0, 0.0, 1.0, 1.0]));
    let n = sampler(
        "SampleDistortedBoundingBox",
        DataType::UInt8,
        &[
            ("seed", attr::int(3)),
            ("seed2", attr::int(5)),
            ("min_object_covered", attr::float(0.1)),
            ("use_image_if_no_bounding_boxes", attr::bool(true)),
        ],
    );
    let empty = Tensor::new(vec![1, 0, 4], Vec::<f32>::new()).unwrap();
    let out = run_kernel(n, vec![Tensor::vec(vec![200u8, 100, 3]), empty], 3).unwrap();
    assert_eq!(values(&out).0, [45.0, 24.0, 0.0]);
    assert_eq!(values(&out).1, [53.0, 66.0, 255.0]);
}

#[test]
fn bad_attrs_and_inputs_are_tensorflows_errors() {
    let v2 = |extra: &[(&str, ferroflow_core::proto::AttrValue)]| {
        let mut e = vec![("seed", attr::int(1)), ("seed2", attr::int(2))];
        e.extend(extra.iter().cloned());
        sampler("SampleDistortedBoundingBoxV2", DataType::Int32, &e)
    };
    let size = || Tensor::vec(vec![10i32, 10, 3]);
    let cov = || Tensor::scalar(0.1f32);
    let cases: Vec<(NodeDef, Vec<Tensor>, &str)> = vec![
        (
            v2(&[("area_range", attr::list_float(&[0.5, 1.3]))]),
            vec![size(), boxes(), cov()],
            "Area range must be less then or equal to 1.0: [0.5, 1.3]",
        ),
        (
            v2(&[("aspect_ratio_range", attr::list_float(&[0.0, 1.0]))]),
            vec![size(), boxes(), cov()],
            "Aspect ratio range must be non-negative: [0, 1]",
        ),
        (v2(&[("max_attempts", attr::int(0))]), vec![size(), boxes(), cov()], "Max attempts must be non-negative: 0"),
        (v2(&[]), vec![size(), boxes(), Tensor::scalar(-0.5f32)], "Min object covered must be non-negative: -0.5"),
        (v2(&[]), vec![Tensor::vec(vec![10i32, 10]), boxes(), cov()], "image_size must contain 3 elements[2]"),
        (v2(&[]), vec![Tensor::vec(vec![-1i32, 10, 3]), boxes(), cov()], "image height cannot be >= int32 max"),
        (
            v2(&[]),
            vec![size(), Tensor::new(vec![1, 4], vec![0.5f32; 4]).unwrap(), cov()],
            "input boxes must be 3-dimensional",
        ),
        (
            v2(&[]),
            vec![size(), Tensor::new(vec![1, 1, 4], vec![0.5f32, 1.5, 0.5, 0.5]).unwrap(), cov()],
            "All bounding box coordinates must be in [0.0, 1.0]: 1.5",
        ),
        (
            v2(&[]),
            vec![size(), Tensor::new(vec![1, 0, 4], Vec::<f32>::new()).unwrap(), cov()],
            "No bounding boxes provided as input.",
        ),
        (
            sampler("StatelessSampleDistortedBoundingBox", DataType::Int32, &[("Tseed", attr::ty(DataType::Int64))]),
            vec![size(), boxes(), cov(), Tensor::vec(vec![1i64, 2, 3])],
            "seed must have shape [2], not [3]",
        ),
    ];
    for (n, inputs, want) in cases {
        let e = run_kernel(n, inputs, 3).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument, "{e}");
        assert!(e.message.contains(want), "{e} (want {want})");
    }
}

#[test]
fn exact_uniform_rejects_the_biased_samples() {
    use super::Simple;
    use crate::random::philox::{Philox, SingleSample};
    // The same samples read raw and through `uniform`: powers of two mask, others reject
    // the samples below 2^32 mod n.
    let mut raw = Philox::new(5, 6);
    let mut raw = SingleSample::new(&mut raw);
    let samples: Vec<u32> = (0..8).map(|_| raw.next_u32()).collect();
    let mut g = Philox::new(5, 6);
    let mut s = Simple(SingleSample::new(&mut g));
    assert_eq!(s.uniform(8), samples[0] & 7);
    assert_eq!(s.uniform(0), 0);
    let n = 3_000_000_000u32;
    let rem = (u32::MAX % n) + 1;
    let want = samples[2..].iter().find(|&&r| r >= rem).map(|r| r % n).unwrap();
    assert_eq!(s.uniform(n), want);
}
