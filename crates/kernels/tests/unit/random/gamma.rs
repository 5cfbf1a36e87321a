//! `RandomGamma`, `StatelessRandomGammaV2`/`V3` and `RandomGammaGrad` beyond the golden
//! cases (`tests/golden/random_dists.json`): TensorFlow's values for a second run of a
//! stateful kernel, the edge alphas, statistics of large (parallel) draws, errors, and a
//! numeric check of `RandomGammaGrad` against the derivative of the gamma quantile.
//! The expected values come from `scripts/golden/random_dists.py --print` (TensorFlow 2.21).

use ferroflow_core::{attr, Code, DataType, Status, Tensor};
use ferroflow_kernels::math::special::igamma;
use ferroflow_kernels::random::{gamma_sample_der_alpha, gamma_sample_der_alpha_f32};
use ferroflow_kernels::testutil::{node, run_kernel, seeded_node};

fn gamma_node(t: DataType, seed: i64, seed2: i64) -> ferroflow_core::proto::NodeDef {
    seeded_node("RandomGamma", &[("T", t), ("S", DataType::Int32)], seed, seed2)
}

fn stateless_v2(shape: &[i32], seed: [i64; 2], alpha: Tensor) -> Result<Tensor, Status> {
    let n = node(
        "StatelessRandomGammaV2",
        &[("dtype", attr::ty(alpha.dtype())), ("T", attr::ty(DataType::Int32)), ("Tseed", attr::ty(DataType::Int64))],
    );
    Ok(run_kernel(n, vec![Tensor::vec(shape.to_vec()), Tensor::vec(seed.to_vec()), alpha], 1)?.remove(0))
}

fn grad(a: Tensor, x: Tensor) -> Result<Tensor, Status> {
    let n = node("RandomGammaGrad", &[("T", attr::ty(a.dtype()))]);
    Ok(run_kernel(n, vec![a, x], 1)?.remove(0))
}

#[test]
fn stateful_runs_continue_tensorflows_stream() {
    // RandomGamma(shape=[3], alpha=[0.3, 1, 2.5, 50] float64, seed=7, seed2=11), run twice.
    let n = gamma_node(DataType::Double, 7, 11);
    let alpha = Tensor::vec(vec![0.3f64, 1.0, 2.5, 50.0]);
    let [a, b] = crate::common::run_twice(&n, &[Tensor::vec(vec![3i32]), alpha]);
    assert_eq!(a.dims(), &[3, 4]);
    let first = [
        0.023290788300909242,
        1.6406489874670305,
        1.3266413239869657,
        40.25874166981406,
        0.07291228995857892,
        1.343275282504163,
        5.36718538011687,
        39.73792119259244,
        0.0012721840875699665,
        0.21876772371560974,
        3.3697176126458857,
        61.504807760565576,
    ];
    let second = [
        0.05777294833303427,
        0.8246060225349963,
        1.4582415426199997,
        61.53932528946545,
        0.2625131316798382,
        0.005468533647766757,
        0.612863775431784,
        38.81613860104895,
        0.13618984942877582,
        0.3170822062340724,
        1.9705213539192845,
        48.73519643748798,
    ];
    assert_eq!(a.as_slice::<f64>().unwrap(), first);
    assert_eq!(b.as_slice::<f64>().unwrap(), second);
}

#[test]
fn float32_and_key_counter_values_equal_tensorflows() {
    // RandomGamma(shape=[2], alpha=[0.5, 4] float32, seed=1, seed2=2).
    let out =
        run_kernel(gamma_node(DataType::Float, 1, 2), vec![Tensor::vec(vec![2i32]), Tensor::vec(vec![0.5f32, 4.0])], 1)
            .unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), [0.014439558f32, 3.869309, 0.1910653, 3.1077127]);
    // StatelessRandomGammaV3(shape=[2, 4], key=[42], counter=[7, 0], alg=3 (auto-select),
    // alpha=[0.3, 1, 2.5, 50] float64): tf.random.stateless_gamma's op.
    let n = node(
        "StatelessRandomGammaV3",
        &[("dtype", attr::ty(DataType::Double)), ("shape_dtype", attr::ty(DataType::Int32))],
    );
    let inputs = vec![
        Tensor::vec(vec![2i32, 4]),
        Tensor::vec(vec![42u64]),
        Tensor::vec(vec![7u64, 0]),
        Tensor::scalar(3i32),
        Tensor::vec(vec![0.3f64, 1.0, 2.5, 50.0]),
    ];
    let out = run_kernel(n, inputs, 1).unwrap();
    let want = [
        0.3823274325780288,
        3.696282626297675,
        3.884212717561994,
        45.29440659168742,
        0.14994507319968373,
        0.39801531997154227,
        0.6349859015025863,
        46.29916528395545,
    ];
    assert_eq!(out[0].as_slice::<f64>().unwrap(), want);
}

#[test]
fn edge_alphas_give_tensorflows_values() {
    // TensorFlow: alpha 0 and 1e-30 give 0, -1 and NaN give NaN, +inf gives +inf.
    let alpha = Tensor::vec(vec![0.0f64, 1e-30, -1.0, f64::NAN, f64::INFINITY]);
    let out = run_kernel(gamma_node(DataType::Double, 1, 2), vec![Tensor::vec(vec![3i32]), alpha], 1).unwrap();
    for row in out[0].as_slice::<f64>().unwrap().chunks(5) {
        assert_eq!(row[..2], [0.0, 0.0]);
        assert!(row[2].is_nan() && row[3].is_nan(), "{row:?}");
        assert_eq!(row[4], f64::INFINITY);
    }
}

#[test]
fn large_draws_have_gamma_moments() {
    // 3 x 20,000 samples (drawn in parallel): mean alpha, variance alpha.
    let out = stateless_v2(&[20_000, 3], [3, 4], Tensor::vec(vec![0.4f64, 1.0, 7.5])).unwrap();
    let v = out.as_slice::<f64>().unwrap();
    for (k, alpha) in [0.4, 1.0, 7.5].into_iter().enumerate() {
        let xs: Vec<f64> = v.iter().skip(k).step_by(3).copied().collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64;
        assert!((mean - alpha).abs() < 0.05 * alpha.max(1.0), "alpha {alpha}: mean {mean}");
        assert!((var - alpha).abs() < 0.1 * alpha.max(1.0), "alpha {alpha}: variance {var}");
        assert!(xs.iter().all(|&x| x >= 0.0));
    }
    // The same seed gives the same numbers.
    assert_eq!(stateless_v2(&[20_000, 3], [3, 4], Tensor::vec(vec![0.4f64, 1.0, 7.5])).unwrap(), out);
}

#[test]
fn errors_name_what_is_wrong() {
    let bad_shape = run_kernel(
        gamma_node(DataType::Float, 1, 1),
        vec![Tensor::new(vec![1, 1], vec![3i32]).unwrap(), Tensor::vec(vec![1.0f32])],
        1,
    )
    .unwrap_err();
    assert!(
        bad_shape.code == Code::InvalidArgument && bad_shape.message.contains("shape must be a vector"),
        "{bad_shape}"
    );
    let negative =
        run_kernel(gamma_node(DataType::Float, 1, 1), vec![Tensor::vec(vec![-3i32]), Tensor::vec(vec![1.0f32])], 1)
            .unwrap_err();
    assert_eq!(negative.code, Code::InvalidArgument, "{negative}");
    let wrong_type =
        run_kernel(gamma_node(DataType::Float, 1, 1), vec![Tensor::vec(vec![3i32]), Tensor::vec(vec![1.0f64])], 1)
            .unwrap_err();
    assert!(wrong_type.message.contains("alpha must be float"), "{wrong_type}");
    let not_float = ferroflow_kernels::create_kernel(&gamma_node(DataType::Int32, 1, 1)).err().unwrap();
    assert!(
        not_float.code == Code::InvalidArgument && not_float.message.contains("half, float, double"),
        "{not_float}"
    );
    let suffix = stateless_v2(&[4], [1, 2], Tensor::vec(vec![1.0f32, 2.0])).unwrap_err();
    assert!(suffix.message.contains("Shape passed in must end with broadcasted shape"), "{suffix}");
    assert_eq!(stateless_v2(&[4], [1, 2], Tensor::vec(vec![1.0f32; 4])).unwrap().dims(), &[4]);
    let n = node(
        "StatelessRandomGammaV3",
        &[("dtype", attr::ty(DataType::Float)), ("shape_dtype", attr::ty(DataType::Int32))],
    );
    let inputs = vec![
        Tensor::vec(vec![4i32]),
        Tensor::vec(vec![1u64]),
        Tensor::vec(vec![1u64, 2]),
        Tensor::scalar(2i32),
        Tensor::vec(vec![1.0f32; 4]),
    ];
    let alg = run_kernel(n, inputs, 1).unwrap_err();
    assert!(alg.message.contains("Unsupported algorithm id: 2"), "{alg}");
    let shapes = grad(Tensor::vec(vec![1.0f32, 2.0]), Tensor::vec(vec![1.0f32, 2.0, 3.0])).unwrap_err();
    assert!(shapes.message.contains("Incompatible shapes: [2] vs. [3]"), "{shapes}");
    // Empty outputs: no draws, no error (the empty shape is checked before alpha).
    let empty =
        run_kernel(gamma_node(DataType::Float, 1, 1), vec![Tensor::vec(vec![0i32]), Tensor::vec(vec![1.0f32, 2.0])], 1)
            .unwrap();
    assert_eq!(empty[0].dims(), &[0, 2]);
    assert_eq!(stateless_v2(&[0], [1, 2], Tensor::vec(vec![1.0f32, 2.0])).unwrap().dims(), &[0]);
}

#[test]
fn gamma_grad_matches_tensorflow() {
    // RandomGammaGrad(alpha=[0.3, 2.5, 2.5, 40], sample=[0.02, 1.7, 6, 38]).
    let (a, x) = (vec![0.3f64, 2.5, 2.5, 40.0], vec![0.02f64, 1.7, 6.0, 38.0]);
    let want = [0.25419430208458904, 0.8750443814204042, 1.6029866492202403, 0.9786426956404506];
    // Computed as Eigen computes it, in the element type: equal to the last bit.
    let got = grad(Tensor::vec(a.clone()), Tensor::vec(x.clone())).unwrap();
    assert_eq!(got.as_slice::<f64>().unwrap(), want);
    let want32 = [0.2541943f32, 0.8750445, 1.6029865, 0.9786426];
    let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let got = grad(Tensor::vec(a32), Tensor::vec(x32)).unwrap();
    assert_eq!(got.as_slice::<f32>().unwrap(), want32);
    // TensorFlow's edges: x = 0 gives 0; x < 0, a <= 0 or NaN give NaN; x = inf gives -0.
    assert_eq!(gamma_sample_der_alpha(1.0, 0.0), 0.0);
    assert!(gamma_sample_der_alpha(0.5, -1.0).is_nan() && gamma_sample_der_alpha(0.0, 1.0).is_nan());
    assert!(gamma_sample_der_alpha(f64::NAN, 1.0).is_nan() && gamma_sample_der_alpha(2.0, f64::NAN).is_nan());
    assert_eq!(gamma_sample_der_alpha(2.0, f64::INFINITY).to_bits(), (-0.0f64).to_bits());
    assert_eq!(gamma_sample_der_alpha_f32(f32::INFINITY, 5.0), 0.0);
}

/// The x with P(a, x) = p (bisection on the regularized incomplete gamma function).
fn gamma_quantile(a: f64, p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while igamma(a, hi) < p {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if igamma(a, mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[test]
fn gamma_grad_is_the_derivative_of_the_quantile() {
    // Samples drawn by the op itself, then dx/da at fixed P(a, x) by central differences of
    // the quantile, against RandomGammaGrad (both branches: series and continued fraction).
    let alphas = [0.3f64, 0.9, 1.0, 2.5, 12.0];
    let samples = stateless_v2(&[4, 5], [9, 10], Tensor::vec(alphas.to_vec())).unwrap();
    let xs = samples.as_slice::<f64>().unwrap();
    let a_rep: Vec<f64> = (0..xs.len()).map(|i| alphas[i % 5]).collect();
    let grads = grad(Tensor::new(vec![4, 5], a_rep.clone()).unwrap(), samples.clone()).unwrap();
    for ((&a, &x), &g) in a_rep.iter().zip(xs).zip(grads.as_slice::<f64>().unwrap()) {
        let p = igamma(a, x);
        if !(1e-9..1.0 - 1e-9).contains(&p) {
            continue;
        }
        let h = 1e-5 * a;
        let numeric = (gamma_quantile(a + h, p) - gamma_quantile(a - h, p)) / (2.0 * h);
        assert!((numeric - g).abs() <= 1e-5 * (1.0 + g.abs()), "a {a}, x {x}: numeric {numeric} vs op {g}");
    }
}
