//! `StatelessRandomBinomial` beyond the golden cases (`tests/golden/random_dists.json`):
//! TensorFlow's values with broadcast parameters, NaN and infinite parameters, statistics of
//! large draws, and errors. Expected values from `scripts/golden/random_dists.py --print`
//! (TensorFlow 2.21).

use ferroflow_core::{attr, Code, DataType, Status, Tensor};
use ferroflow_kernels::testutil::{node, run_kernel};

fn binomial_node(t: DataType, out: DataType) -> ferroflow_core::proto::NodeDef {
    node(
        "StatelessRandomBinomial",
        &[
            ("T", attr::ty(t)),
            ("dtype", attr::ty(out)),
            ("S", attr::ty(DataType::Int32)),
            ("Tseed", attr::ty(DataType::Int64)),
        ],
    )
}

fn binomial(shape: &[i32], seed: [i64; 2], counts: Tensor, probs: Tensor, out: DataType) -> Result<Tensor, Status> {
    let n = binomial_node(counts.dtype(), out);
    Ok(run_kernel(n, vec![Tensor::vec(shape.to_vec()), Tensor::vec(seed.to_vec()), counts, probs], 1)?.remove(0))
}

#[test]
fn values_equal_tensorflows() {
    // counts [10, 100, 0, 50, 1e4], probs [0.3, 0.7, 0.5, 1, 0.02] (float64), int64 out,
    // shape [2, 5], seed [1, 2]: inversion, BTRS of 1 - p, count 0, p = 1, BTRS.
    let counts = Tensor::vec(vec![10.0f64, 100.0, 0.0, 50.0, 1e4]);
    let probs = Tensor::vec(vec![0.3f64, 0.7, 0.5, 1.0, 0.02]);
    let out = binomial(&[2, 5], [1, 2], counts, probs, DataType::Int64).unwrap();
    assert_eq!(out.as_slice::<i64>().unwrap(), [5, 63, 0, 50, 183, 5, 58, 0, 50, 207]);
    // counts [[4], [40]] by probs [0.25, 0.9] (float32, broadcast to [2, 2]), float32 out,
    // shape [2, 2, 2], seed [7, 8].
    let counts = Tensor::new(vec![2, 1], vec![4.0f32, 40.0]).unwrap();
    let out = binomial(&[2, 2, 2], [7, 8], counts, Tensor::vec(vec![0.25f32, 0.9]), DataType::Float).unwrap();
    assert_eq!(out.as_slice::<f32>().unwrap(), [1.0, 3.0, 10.0, 35.0, 0.0, 4.0, 8.0, 35.0]);
}

#[test]
fn nan_and_infinite_parameters() {
    // TensorFlow: a NaN prob gives NaN; an infinite count gives inf or NaN for p <= 0.5 (BTRS
    // accepts inf or inf - inf) and NaN above (count - k).
    let out =
        binomial(&[2, 3], [3, 3], Tensor::scalar(12.0f64), Tensor::vec(vec![0.0, 1.0, f64::NAN]), DataType::Double)
            .unwrap();
    let v = out.as_slice::<f64>().unwrap();
    assert_eq!(v[..2], [0.0, 12.0]);
    assert!(v[2].is_nan() && v[5].is_nan());
    let inf = binomial(&[2, 2], [3, 3], Tensor::scalar(f64::INFINITY), Tensor::vec(vec![0.3, 0.7]), DataType::Double)
        .unwrap();
    let v = inf.as_slice::<f64>().unwrap();
    assert!(v.iter().step_by(2).all(|&x| x == f64::INFINITY || x.is_nan()), "{v:?}");
    assert!(v[1].is_nan() && v[3].is_nan(), "{v:?}");
    // A NaN count makes TensorFlow's inversion loop forever; ferroflow gives NaN.
    let nan = binomial(&[2], [3, 3], Tensor::scalar(f64::NAN), Tensor::scalar(0.3f64), DataType::Double).unwrap();
    assert!(nan.as_slice::<f64>().unwrap().iter().all(|x| x.is_nan()));
}

#[test]
fn large_draws_have_binomial_moments() {
    // 3 x 20,000 samples (drawn in parallel): inversion (5 x 0.2), BTRS (60 x 0.35) and the
    // flipped BTRS (200 x 0.8).
    let (counts, probs) = ([5.0f64, 60.0, 200.0], [0.2f64, 0.35, 0.8]);
    let out =
        binomial(&[20_000, 3], [5, 5], Tensor::vec(counts.to_vec()), Tensor::vec(probs.to_vec()), DataType::Int32)
            .unwrap();
    let v = out.as_slice::<i32>().unwrap();
    for k in 0..3 {
        let (n, p) = (counts[k], probs[k]);
        let xs: Vec<f64> = v.iter().skip(k).step_by(3).map(|&x| x as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64;
        assert!((mean - n * p).abs() < 0.02 * n * p, "{n} x {p}: mean {mean}");
        assert!((var - n * p * (1.0 - p)).abs() < 0.08 * n * p * (1.0 - p), "{n} x {p}: variance {var}");
        assert!(xs.iter().all(|&x| (0.0..=n).contains(&x)));
    }
}

#[test]
fn errors_name_what_is_wrong() {
    let c = || Tensor::vec(vec![1.0f32, 2.0]);
    let seed_n = binomial_node(DataType::Float, DataType::Int64);
    let seed =
        run_kernel(seed_n, vec![Tensor::vec(vec![2i32]), Tensor::vec(vec![1i64, 2, 3]), c(), c()], 1).unwrap_err();
    assert!(seed.code == Code::InvalidArgument && seed.message.contains("seed must have shape [2], not [3]"), "{seed}");
    let bcast = binomial(&[4], [1, 2], c(), Tensor::vec(vec![0.5f32, 0.2, 0.1]), DataType::Int64).unwrap_err();
    assert!(bcast.message.contains("counts and probs must have compatible batch dimensions: [2] vs. [3]"), "{bcast}");
    let suffix = binomial(&[4], [1, 2], c(), Tensor::scalar(0.5f32), DataType::Int64).unwrap_err();
    assert!(suffix.message.contains("Shape passed in must end with broadcasted shape"), "{suffix}");
    let not_vec = run_kernel(
        binomial_node(DataType::Float, DataType::Int64),
        vec![Tensor::new(vec![1, 1], vec![2i32]).unwrap(), Tensor::vec(vec![1i64, 2]), c(), c()],
        1,
    )
    .unwrap_err();
    assert!(not_vec.message.contains("Input shape should be a vector, got shape: [1,1]"), "{not_vec}");
    // Integer parameters: allowed by the op, but TensorFlow has no kernel for them.
    let int = ferroflow_kernels::create_kernel(&binomial_node(DataType::Int32, DataType::Int64)).err().unwrap();
    assert_eq!(int.code, Code::NotFound, "{int}");
    let mixed = binomial(&[2], [1, 2], c(), Tensor::vec(vec![0.5f64, 0.5]), DataType::Int64).unwrap_err();
    assert!(mixed.message.contains("probs must be float, got double"), "{mixed}");
    // An empty output draws nothing.
    assert_eq!(binomial(&[0, 2], [1, 2], c(), c(), DataType::Int64).unwrap().dims(), &[0, 2]);
}
