//! `SelfAdjointEigV2` and `Svd` through the kernel registry: TensorFlow 2.21's values
//! (vectors up to sign, which TensorFlow's solvers leave to their iteration),
//! reconstructions, orthonormality, its shapes and its answers for odd input.

use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn eig(x: Tensor, compute_v: bool) -> Result<Vec<Tensor>, ferroflow_core::Status> {
    let n = node("SelfAdjointEigV2", &[("T", attr::ty(x.dtype())), ("compute_v", attr::bool(compute_v))]);
    run_kernel(n, vec![x], 2)
}

fn svd(x: Tensor, compute_uv: bool, full: bool) -> Vec<Tensor> {
    let n = node(
        "Svd",
        &[("T", attr::ty(x.dtype())), ("compute_uv", attr::bool(compute_uv)), ("full_matrices", attr::bool(full))],
    );
    run_kernel(n, vec![x], 3).unwrap()
}

fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec().unwrap()
}

/// A seeded matrix with entries in [-1, 1).
fn matrix(rows: usize, cols: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..rows * cols)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|t| a[i * k + t] * b[t * n + j]).sum();
        }
    }
    c
}

fn transpose(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    (0..n * m).map(|t| a[(t % m) * n + t / m]).collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "{what}: {got:?} vs {want:?}");
    }
}

/// The columns of the row-major `rows x cols` `q` are orthonormal.
fn assert_orthonormal(q: &[f64], rows: usize, cols: usize, what: &str) {
    let qtq = matmul(&transpose(q, rows, cols), q, cols, rows, cols);
    let id: Vec<f64> = (0..cols * cols).map(|t| if t / cols == t % cols { 1.0 } else { 0.0 }).collect();
    assert_close(&qtq, &id, 1e-12, what);
}

/// Column `j` of `got` equals column `j` of `want` up to sign.
fn assert_cols_up_to_sign(got: &[f64], want: &[f64], rows: usize, cols: usize, tol: f64) {
    for j in 0..cols {
        let g: Vec<f64> = (0..rows).map(|i| got[i * cols + j]).collect();
        let w: Vec<f64> = (0..rows).map(|i| want[i * cols + j]).collect();
        let sign = if g.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() < 0.0 { -1.0 } else { 1.0 };
        let g: Vec<f64> = g.iter().map(|x| sign * x).collect();
        assert_close(&g, &w, tol, &format!("column {j}"));
    }
}

#[test]
fn eigh_tensorflow_values() {
    // TensorFlow 2.21: tf.linalg.eigh of the float32 tridiagonal [[2,1,0],[1,2,1],[0,1,2]].
    let x = Tensor::new(vec![3usize, 3], vec![2.0f32, 1., 0., 1., 2., 1., 0., 1., 2.]).unwrap();
    let o = eig(x, true).unwrap();
    assert_eq!(o[0].dtype(), DataType::Float);
    assert_close(&f64s(&o[0]), &[0.5857864, 2.0000002, 3.4142137], 1e-6, "e");
    let want_v = [0.5, -0.70710689, 0.49999991, -0.70710683, -6.7e-8, 0.70710683, 0.49999997, 0.70710683, 0.50000006];
    assert_cols_up_to_sign(&f64s(&o[1]), &want_v, 3, 3, 1e-6);
    // Only the lower triangle is read: TensorFlow gives the eigen-pairs of [[2,1],[1,3]].
    let x = Tensor::new(vec![2usize, 2], vec![2.0f64, 100., 1., 3.]).unwrap();
    let o = eig(x, true).unwrap();
    assert_close(&f64s(&o[0]), &[1.38196601, 3.61803399], 1e-8, "e");
    assert_cols_up_to_sign(&f64s(&o[1]), &[-0.85065081, -0.52573111, 0.52573111, -0.85065081], 2, 2, 1e-8);
}

#[test]
fn eigh_reconstructs_batches() {
    for n in [1usize, 2, 5, 17, 40] {
        let r = matrix(n, n, n as u64);
        let a: Vec<f64> = (0..n * n).map(|t| r[t] + r[(t % n) * n + t / n]).collect();
        let mut two = a.clone();
        two.extend(a.iter().map(|x| -3.0 * x));
        let o = eig(Tensor::new(vec![2, n, n], two.clone()).unwrap(), true).unwrap();
        assert_eq!(o[0].dims(), &[2, n]);
        assert_eq!(o[1].dims(), &[2, n, n]);
        let (e, v) = (f64s(&o[0]), f64s(&o[1]));
        for b in 0..2 {
            let (eb, vb, ab) =
                (&e[b * n..(b + 1) * n], &v[b * n * n..(b + 1) * n * n], &two[b * n * n..(b + 1) * n * n]);
            assert!(eb.windows(2).all(|w| w[0] <= w[1]), "ascending: {eb:?}");
            assert_orthonormal(vb, n, n, "v");
            let av = matmul(ab, vb, n, n, n);
            let ve: Vec<f64> = (0..n * n).map(|t| vb[t] * eb[t % n]).collect();
            assert_close(&av, &ve, 1e-11 * n as f64, "a·v = v·diag(e)");
        }
        let only_e = eig(Tensor::new(vec![2, n, n], two).unwrap(), false).unwrap();
        assert_eq!(f64s(&only_e[0]), e);
        assert_eq!(only_e[1].dims(), &[0]);
    }
}

#[test]
fn eigh_odd_input() {
    let nan = Tensor::new(vec![2usize, 2], vec![f32::NAN, 1., 1., 2.]).unwrap();
    let e = eig(nan, true).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Self-adjoint eigen decomposition was not successful"), "{}", e.message);
    // TensorFlow: NaN eigenvalues and the identity for an infinite input.
    let inf = Tensor::new(vec![2usize, 2], vec![f32::INFINITY, 1., 1., 2.]).unwrap();
    let o = eig(inf, true).unwrap();
    assert!(f64s(&o[0]).iter().all(|x| x.is_nan()));
    assert_eq!(f64s(&o[1]), [1., 0., 0., 1.]);
    let o = eig(Tensor::new(vec![0usize, 0], Vec::<f64>::new()).unwrap(), true).unwrap();
    assert_eq!((o[0].dims(), o[1].dims()), (&[0usize][..], &[0usize, 0][..]));
    let e = eig(Tensor::new(vec![2usize, 3], vec![0f64; 6]).unwrap(), true).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    let c = node("SelfAdjointEigV2", &[("T", attr::ty(DataType::Complex64)), ("compute_v", attr::bool(true))]);
    let x = Tensor::new(vec![1usize, 1], vec![ferroflow_core::C64::new(1.0, 0.0)]).unwrap();
    assert_eq!(run_kernel(c, vec![x], 2).unwrap_err().code, Code::Unimplemented);
}

#[test]
fn svd_tensorflow_values() {
    // TensorFlow 2.21: tf.linalg.svd([[1., 2.], [3., 4.], [5., 6.]]) in float64.
    let x = Tensor::new(vec![3usize, 2], vec![1.0f64, 2., 3., 4., 5., 6.]).unwrap();
    let o = svd(x, true, false);
    assert_close(&f64s(&o[0]), &[9.52551809, 0.51430058], 1e-8, "s");
    let want_u = [0.2298477, -0.88346102, 0.52474482, -0.24078249, 0.81964194, 0.40189603];
    assert_cols_up_to_sign(&f64s(&o[1]), &want_u, 3, 2, 1e-8);
    assert_cols_up_to_sign(&f64s(&o[2]), &[0.61962948, 0.78489445, 0.78489445, -0.61962948], 2, 2, 1e-8);
}

#[test]
fn svd_reconstructs_every_shape() {
    let rank_one: Vec<f64> = (0..12).map(|t| ((t / 4) as f64 + 1.0) * ((t % 4) as f64 - 1.5)).collect();
    let cases = [
        (4usize, 3usize, matrix(4, 3, 1)),
        (3, 4, matrix(3, 4, 2)),
        (5, 5, matrix(5, 5, 3)),
        (1, 6, matrix(1, 6, 4)),
        (40, 23, matrix(40, 23, 5)),
        (150, 3, matrix(150, 3, 6)),
        (2, 90, matrix(2, 90, 7)),
        (3, 4, rank_one),
        (3, 2, vec![0.0; 6]),
    ];
    for (m, n, a) in cases {
        let p = m.min(n);
        for full in [false, true] {
            let o = svd(Tensor::new(vec![m, n], a.clone()).unwrap(), true, full);
            let (uc, vc) = if full { (m, n) } else { (p, p) };
            assert_eq!((o[0].dims(), o[1].dims(), o[2].dims()), (&[p][..], &[m, uc][..], &[n, vc][..]));
            let (s, u, v) = (f64s(&o[0]), f64s(&o[1]), f64s(&o[2]));
            assert!(s.windows(2).all(|w| w[0] >= w[1]) && s.iter().all(|&x| x >= 0.0), "{s:?}");
            assert_orthonormal(&u, m, uc, &format!("u of {m}x{n}"));
            assert_orthonormal(&v, n, vc, &format!("v of {m}x{n}"));
            let us: Vec<f64> = (0..m * p).map(|t| u[(t / p) * uc + t % p] * s[t % p]).collect();
            let vt: Vec<f64> = (0..p * n).map(|t| v[(t % n) * vc + t / n]).collect();
            assert_close(&matmul(&us, &vt, m, p, n), &a, 1e-12 * (m + n) as f64, &format!("u·s·vᵀ of {m}x{n}"));
        }
        let only = svd(Tensor::new(vec![m, n], a.clone()).unwrap(), false, false);
        let full_s = f64s(&svd(Tensor::new(vec![m, n], a).unwrap(), true, false)[0]);
        assert_eq!(f64s(&only[0]), full_s);
        assert_eq!((only[1].dims(), only[2].dims()), (&[0usize][..], &[0usize][..]));
    }
}

#[test]
fn svd_batches_empty_and_odd_input() {
    let a = matrix(2 * 3 * 2, 1, 9);
    let o = svd(Tensor::new(vec![2usize, 3, 2], a.clone()).unwrap(), true, false);
    for b in 0..2 {
        let one = svd(Tensor::new(vec![3usize, 2], a[b * 6..(b + 1) * 6].to_vec()).unwrap(), true, false);
        assert_eq!(&f64s(&o[0])[b * 2..(b + 1) * 2], &f64s(&one[0])[..]);
        assert_eq!(&f64s(&o[1])[b * 6..(b + 1) * 6], &f64s(&one[1])[..]);
    }
    // TensorFlow: a 3x0 matrix has no singular values; full_matrices gives u = I.
    let o = svd(Tensor::new(vec![3usize, 0], Vec::<f32>::new()).unwrap(), true, true);
    assert_eq!((o[0].dims(), o[1].dims(), o[2].dims()), (&[0usize][..], &[3usize, 3][..], &[0usize, 0][..]));
    assert_eq!(f64s(&o[1]), [1., 0., 0., 0., 1., 0., 0., 0., 1.]);
    let o = svd(Tensor::new(vec![0usize, 3, 2], Vec::<f32>::new()).unwrap(), true, true);
    assert_eq!((o[0].dims(), o[1].dims(), o[2].dims()), (&[0usize, 2][..], &[0usize, 3, 3][..], &[0usize, 2, 2][..]));
    // TensorFlow: NaN everywhere for a non-finite input.
    let o = svd(Tensor::new(vec![2usize, 2], vec![f32::NAN, 1., 1., 2.]).unwrap(), true, false);
    assert!(o.iter().all(|t| f64s(t).iter().all(|x| x.is_nan())));
    let big = svd(Tensor::new(vec![2usize, 2], vec![1e300f64, 0., 0., 1e-300]).unwrap(), false, false);
    assert_close(&f64s(&big[0]), &[1e300, 0.0], 1e286, "no overflow");
}
