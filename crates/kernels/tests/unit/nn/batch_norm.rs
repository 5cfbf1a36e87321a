use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn bn_node(op: &str, training: bool, factor: f32, format: &str) -> ferroflow_core::proto::NodeDef {
    node(
        op,
        &[
            ("T", attr::ty(DataType::Float)),
            ("U", attr::ty(DataType::Float)),
            ("epsilon", attr::float(0.001)),
            ("exponential_avg_factor", attr::float(factor)),
            ("data_format", attr::string(format)),
            ("is_training", attr::bool(training)),
        ],
    )
}

fn v(x: &[f32]) -> Tensor {
    Tensor::vec(x.to_vec())
}

fn close(got: &Tensor, want: &[f32]) {
    let g = got.as_slice::<f32>().unwrap();
    assert_eq!(g.len(), want.len());
    for (a, b) in g.iter().zip(want) {
        assert!((a - b).abs() <= 1e-5 + 1e-5 * b.abs(), "{g:?} vs {want:?}");
    }
}

/// x [1, 2, 2, 1] with values 1, 2, 3, 4: mean 2.5, biased variance 1.25.
#[test]
fn training_statistics_and_blending() {
    let x = Tensor::new(vec![1, 2, 2, 1], vec![1.0f32, 2., 3., 4.]).unwrap();
    let ins = vec![x.clone(), v(&[2.]), v(&[0.5]), v(&[1.]), v(&[3.])];
    let out = run_kernel(bn_node("FusedBatchNormV3", true, 1.0, "NHWC"), ins.clone(), 6).unwrap();
    let r = 1.0 / (1.25f32 + 0.001).sqrt();
    close(&out[0], &[-1.5 * 2. * r + 0.5, -0.5 * 2. * r + 0.5, 0.5 * 2. * r + 0.5, 1.5 * 2. * r + 0.5]);
    close(&out[1], &[2.5]);
    close(&out[2], &[1.25 * 4. / 3.]);
    close(&out[3], &[2.5]);
    close(&out[4], &[1.25]);
    assert_eq!(out[5].dims(), &[] as &[usize]);
    let out = run_kernel(bn_node("FusedBatchNormV3", true, 0.25, "NHWC"), ins, 6).unwrap();
    close(&out[1], &[0.75 * 1. + 0.25 * 2.5]);
    close(&out[2], &[0.75 * 3. + 0.25 * 1.25 * 4. / 3.]);
    // NCHW gives the same numbers for one channel.
    let x = Tensor::new(vec![1, 1, 2, 2], vec![1.0f32, 2., 3., 4.]).unwrap();
    let ins = vec![x, v(&[2.]), v(&[0.5]), v(&[]), v(&[])];
    let out = run_kernel(bn_node("FusedBatchNorm", true, 1.0, "NCHW"), ins, 5).unwrap();
    close(&out[1], &[2.5]);
}

#[test]
fn grad_matches_closed_form_and_checks_shapes() {
    let x = Tensor::new(vec![2, 1, 1, 2], vec![1.0f32, 0., 3., 2.]).unwrap();
    let dy = Tensor::new(vec![2, 1, 1, 2], vec![1.0f32, 1., 0., 2.]).unwrap();
    // Channel 0: x 1, 3 (mean 2, var 1); channel 1: x 0, 2 (mean 1, var 1). epsilon 0.001.
    let ins = vec![dy.clone(), x.clone(), v(&[1., 2.]), v(&[2., 1.]), v(&[1., 1.])];
    let out = run_kernel(bn_node("FusedBatchNormGrad", false, 1.0, "NHWC"), ins.clone(), 5).unwrap();
    let r = 1.0 / 1.001f32.sqrt();
    close(&out[1], &[-r, r]);
    close(&out[2], &[1., 3.]);
    close(&out[0], &[r, 2. * r, 0., 4. * r]);
    assert_eq!(out[3].dims(), &[0]);
    let out = run_kernel(bn_node("FusedBatchNormGrad", true, 1.0, "NHWC"), ins, 5).unwrap();
    // dx = scale r (dy - mean dy - xc r^2 mean(dy xc)).
    let dx0 = |dy: f32, xc: f32| r * (dy - 0.5 - xc * r * r * (-0.5));
    let dx1 = |dy: f32, xc: f32| 2. * r * (dy - 1.5 - xc * r * r * 0.5);
    close(&out[0], &[dx0(1., -1.), dx1(1., -1.), dx0(0., 1.), dx1(2., 1.)]);
    let e = run_kernel(
        bn_node("FusedBatchNormGrad", true, 1.0, "NHWC"),
        vec![dy, x.clone(), v(&[1.]), v(&[2., 1.]), v(&[1., 1.])],
        5,
    )
    .unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("scale must have the same number of elements as the channels of x, got 1 and 2"), "{e}");
}

#[test]
fn forward_rejects_bad_shapes() {
    let run = |x: Tensor, mean: Tensor, training: bool| {
        let ins = vec![x, v(&[1., 1.]), v(&[0., 0.]), mean, v(&[1., 1.])];
        run_kernel(bn_node("FusedBatchNormV2", training, 1.0, "NHWC"), ins, 5)
    };
    let x = Tensor::new(vec![1, 1, 2, 2], vec![1.0f32, 2., 3., 4.]).unwrap();
    let e = run(Tensor::new(vec![2, 2], vec![1.0f32; 4]).unwrap(), v(&[0., 0.]), true).unwrap_err();
    assert!(e.message.contains("input must be 4 or 5-dimensional[2,2]"), "{e}");
    let e = run(x.clone(), v(&[0.]), false).unwrap_err();
    assert!(e.message.contains("When is_training=false, mean must have"), "{e}");
    assert!(run(x, v(&[0.]), true).is_err());
}
