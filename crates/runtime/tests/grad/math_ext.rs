//! Numeric checks (float64, central differences) of the gradients of the math_ext family:
//! trigonometric, hyperbolic, error-function, gamma-family and Bessel unary ops, the broadcasting
//! binary ops and special functions, L2Loss, the smooth/leaky activations and the second
//! derivatives through their gradient ops.

use crate::util::*;
use ferroflow_core::Tensor;
use ferroflow_graph::{gradients, ops};

/// The seed of every unary case's input.
const SEED: u64 = 7;

#[test]
fn trigonometric_and_hyperbolic() {
    unary_cases(
        &[
            ("Expm1", ops::expm1, -2.0, 2.0),
            ("Sin", ops::sin, -3.0, 3.0),
            ("Cos", ops::cos, -3.0, 3.0),
            ("Tan", ops::tan, -1.2, 1.2),
            ("Asin", ops::asin, -0.9, 0.9),
            ("Acos", ops::acos, -0.9, 0.9),
            ("Atan", ops::atan, -3.0, 3.0),
            ("Sinh", ops::sinh, -2.0, 2.0),
            ("Cosh", ops::cosh, -2.0, 2.0),
            ("Asinh", ops::asinh, -3.0, 3.0),
            ("Acosh", ops::acosh, 1.2, 4.0),
            ("Atanh", ops::atanh, -0.9, 0.9),
        ],
        SEED,
        &[],
    );
}

#[test]
fn error_and_gamma_functions() {
    unary_cases(
        &[
            ("Erf", ops::erf, -2.0, 2.0),
            ("Erfc", ops::erfc, -2.0, 2.0),
            ("Erfinv", ops::erfinv, -0.9, 0.9),
            ("Ndtri", ops::ndtri, 0.05, 0.95),
            ("Lgamma", ops::lgamma, 0.3, 5.0),
            ("Digamma", ops::digamma, 0.3, 5.0),
        ],
        SEED,
        &[],
    );
    // lgamma and digamma between the poles.
    unary_cases(
        &[("Lgamma negative", ops::lgamma, -2.9, -2.1), ("Digamma negative", ops::digamma, -0.9, -0.1)],
        SEED,
        &[],
    );
    assert_grad("L2Loss", |s, xs| ops::l2_loss(s, x(xs, 0)), &[rand(&[3, 4], 3)], &[0]);
    for (axes, keep) in [(vec![1i32], false), (vec![0, -1], true), (vec![0], false)] {
        assert_grad(
            &format!("EuclideanNorm {axes:?} {keep}"),
            |s, xs| ops::euclidean_norm(s, x(xs, 0), i32s(s, &axes), keep),
            &[rand(&[3, 4], 5)],
            &[0],
        );
    }
}

/// The modified Bessel functions, on both sides of 0 and across the branch point at
/// |x| = 30 (series below, asymptotic expansion above); then at exactly 0, where the
/// gradients of `I1`/`I1e` take their limit ½.
#[test]
fn bessel_functions() {
    // 0 is a kink of the scaled functions (|x| in the exponent): keep away from it.
    unary_cases(
        &[
            ("BesselI0", ops::bessel_i0, -4.0, 4.0),
            ("BesselI0e", ops::bessel_i0e, -4.0, 4.0),
            ("BesselI1", ops::bessel_i1, -4.0, 4.0),
            ("BesselI1e", ops::bessel_i1e, -4.0, 4.0),
            ("BesselI0e large", ops::bessel_i0e, 29.0, 31.0),
            ("BesselI1e large", ops::bessel_i1e, -31.0, -29.0),
        ],
        SEED,
        &[0.0],
    );
    for (name, f) in [("BesselI1 at 0", ops::bessel_i1 as Unary), ("BesselI1e at 0", ops::bessel_i1e)] {
        let zero = Tensor::new(vec![1usize], vec![0.0f64]).unwrap();
        assert_grad(name, |s, xs| f(s, x(xs, 0)), &[zero], &[0]);
    }
}

/// Checks a binary op with its operands broadcast both ways.
fn binary(name: &str, f: Binary, a: (f64, f64, &[f64]), b: (f64, f64, &[f64]), diff: &[usize]) {
    let shapes: [(&[usize], &[usize]); 4] = [(&[2, 3], &[2, 3]), (&[2, 3], &[3]), (&[2, 1], &[1, 3]), (&[], &[2])];
    for (i, (sa, sb)) in shapes.into_iter().enumerate() {
        let va = values(sa, 11 + i as u64, a.0, a.1, a.2, 0.1);
        let vb = values(sb, 23 + i as u64, b.0, b.1, b.2, 0.1);
        assert_grad(&format!("{name} {sa:?} {sb:?}"), |s, xs| f(s, x(xs, 0), x(xs, 1)), &[va, vb], diff);
    }
}

#[test]
fn binary_math() {
    binary("Atan2", ops::atan2, (-2.0, 2.0, &[0.0]), (-2.0, 2.0, &[0.0]), &[0, 1]);
    binary("Xlogy", ops::xlogy, (-2.0, 2.0, &[0.0]), (0.2, 3.0, &[]), &[0, 1]);
    binary("Xlog1py", ops::xlog1py, (-2.0, 2.0, &[0.0]), (-0.5, 3.0, &[]), &[0, 1]);
    binary("Xdivy", ops::xdivy, (-2.0, 2.0, &[0.0]), (0.5, 3.0, &[]), &[0, 1]);
    binary("MulNoNan", ops::mul_no_nan, (-2.0, 2.0, &[]), (-2.0, 2.0, &[0.0]), &[0, 1]);
    binary("NextAfter", ops::next_after, (-2.0, 2.0, &[]), (-2.0, 2.0, &[]), &[0, 1]);
}

#[test]
fn special_functions() {
    binary("Igamma", ops::igamma, (0.5, 5.0, &[]), (0.2, 6.0, &[]), &[0, 1]);
    binary("Igammac", ops::igammac, (0.5, 5.0, &[]), (0.2, 6.0, &[]), &[0, 1]);
    binary("Zeta", ops::zeta, (1.5, 4.0, &[]), (0.5, 3.0, &[]), &[1]);
    let n = Tensor::new(vec![2usize, 1], vec![1.0f64, 2.0]).unwrap();
    let q = values(&[2, 3], 5, 0.5, 3.0, &[], 0.0);
    assert_grad("Polygamma", |s, xs| ops::polygamma(s, x(xs, 0), x(xs, 1)), &[n, q], &[1]);
    let a = values(&[2, 3], 1, 0.5, 4.0, &[], 0.0);
    let b = values(&[2, 3], 2, 0.5, 4.0, &[], 0.0);
    let xv = values(&[2, 3], 3, 0.1, 0.9, &[], 0.0);
    assert_grad("Betainc", |s, xs| ops::betainc(s, x(xs, 0), x(xs, 1), x(xs, 2)), &[a, b.clone(), xv], &[2]);
    // A scalar x broadcast against a and b: its gradient is summed.
    let sa = Tensor::scalar(2.5f64);
    let sx = Tensor::scalar(0.3f64);
    assert_grad("Betainc scalar x", |s, xs| ops::betainc(s, x(xs, 0), x(xs, 1), x(xs, 2)), &[sa, b, sx], &[2]);
}

#[test]
fn activations() {
    let v = values(&[2, 3], 9, -3.0, 3.0, &[0.0], 0.1);
    assert_grad("Softplus", |s, xs| ops::softplus(s, x(xs, 0)), std::slice::from_ref(&v), &[0]);
    assert_grad("Softsign", |s, xs| ops::softsign(s, x(xs, 0)), std::slice::from_ref(&v), &[0]);
    assert_grad("Selu", |s, xs| ops::selu(s, x(xs, 0)), std::slice::from_ref(&v), &[0]);
    for alpha in [0.2f32, 1.5, -0.3] {
        assert_grad("LeakyRelu", |s, xs| ops::leaky_relu(s, x(xs, 0), alpha), std::slice::from_ref(&v), &[0]);
    }
}

#[test]
fn activation_second_derivatives() {
    let dy = rand(&[2, 3], 4);
    let f = values(&[2, 3], 9, -3.0, 3.0, &[0.0], 0.1);
    let both = [dy, f];
    assert_grad("SoftplusGrad", |s, xs| ops::softplus_grad(s, x(xs, 0), x(xs, 1)), &both, &[0, 1]);
    assert_grad("SeluGrad", |s, xs| ops::selu_grad(s, x(xs, 0), x(xs, 1)), &both, &[0, 1]);
    assert_grad("LeakyReluGrad", |s, xs| ops::leaky_relu_grad(s, x(xs, 0), x(xs, 1), 0.3), &both, &[0, 1]);
    // Through the graph: the gradient of Softplus's gradient.
    let v = values(&[3], 2, -2.0, 2.0, &[], 0.0);
    assert_grad(
        "d²softplus",
        |s, xs| {
            let y = ops::softplus(s, x(xs, 0));
            gradients(s, &[y], &[x(xs, 0)], None).unwrap()[0].clone().unwrap()
        },
        &[v],
        &[0],
    );
}
