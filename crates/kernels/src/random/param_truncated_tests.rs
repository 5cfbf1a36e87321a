//! The law of the parameterized truncated normal: bounds respected and the sample mean and
//! standard deviation those of the truncated normal (computed by quadrature), for each of
//! the three samplers (normal proposals, uniform proposals, the exponential tail sampler) and
//! mirrored one-sided bounds; broadcasting; TensorFlow's error classes. Exact values are the
//! golden cases'.

use ferroflow_core::{attr, Code, DataType, Tensor};

use crate::testutil::{expect_node_error, node, run_kernel};

fn stateless(shape: &[i64], seed: [i64; 2], p: [Tensor; 4]) -> Result<Tensor, ferroflow_core::Status> {
    let n = node(
        "StatelessParameterizedTruncatedNormal",
        &[("dtype", attr::ty(p[0].dtype())), ("S", attr::ty(DataType::Int64)), ("Tseed", attr::ty(DataType::Int64))],
    );
    let mut inputs = vec![Tensor::vec(shape.to_vec()), Tensor::vec(seed.to_vec())];
    inputs.extend(p);
    run_kernel(n, inputs, 1).map(|mut v| v.remove(0))
}

fn scalars(v: [f64; 4]) -> [Tensor; 4] {
    v.map(Tensor::scalar)
}

fn scalars_of(dtype: DataType, v: [f64; 4]) -> [Tensor; 4] {
    match dtype {
        DataType::Float => v.map(|x| Tensor::scalar(x as f32)),
        _ => scalars(v),
    }
}

/// Mean and standard deviation of N(mu, sigma) truncated to [lo, hi] (Simpson's rule).
fn truncated_moments(mu: f64, sigma: f64, lo: f64, hi: f64) -> (f64, f64) {
    let a = lo.max(mu - 14.0 * sigma);
    let b = hi.min(mu + 14.0 * sigma);
    let n = 20000;
    let h = (b - a) / n as f64;
    let (mut m0, mut m1, mut m2) = (0.0, 0.0, 0.0);
    for i in 0..=n {
        let x = a + i as f64 * h;
        let w = if i == 0 || i == n {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let d = w * (-0.5 * ((x - mu) / sigma).powi(2)).exp();
        m0 += d;
        m1 += d * x;
        m2 += d * x * x;
    }
    let mean = m1 / m0;
    (mean, (m2 / m0 - mean * mean).sqrt())
}

#[test]
fn samples_follow_the_truncated_normal_law_for_each_sampler() {
    let inf = f64::INFINITY;
    // (mean, stddev, minval, maxval): normal proposals, uniform proposals, exponential tail,
    // mirrored lower tail, a far tail, an interval away from the mean.
    let cases = [
        (0.0, 1.0, -3.0, 3.0),
        (1.0, 2.0, 0.5, 1.5),
        (0.0, 1.0, 2.0, inf),
        (3.0, 0.5, -inf, 1.5),
        (0.0, 1.0, 6.0, 7.0),
        (-1.0, 1.5, 1.0, 4.0),
    ];
    let n = 40000;
    for (k, &(mu, sd, lo, hi)) in cases.iter().enumerate() {
        for dtype in [DataType::Float, DataType::Double] {
            let p = scalars_of(dtype, [mu, sd, lo, hi]);
            let out = stateless(&[n as i64], [k as i64 + 1, 9], p).unwrap();
            let v = out.to_f64_vec().unwrap();
            assert!(v.iter().all(|&x| x >= lo && x <= hi), "case {k} {dtype}: a sample is out of bounds");
            let mean = v.iter().sum::<f64>() / n as f64;
            let sdev = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
            let (want_m, want_s) = truncated_moments(mu, sd, lo, hi);
            let se = want_s / (n as f64).sqrt();
            assert!((mean - want_m).abs() < 5.0 * se, "case {k} {dtype}: mean {mean} vs {want_m}");
            assert!((sdev - want_s).abs() < 0.03 * want_s, "case {k} {dtype}: std {sdev} vs {want_s}");
        }
    }
}

#[test]
fn parameters_broadcast_over_the_trailing_dims() {
    let means = Tensor::new(vec![3], vec![0.0f32, 10.0, -10.0]).unwrap();
    let p =
        [means, Tensor::scalar(1.0f32), Tensor::new(vec![1], vec![-2.0f32]).unwrap(), Tensor::scalar(f32::INFINITY)];
    let out = stateless(&[500, 3], [4, 5], p).unwrap();
    let v = out.as_slice::<f32>().unwrap();
    for (b, lo_mean) in [(0usize, 0.0f64), (1, 10.0), (2, -2.0)] {
        let col: Vec<f64> = (0..500).map(|i| v[i * 3 + b] as f64).collect();
        assert!(col.iter().all(|&x| x >= -2.0));
        let mean = col.iter().sum::<f64>() / 500.0;
        let want = truncated_moments([0.0, 10.0, -10.0][b], 1.0, -2.0, f64::INFINITY).0;
        assert!((mean - want).abs() < 0.25, "column {b}: mean {mean} vs {want} ({lo_mean})");
    }
    let again = stateless(
        &[500, 3],
        [4, 5],
        [
            Tensor::new(vec![3], vec![0.0f32, 10.0, -10.0]).unwrap(),
            Tensor::scalar(1.0f32),
            Tensor::new(vec![1], vec![-2.0f32]).unwrap(),
            Tensor::scalar(f32::INFINITY),
        ],
    )
    .unwrap();
    assert_eq!(out, again, "the same seed draws the same values");
}

#[test]
fn bad_parameters_give_tensorflows_error_classes() {
    let r = stateless(&[4], [1, 2], scalars([0.0, -1.0, -1.0, 1.0]));
    expect_node_error(r, Code::InvalidArgument, "Invalid parameters");
    let r = stateless(&[4], [1, 2], scalars([0.0, 1.0, 1.0, -1.0]));
    expect_node_error(r, Code::InvalidArgument, "Invalid parameters");
    let r = stateless(&[4], [1, 2], scalars([0.0, 1.0, f64::NEG_INFINITY, f64::INFINITY]));
    expect_node_error(r, Code::InvalidArgument, "Invalid parameters");
    let two = Tensor::new(vec![2], vec![0.0f64, 1.0]).unwrap();
    let three = Tensor::new(vec![3], vec![1.0f64; 3]).unwrap();
    let r = stateless(&[4, 3], [1, 2], [two.clone(), three, Tensor::scalar(-1.0), Tensor::scalar(1.0)]);
    expect_node_error(r, Code::InvalidArgument, "must have compatible batch dimensions");
    let r = stateless(&[4, 3], [1, 2], [two, Tensor::scalar(1.0), Tensor::scalar(-1.0), Tensor::scalar(1.0)]);
    expect_node_error(r, Code::InvalidArgument, "Shape passed in must end with broadcasted shape");
}

#[test]
fn stateful_runs_continue_the_stream_within_bounds() {
    let n = node(
        "ParameterizedTruncatedNormal",
        &[
            ("dtype", attr::ty(DataType::Double)),
            ("T", attr::ty(DataType::Int32)),
            ("seed", attr::int(3)),
            ("seed2", attr::int(4)),
        ],
    );
    let inputs = || {
        vec![
            Tensor::vec(vec![2i32, 5]),
            Tensor::new(vec![2], vec![0.0f64, 5.0]).unwrap(),
            Tensor::scalar(1.0f64),
            Tensor::new(vec![2], vec![-1.0f64, 4.5]).unwrap(),
            Tensor::new(vec![2], vec![1.0f64, 9.0]).unwrap(),
        ]
    };
    let out = run_kernel(n.clone(), inputs(), 1).unwrap().remove(0);
    let v = out.as_slice::<f64>().unwrap();
    assert!(v[..5].iter().all(|&x| (-1.0..=1.0).contains(&x)) && v[5..].iter().all(|&x| (4.5..=9.0).contains(&x)));
    let r = run_kernel(
        n,
        vec![
            Tensor::vec(vec![2i32, 5]),
            Tensor::new(vec![1, 1], vec![0.0f64]).unwrap(),
            Tensor::scalar(1.0f64),
            Tensor::scalar(-1.0f64),
            Tensor::scalar(1.0f64),
        ],
        1,
    );
    expect_node_error(r, Code::InvalidArgument, "Input means should be a scalar or vector");
}
