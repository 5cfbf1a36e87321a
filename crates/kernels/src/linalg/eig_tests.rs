//! `Eig` against TensorFlow 2.21 (scripts/golden/eig.py, tests/data/linalg/eig.json):
//! eigenvalues as sets, eigenvectors up to a phase, residuals A v = λ v.

use ferroflow_core::{attr, Code, DataType, Tensor, C128, C64};
use serde_json::Value;

use super::{eig, C};
use crate::testutil::{node, run_kernel};

fn golden() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/linalg/eig.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn cs(v: &Value) -> Vec<C> {
    v.as_array().unwrap().iter().map(|p| C::new(p[0].as_f64().unwrap(), p[1].as_f64().unwrap())).collect()
}

fn input(case: &Value) -> Tensor {
    let dims: Vec<usize> = case["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let v = cs(&case["input"]);
    match case["dtype"].as_str().unwrap() {
        "float64" => Tensor::new(dims, v.iter().map(|z| z.re).collect::<Vec<f64>>()),
        "float32" => Tensor::new(dims, v.iter().map(|z| z.re as f32).collect::<Vec<f32>>()),
        "complex64" => Tensor::new(dims, v.iter().map(|z| C64::new(z.re as f32, z.im as f32)).collect::<Vec<_>>()),
        _ => Tensor::new(dims, v),
    }
    .unwrap()
}

fn run(x: Tensor, compute_v: bool) -> Result<(Vec<C>, Vec<C>), ferroflow_core::Status> {
    let out = if matches!(x.dtype(), DataType::Float | DataType::Complex64) {
        DataType::Complex64
    } else {
        DataType::Complex128
    };
    let n = node("Eig", &[("T", attr::ty(x.dtype())), ("Tout", attr::ty(out)), ("compute_v", attr::bool(compute_v))]);
    let r = run_kernel(n, vec![x], 2)?;
    let wide = |t: &Tensor| -> Vec<C> {
        match t.dtype() {
            DataType::Complex64 => {
                t.as_slice::<C64>().unwrap().iter().map(|z| C::new(f64::from(z.re), f64::from(z.im))).collect()
            }
            _ => t.as_slice::<C128>().unwrap().to_vec(),
        }
    };
    Ok((wide(&r[0]), wide(&r[1])))
}

#[test]
fn eigenvalues_and_vectors_match_tensorflow() {
    let g = golden();
    let cases = g["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 25);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let x = input(case);
        let single = matches!(x.dtype(), DataType::Float | DataType::Complex64);
        let n = *x.dims().last().unwrap();
        let a = cs(&case["input"]);
        let (e, v) = run(x.clone(), true).unwrap();
        let (e_only, v_none) = run(x, false).unwrap();
        assert!(v_none.is_empty(), "{name}");
        let (want_e, want_v) = (cs(&case["e"]), cs(&case["v"]));
        assert_eq!(e.len(), want_e.len(), "{name}");
        let scale = a.iter().map(|z| z.norm()).fold(1.0f64, f64::max);
        let tol = if single { 2e-4 } else { 1e-9 } * scale;
        for (b, ((eb, vb), (we, wv))) in
            e.chunks(n).zip(v.chunks(n * n)).zip(want_e.chunks(n).zip(want_v.chunks(n * n))).enumerate()
        {
            let ab = &a[b * n * n..(b + 1) * n * n];
            // Eigenvalues as a set: each of TensorFlow's matched to one of ours.
            let mut used = vec![false; n];
            for (k, w) in we.iter().enumerate() {
                let near_jordan = name == "near_jordan" || name == "repeated";
                let t = if near_jordan { 1e-1 } else { tol };
                let m = (0..n)
                    .filter(|&j| !used[j])
                    .min_by(|&i, &j| (eb[i] - w).norm().partial_cmp(&(eb[j] - w).norm()).unwrap());
                let m = m.unwrap();
                assert!((eb[m] - w).norm() <= t, "{name}[{b}] eigenvalue {k}: TF {w}, ours {eb:?}");
                used[m] = true;
                // Unit vectors equal up to phase where the eigenvalue is simple.
                let simple = we.iter().enumerate().all(|(j, o)| j == k || (o - w).norm() > 1e-3 * scale);
                if simple && !near_jordan {
                    let dot: C = (0..n).map(|i| wv[i * n + k].conj() * vb[i * n + m]).sum();
                    assert!((dot.norm() - 1.0).abs() < if single { 1e-3 } else { 1e-7 }, "{name}: |<v_tf, v>| = {dot}");
                }
            }
            assert_eq!(&e_only[b * n..(b + 1) * n], eb, "{name}: eigenvalues without vectors");
            for k in 0..n {
                let norm: f64 = (0..n).map(|i| vb[i * n + k].norm_sqr()).sum::<f64>().sqrt();
                assert!((norm - 1.0).abs() < 1e-5, "{name}: column {k} has norm {norm}");
                for i in 0..n {
                    let av: C = (0..n).map(|j| ab[i * n + j] * vb[j * n + k]).sum();
                    let r = (av - eb[k] * vb[i * n + k]).norm();
                    assert!(r <= tol * 10.0 * n as f64, "{name}: residual {r} at ({i}, {k})");
                }
            }
        }
    }
}

#[test]
fn invalid_inputs_are_tensorflows_errors() {
    let g = golden();
    let want = g["errors"]["nan"]["message"].as_str().unwrap();
    let err = run(Tensor::new(vec![2, 2], vec![f64::NAN, 1.0, 2.0, 3.0]).unwrap(), true).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
    assert!(err.message.contains(want), "{err}");
    // A NaN above the diagonal of a triangular matrix needs no sweep: NaN vector, as TF.
    let (e, v) = run(Tensor::new(vec![2, 2], vec![1.0, f64::NAN, 0.0, 1.0]).unwrap(), true).unwrap();
    assert_eq!(e, [C::new(1.0, 0.0), C::new(1.0, 0.0)]);
    assert_eq!((v[0], v[2]), (C::new(1.0, 0.0), C::new(0.0, 0.0)));
    assert!(v[1].re.is_nan() && v[3].re.is_nan());
    // Empty matrices and batches.
    let (e, v) = run(Tensor::new(vec![3, 0, 0], Vec::<f32>::new()).unwrap(), true).unwrap();
    assert!(e.is_empty() && v.is_empty());
    // Non-square and mismatched output types.
    assert!(run(Tensor::new(vec![2, 3], vec![0.0f64; 6]).unwrap(), true).is_err());
    let n = node("Eig", &[("T", attr::ty(DataType::Float)), ("Tout", attr::ty(DataType::Complex128))]);
    assert!(run_kernel(n, vec![Tensor::new(vec![1, 1], vec![1.0f32]).unwrap()], 2).is_err());
}

#[test]
fn triangular_order_is_the_diagonal() {
    let a: Vec<C> = [2.0, 5.0, 1.0, 0.0, -3.0, 4.0, 0.0, 0.0, 1.0].iter().map(|&x| C::new(x, 0.0)).collect();
    let (e, _) = eig(&a, 3, false).unwrap();
    assert_eq!(e, [C::new(2.0, 0.0), C::new(-3.0, 0.0), C::new(1.0, 0.0)]);
}
