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

/// Two passes in f64 over `[rows, c]`: the reference mean and biased variance.
fn exact_moments(x: &[f32], c: usize) -> (Vec<f64>, Vec<f64>) {
    let rows = (x.len() / c) as f64;
    let mut m = vec![0.0f64; c];
    for r in x.chunks(c) {
        m.iter_mut().zip(r).for_each(|(s, &v)| *s += f64::from(v));
    }
    m.iter_mut().for_each(|s| *s /= rows);
    let mut v = vec![0.0f64; c];
    for r in x.chunks(c) {
        v.iter_mut().zip(r).zip(&m).for_each(|((s, &x), &m)| *s += (f64::from(x) - m).powi(2));
    }
    v.iter_mut().for_each(|s| *s /= rows);
    (m, v)
}

/// The batch statistics are read from memory once (runs of rows merged in f64): they must
/// keep the two-pass variance's accuracy where a one-pass sum of squares would cancel
/// (a large offset against a small spread), over row counts that are not a multiple of a
/// run, one row, and many runs split over threads; NCHW agrees.
#[test]
fn training_moments_keep_two_pass_accuracy() {
    let mut rng = ferroflow_core::SplitMix64::new(7);
    for (rows, c, offset) in [(1usize, 3usize, 0.0f32), (700, 5, 1000.0), (513, 64, -3.0), (9000, 17, 50.0)] {
        let x: Vec<f32> = (0..rows * c)
            .map(|_| offset + ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.01)
            .collect();
        let (em, ev) = exact_moments(&x, c);
        let ones = || Tensor::vec(vec![1.0f32; c]);
        let zeros = || Tensor::vec(vec![0.0f32; c]);
        let nhwc = Tensor::new(vec![1, rows, 1, c], x.clone()).unwrap();
        let out =
            run_kernel(bn_node("FusedBatchNormV3", true, 1.0, "NHWC"), vec![nhwc, ones(), zeros(), v(&[]), v(&[])], 6)
                .unwrap();
        let xt: Vec<f32> = (0..c).flat_map(|j| (0..rows).map(move |r| r * c + j)).map(|i| x[i]).collect();
        let nchw = Tensor::new(vec![1, c, rows, 1], xt).unwrap();
        let first =
            run_kernel(bn_node("FusedBatchNormV3", true, 1.0, "NCHW"), vec![nchw, ones(), zeros(), v(&[]), v(&[])], 6)
                .unwrap();
        for o in [&out, &first] {
            let (m, var) = (o[3].as_slice::<f32>().unwrap(), o[4].as_slice::<f32>().unwrap());
            for j in 0..c {
                assert!((f64::from(m[j]) - em[j]).abs() <= 1e-6 * em[j].abs().max(1e-3), "mean {rows}x{c} ch {j}");
                let tol = 1e-3 * ev[j] + 1e-12;
                assert!((f64::from(var[j]) - ev[j]).abs() <= tol, "var {rows}x{c} ch {j}: {} vs {}", var[j], ev[j]);
            }
        }
        // y = (x - mean) / sqrt(var + eps) with the statistics returned: one element per channel.
        let (y, m, var) =
            (out[0].as_slice::<f32>().unwrap(), out[3].as_slice::<f32>().unwrap(), out[4].as_slice::<f32>().unwrap());
        for j in 0..c {
            let want = (f64::from(x[j]) - f64::from(m[j])) / (f64::from(var[j]) + 0.001).sqrt();
            assert!((f64::from(y[j]) - want).abs() <= 2e-3 * want.abs().max(1e-2), "y ch {j}: {} vs {want}", y[j]);
        }
    }
}

/// `_FusedBatchNormGradEx` with `_y_from_x` (the activation recomputed from `x`) gives the
/// bits of the same op reading the forward's activated `y`: Relu and Relu6, training and
/// inference, channel counts below, at and past a vector, on values that clip on both sides.
#[test]
fn grad_ex_recomputing_y_equals_reading_it() {
    for (c, training, act) in [(3, true, "Relu6"), (16, true, "Relu6"), (37, false, "Relu6"), (37, true, "Relu")] {
        let dims = vec![4, 3, 5, c];
        let x = ferroflow_kernels::testutil::seeded_f32(&dims, c as u64);
        let dy = ferroflow_kernels::testutil::seeded_f32(&dims, 100 + c as u64);
        // Scales up to ±20, so the activation clips at 0 and at 6.
        let s = ferroflow_kernels::testutil::seeded_f32(&[c], 7);
        let scale = Tensor::vec(s.as_slice::<f32>().unwrap().iter().map(|s| s * 20.0).collect());
        let offset = ferroflow_kernels::testutil::seeded_f32(&[c], 8);
        let (mean, var) = (ferroflow_kernels::testutil::seeded_f32(&[c], 9), v(&vec![0.5; c]));
        let mut fwd = bn_node("_FusedBatchNormEx", training, 1.0, "NHWC");
        fwd.attr.insert("activation_mode".into(), attr::string(act));
        let f = run_kernel(fwd, vec![x.clone(), scale.clone(), offset.clone(), mean, var], 6).unwrap();
        let y = f[0].as_slice::<f32>().unwrap();
        assert!(y.contains(&0.0) && y.iter().any(|v| *v > 0.0 && *v < 6.0), "{act} never clips");
        if act == "Relu6" {
            assert!(y.contains(&6.0), "Relu6 never clips at 6");
        }
        let mut grad = bn_node("_FusedBatchNormGradEx", training, 1.0, "NHWC");
        grad.attr.insert("activation_mode".into(), attr::string(act));
        let ins = vec![dy, x, scale, f[3].clone(), f[4].clone(), f[5].clone(), offset, f[0].clone()];
        let read = run_kernel(grad.clone(), ins.clone(), 5).unwrap();
        grad.attr.insert("_y_from_x".into(), attr::bool(true));
        let recomputed = run_kernel(grad, ins, 5).unwrap();
        for (i, (a, b)) in read.iter().zip(&recomputed).take(3).enumerate() {
            let (a, b) = (a.as_slice::<f32>().unwrap(), b.as_slice::<f32>().unwrap());
            assert!(a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits()), "output {i}, c {c}, {act}");
        }
    }
}
