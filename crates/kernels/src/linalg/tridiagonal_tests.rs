use super::*;
use crate::testutil::{node, run_kernel};
use ferroflow_core::attr;

fn solve_node(piv: bool, perturb: bool) -> NodeDef {
    node(
        "TridiagonalSolve",
        &[
            ("T", attr::ty(DataType::Double)),
            ("partial_pivoting", attr::bool(piv)),
            ("perturb_singular", attr::bool(perturb)),
        ],
    )
}

fn t(dims: &[usize], v: Vec<f64>) -> Tensor {
    Tensor::new(dims.to_vec(), v).unwrap()
}

/// `A·x` for the compact diagonals of one system.
fn apply(dg: &[f64], x: &[f64], n: usize, k: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * k];
    for i in 0..n {
        for j in 0..k {
            let mut v = dg[n + i] * x[i * k + j];
            if i + 1 < n {
                v += dg[i] * x[(i + 1) * k + j];
            }
            if i > 0 {
                v += dg[2 * n + i] * x[(i - 1) * k + j];
            }
            out[i * k + j] = v;
        }
    }
    out
}

#[test]
fn solves_in_every_mode() {
    // A small diagonal makes pivoting swap rows.
    let dg = vec![2.0, -1.0, 0.5, 9.0, 0.1, 3.0, 1.0, 4.0, 9.0, 1.5, -2.0, 0.7];
    let b = vec![1.0, 2.0, -1.0, 0.5, 3.0, 0.0, 2.0, 1.0];
    for (piv, perturb) in [(false, false), (true, false), (true, true)] {
        let out = run_kernel(solve_node(piv, perturb), vec![t(&[3, 4], dg.clone()), t(&[4, 2], b.clone())], 1).unwrap();
        let x = out[0].as_slice::<f64>().unwrap();
        let back = apply(&dg, x, 4, 2);
        back.iter().zip(&b).for_each(|(a, w)| assert!((a - w).abs() < 1e-12, "{piv} {perturb}: {a} vs {w}"));
    }
}

#[test]
fn singular_systems_give_nan_or_perturbed_values() {
    let dg = vec![1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0];
    let ones = t(&[3, 1], vec![1.0; 3]);
    for piv in [false, true] {
        let out = run_kernel(solve_node(piv, false), vec![t(&[3, 3], dg.clone()), ones.clone()], 1).unwrap();
        assert!(out[0].as_slice::<f64>().unwrap().iter().all(|v| v.is_nan()));
    }
    // TensorFlow 2.21 gives [1, 1, 0] here.
    let out = run_kernel(solve_node(true, true), vec![t(&[3, 3], dg), ones], 1).unwrap();
    assert_eq!(out[0].as_slice::<f64>().unwrap(), &[1.0, 1.0, 0.0]);
}

#[test]
fn bad_shapes_and_attrs_are_errors() {
    let e = run_kernel(solve_node(true, false), vec![t(&[2, 3], vec![1.0; 6]), t(&[3, 1], vec![1.0; 3])], 1);
    assert!(e.unwrap_err().to_string().contains("3 rows"));
    let e = run_kernel(solve_node(true, false), vec![t(&[3, 3], vec![1.0; 9]), t(&[2, 3, 1], vec![1.0; 6])], 1);
    assert!(e.unwrap_err().to_string().contains("same rank"));
    let e = run_kernel(solve_node(false, true), vec![t(&[3, 3], vec![1.0; 9]), t(&[3, 1], vec![1.0; 3])], 1);
    assert!(e.unwrap_err().to_string().contains("perturb_singular"));
}

#[test]
fn tridiagonal_matmul() {
    let n = node("TridiagonalMatMul", &[("T", attr::ty(DataType::Double))]);
    let (sup, d, sub) =
        (t(&[1, 3], vec![1.0, 2.0, 9.0]), t(&[1, 3], vec![3.0, 4.0, 5.0]), t(&[1, 3], vec![9.0, 6.0, 7.0]));
    let rhs = t(&[3, 1], vec![1.0, 10.0, 100.0]);
    let out = run_kernel(n.clone(), vec![sup.clone(), d.clone(), sub.clone(), rhs], 1).unwrap();
    assert_eq!(out[0].as_slice::<f64>().unwrap(), &[13.0, 246.0, 570.0]);
    let e = run_kernel(n, vec![sup, d, sub, t(&[4, 1], vec![1.0; 4])], 1).unwrap_err();
    assert!(e.to_string().contains("Invalid superdiagonal shape"), "{e}");
}
