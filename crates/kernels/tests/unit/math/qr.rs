use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::math::qr::qr;
use ferroflow_kernels::testutil::{node, run_kernel};

fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|t| a[i * k + t] * b[t * n + j]).sum();
        }
    }
    c
}

#[test]
fn reconstructs_and_is_orthogonal() {
    for (m, n, full) in [(4, 3, false), (3, 4, false), (4, 3, true), (5, 5, false), (1, 1, false)] {
        let a: Vec<f64> = (0..m * n).map(|i| ((i * 7 % 11) as f64 - 5.0) / 3.0).collect();
        let (q, r) = qr(&a, m, n, full);
        let p = if full { m } else { m.min(n) };
        let back = matmul(&q, &r, m, p, n);
        for (x, y) in back.iter().zip(&a) {
            assert!((x - y).abs() < 1e-12, "{m}x{n}: {x} vs {y}");
        }
        for i in 0..p {
            for j in 0..p {
                let d: f64 = (0..m).map(|t| q[t * p + i] * q[t * p + j]).sum();
                assert!((d - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
            for j in 0..i.min(n) {
                assert_eq!(r[i * n + j], 0.0);
            }
        }
    }
}

#[test]
fn tensorflow_values() {
    // TensorFlow 2.21: tf.linalg.qr([[1., 2.], [3., 4.], [5., 6.]]).
    let x = Tensor::new(vec![3, 2], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap();
    let n = node("Qr", &[("T", attr::ty(DataType::Float)), ("full_matrices", attr::bool(false))]);
    let out = run_kernel(n, vec![x], 2).unwrap();
    let q = out[0].as_slice::<f32>().unwrap();
    let r = out[1].as_slice::<f32>().unwrap();
    let want_q = [-0.1690308, 0.897085, -0.5070925, 0.2760267, -0.8451542, -0.34503305];
    let want_r = [-5.91608, -7.437357, 0.0, 0.82807845];
    for (g, w) in q.iter().zip(want_q).chain(r.iter().zip(want_r)) {
        assert!((g - w).abs() < 1e-5, "{g} vs {w}");
    }
}
