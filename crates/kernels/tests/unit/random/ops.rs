use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{run_kernel, seeded_node};

fn rnd(op: &str, dtype: DataType, seed: i64, seed2: i64) -> NodeDef {
    seeded_node(op, &[("dtype", dtype), ("T", DataType::Int32)], seed, seed2)
}

fn run_twice(n: NodeDef, shape: Tensor) -> (Tensor, Tensor) {
    let [a, b] = crate::common::run_twice(&n, &[shape]);
    (a, b)
}

#[test]
fn seeded_uniform_matches_tensorflow_and_advances() {
    // TensorFlow 2.21: RandomUniform(shape=[7], float32, seed=1, seed2=2), run twice.
    let (a, b) = run_twice(rnd("RandomUniform", DataType::Float, 1, 2), Tensor::vec(vec![7i32]));
    let want_a = [0.40639675f32, 0.8575996, 0.05539584, 0.08587229, 0.4121536, 0.03663087, 0.65721333];
    let want_b = [0.4326129f32, 0.868968, 0.26664758, 0.6024519, 0.8833823, 0.24750876, 0.32722437];
    for (g, w) in a.as_slice::<f32>().unwrap().iter().zip(want_a) {
        assert!((g - w).abs() < 1e-7, "{g} vs {w}");
    }
    for (g, w) in b.as_slice::<f32>().unwrap().iter().zip(want_b) {
        assert!((g - w).abs() < 1e-7, "{g} vs {w}");
    }
}

#[test]
fn unseeded_runs_differ_and_stats_hold() {
    let n = 200_000usize;
    let shape = Tensor::vec(vec![n as i64]);
    let mut nd = rnd("RandomStandardNormal", DataType::Double, 0, 0);
    nd.attr.insert("T".into(), attr::ty(DataType::Int64));
    let (a, b) = run_twice(nd, shape.clone());
    assert_ne!(a, b);
    let v = a.as_slice::<f64>().unwrap();
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
    assert!(mean.abs() < 0.02 && (var.sqrt() - 1.0).abs() < 0.02, "mean {mean} var {var}");

    let mut nd = rnd("TruncatedNormal", DataType::Float, 5, 0);
    nd.attr.insert("T".into(), attr::ty(DataType::Int64));
    let (a, _) = run_twice(nd, shape.clone());
    let v = a.as_slice::<f32>().unwrap();
    assert!(v.iter().all(|x| x.abs() < 2.0));
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
    let sd = (v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    // Standard deviation of a standard normal truncated to (-2, 2).
    assert!(mean.abs() < 0.02 && (sd - 0.8796).abs() < 0.01, "mean {mean} sd {sd}");

    let mut nd = rnd("RandomUniform", DataType::Double, 0, 9);
    nd.attr.insert("T".into(), attr::ty(DataType::Int64));
    let (a, _) = run_twice(nd, shape);
    let v = a.as_slice::<f64>().unwrap();
    assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
    let mean = v.iter().sum::<f64>() / n as f64;
    assert!((mean - 0.5).abs() < 0.01);
}

#[test]
fn uniform_int_range_and_errors() {
    let n = seeded_node("RandomUniformInt", &[("Tout", DataType::Int64), ("T", DataType::Int32)], 3, 4);
    let out = run_kernel(n.clone(), vec![Tensor::vec(vec![1000i32]), Tensor::scalar(-3i64), Tensor::scalar(5i64)], 1)
        .unwrap();
    let v = out[0].as_slice::<i64>().unwrap();
    assert!(v.iter().all(|x| (-3..5).contains(x)));
    assert!((-3..5).all(|k| v.contains(&k)));
    let e = run_kernel(n.clone(), vec![Tensor::vec(vec![2i32]), Tensor::scalar(5i64), Tensor::scalar(5i64)], 1)
        .unwrap_err();
    assert!(e.message.contains("Need minval < maxval: 5 >= 5"), "{e}");
    let empty = run_kernel(n, vec![Tensor::vec(vec![0i32]), Tensor::scalar(5i64), Tensor::scalar(5i64)], 1).unwrap();
    assert_eq!(empty[0].num_elements(), 0);
}

#[test]
fn bad_shapes_are_errors() {
    let n = rnd("RandomUniform", DataType::Float, 1, 1);
    let e = run_kernel(n.clone(), vec![Tensor::vec(vec![2i32, -1])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    let e = run_kernel(n, vec![Tensor::scalar(2i32)], 1).unwrap_err();
    assert!(e.message.contains("must be a vector"), "{e}");
    let e = ferroflow_kernels::create_kernel(&rnd("RandomUniform", DataType::Int32, 1, 1)).err().unwrap();
    assert_eq!(e.code, Code::Unimplemented);
}
