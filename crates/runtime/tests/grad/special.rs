//! Gradients of tf.math.special's Bessel functions of integer order, Dawson's integral, the
//! exponential integral, the Fresnel integrals and Spence's function: central differences,
//! on both sides of each kernel's seam between its series and its continued fraction or
//! asymptotic expansion; and the limits TensorFlow takes at 0 (J1) and 1 (Spence).

use crate::util::*;
use ferroflow_core::Tensor;
use ferroflow_graph::ops;

/// The seed of every case's input.
const SEED: u64 = 13;

#[test]
fn bessel_functions_of_integer_order() {
    unary_cases(
        &[
            ("BesselJ0", ops::bessel_j0, -6.0, 6.0),
            ("BesselJ1", ops::bessel_j1, -6.0, 6.0),
            ("BesselY0", ops::bessel_y0, 0.3, 9.0),
            ("BesselY1", ops::bessel_y1, 0.3, 9.0),
            ("BesselK0", ops::bessel_k0, 0.2, 1.9),
            ("BesselK0 beyond 2", ops::bessel_k0, 2.1, 8.0),
            ("BesselK1", ops::bessel_k1, 0.2, 1.9),
            ("BesselK1 beyond 2", ops::bessel_k1, 2.1, 8.0),
            ("BesselK0e", ops::bessel_k0e, 0.2, 1.9),
            ("BesselK0e beyond 2", ops::bessel_k0e, 2.1, 30.0),
            ("BesselK1e", ops::bessel_k1e, 0.2, 1.9),
            ("BesselK1e beyond 2", ops::bessel_k1e, 2.1, 30.0),
        ],
        SEED,
        &[],
    );
    let zero = Tensor::new(vec![1usize], vec![0.0f64]).unwrap();
    assert_grad("BesselJ1 at 0", |s, xs| ops::bessel_j1(s, x(xs, 0)), &[zero], &[0]);
}

#[test]
fn dawson_exponential_fresnel_and_spence() {
    unary_cases(
        &[
            ("Dawsn", ops::dawsn, -4.0, 4.0),
            ("Dawsn beyond 10", ops::dawsn, 10.5, 14.0),
            ("Expint", ops::expint, 0.1, 8.0),
            ("Expint beyond 40", ops::expint, 40.5, 44.0),
            ("FresnelCos", ops::fresnel_cos, -1.4, 1.4),
            ("FresnelCos beyond 1.5", ops::fresnel_cos, 1.6, 3.0),
            ("FresnelSin", ops::fresnel_sin, -1.4, 1.4),
            ("FresnelSin beyond 1.5", ops::fresnel_sin, 1.6, 3.0),
            ("Spence", ops::spence, 0.1, 4.0),
        ],
        SEED,
        &[],
    );
    let one = Tensor::new(vec![1usize], vec![1.0f64]).unwrap();
    assert_grad("Spence at 1", |s, xs| ops::spence(s, x(xs, 0)), &[one], &[0]);
}
