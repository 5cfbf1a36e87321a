//! `RandomPoissonV2`, `RandomPoisson` and `StatelessRandomPoisson` beyond the golden cases
//! (`tests/golden/random_dists.json`): TensorFlow's values for a second run of a stateful
//! kernel, infinite and NaN rates, rates no output value can hold (TensorFlow loops forever
//! there; ferroflow returns), statistics of large draws, and errors. Expected values from
//! `scripts/golden/random_dists.py --print` (TensorFlow 2.21).

use ferroflow_core::{attr, Code, DataType, Status, Tensor};
use ferroflow_kernels::testutil::{node, run_kernel, seeded_node};

fn v2_node(r: DataType, out: DataType, seed: i64, seed2: i64) -> ferroflow_core::proto::NodeDef {
    seeded_node("RandomPoissonV2", &[("R", r), ("dtype", out), ("S", DataType::Int32)], seed, seed2)
}

fn stateless(shape: &[i32], seed: [i64; 2], lam: Tensor, out: DataType) -> Result<Tensor, Status> {
    let n = node(
        "StatelessRandomPoisson",
        &[
            ("Rtype", attr::ty(lam.dtype())),
            ("dtype", attr::ty(out)),
            ("T", attr::ty(DataType::Int32)),
            ("Tseed", attr::ty(DataType::Int64)),
        ],
    );
    Ok(run_kernel(n, vec![Tensor::vec(shape.to_vec()), Tensor::vec(seed.to_vec()), lam], 1)?.remove(0))
}

#[test]
fn stateful_runs_continue_tensorflows_stream() {
    // RandomPoissonV2(shape=[3], rate=[0, 2, 10, 250] float64, dtype=int64, seed=3,
    // seed2=4), run twice: Knuth's method below rate 10, transformed rejection from 10 up.
    let n = v2_node(DataType::Double, DataType::Int64, 3, 4);
    let rate = Tensor::vec(vec![0.0f64, 2.0, 10.0, 250.0]);
    let [a, b] = crate::common::run_twice(&n, &[Tensor::vec(vec![3i32]), rate]);
    assert_eq!(a.dims(), &[3, 4]);
    assert_eq!(a.as_slice::<i64>().unwrap(), [0, 2, 11, 269, 0, 1, 10, 264, 0, 2, 13, 243]);
    assert_eq!(b.as_slice::<i64>().unwrap(), [0, 2, 8, 254, 0, 3, 10, 252, 0, 1, 8, 239]);
}

#[test]
fn stateless_values_equal_tensorflows() {
    // StatelessRandomPoisson(shape=[3, 4], seed=[5, 6], lam=[0, 2, 10, 250] float32, int32).
    let out = stateless(&[3, 4], [5, 6], Tensor::vec(vec![0.0f32, 2.0, 10.0, 250.0]), DataType::Int32).unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [0, 3, 15, 259, 0, 1, 9, 241, 0, 3, 10, 264]);
}

#[test]
fn infinite_nan_and_unrepresentable_rates() {
    // TensorFlow: +inf gives the output type's infinity (0 for integers), -inf and negative
    // rates give 0.
    let rate = Tensor::vec(vec![f32::INFINITY, f32::NEG_INFINITY, -2.0]);
    let f = run_kernel(v2_node(DataType::Float, DataType::Float, 1, 2), vec![Tensor::vec(vec![2i32]), rate.clone()], 1)
        .unwrap();
    assert_eq!(f[0].as_slice::<f32>().unwrap(), [f32::INFINITY, 0.0, 0.0, f32::INFINITY, 0.0, 0.0]);
    let i =
        run_kernel(v2_node(DataType::Float, DataType::Int32, 1, 2), vec![Tensor::vec(vec![2i32]), rate], 1).unwrap();
    assert_eq!(i[0].as_slice::<i32>().unwrap(), [0; 6]);
    // TensorFlow never returns for a NaN rate, nor for rates whose samples no value of the
    // output type can hold (1e6 into half, 1e30 into int32): ferroflow gives NaN (the
    // integer conversion of NaN: the type's minimum).
    let nan = stateless(&[2, 1], [1, 2], Tensor::vec(vec![f64::NAN]), DataType::Float).unwrap();
    assert!(nan.as_slice::<f32>().unwrap().iter().all(|v| v.is_nan()));
    let half = stateless(&[2], [1, 2], Tensor::scalar(1e6f32), DataType::Half).unwrap();
    assert!(half.to_f64_vec().unwrap().iter().all(|v| v.is_nan()));
    let int = stateless(&[2], [1, 2], Tensor::scalar(1e30f64), DataType::Int32).unwrap();
    assert_eq!(int.as_slice::<i32>().unwrap(), [i32::MIN; 2]);
}

#[test]
fn large_draws_have_poisson_moments() {
    // 3 x 20,000 samples (drawn in parallel): mean and variance both the rate.
    let rates = [0.7f64, 4.0, 60.0];
    let out = stateless(&[20_000, 3], [7, 7], Tensor::vec(rates.to_vec()), DataType::Int64).unwrap();
    let v = out.as_slice::<i64>().unwrap();
    for (k, rate) in rates.into_iter().enumerate() {
        let xs: Vec<f64> = v.iter().skip(k).step_by(3).map(|&x| x as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64;
        assert!((mean - rate).abs() < 0.03 * rate.max(1.0), "rate {rate}: mean {mean}");
        assert!((var - rate).abs() < 0.08 * rate.max(1.0), "rate {rate}: variance {var}");
    }
}

#[test]
fn deprecated_v1_is_v2_with_one_type() {
    let v1 = seeded_node("RandomPoisson", &[("dtype", DataType::Double), ("S", DataType::Int32)], 3, 4);
    let inputs = vec![Tensor::vec(vec![3i32]), Tensor::vec(vec![0.0f64, 2.0, 10.0, 250.0])];
    let out = run_kernel(v1, inputs.clone(), 1).unwrap();
    let want = run_kernel(v2_node(DataType::Double, DataType::Double, 3, 4), inputs, 1).unwrap();
    assert_eq!(out, want);
    assert_eq!(out[0].to_f64_vec().unwrap(), [0.0, 2.0, 11.0, 269.0, 0.0, 1.0, 10.0, 264.0, 0.0, 2.0, 13.0, 243.0]);
}

#[test]
fn errors_name_what_is_wrong() {
    let suffix = stateless(&[4], [1, 2], Tensor::vec(vec![1.0f32, 2.0]), DataType::Int32).unwrap_err();
    assert!(
        suffix.code == Code::InvalidArgument && suffix.message.contains("must end with broadcasted shape"),
        "{suffix}"
    );
    let seed_n = node(
        "StatelessRandomPoisson",
        &[
            ("Rtype", attr::ty(DataType::Float)),
            ("dtype", attr::ty(DataType::Int32)),
            ("T", attr::ty(DataType::Int32)),
            ("Tseed", attr::ty(DataType::Int64)),
        ],
    );
    let seed =
        run_kernel(seed_n, vec![Tensor::vec(vec![2i32]), Tensor::vec(vec![1i64, 2, 3]), Tensor::scalar(1.0f32)], 1)
            .unwrap_err();
    assert!(seed.message.contains("seed must have shape [2]"), "{seed}");
    let wrong = run_kernel(
        v2_node(DataType::Float, DataType::Int64, 1, 1),
        vec![Tensor::vec(vec![2i32]), Tensor::vec(vec![1.0f64])],
        1,
    )
    .unwrap_err();
    assert!(wrong.message.contains("rate must be float, got double"), "{wrong}");
    let v1_int = seeded_node("RandomPoisson", &[("dtype", DataType::Int32), ("S", DataType::Int32)], 1, 1);
    let e = ferroflow_kernels::create_kernel(&v1_int).err().unwrap();
    assert!(e.code == Code::InvalidArgument && e.message.contains("half, float, double"), "{e}");
    let bool_out = ferroflow_kernels::create_kernel(&v2_node(DataType::Float, DataType::Bool, 1, 1)).err().unwrap();
    assert_eq!(bool_out.code, Code::InvalidArgument, "{bool_out}");
    // Zero samples: an empty [0, rates] result.
    let empty = run_kernel(
        v2_node(DataType::Float, DataType::Int64, 1, 1),
        vec![Tensor::vec(vec![0i32]), Tensor::vec(vec![1.0f32, 2.0])],
        1,
    )
    .unwrap();
    assert_eq!(empty[0].dims(), &[0, 2]);
}
