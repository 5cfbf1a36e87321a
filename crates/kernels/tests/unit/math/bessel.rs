use ferroflow_kernels::math::bessel::{i0, i0e, i1, i1e};

/// Against TensorFlow's float64 values (Cephes' Chebyshev expansions, an independent
/// method), on both sides of the branch point.
#[test]
fn equal_tensorflows_float64_values() {
    let x = [1.0, -1.0, 10.0, 50.0, 29.9, 30.0, 30.1, 0.3, -7.5, 200.0];
    let tf_i0e = [
        0.46575960759364043,
        0.46575960759364043,
        0.1278333371634286,
        0.056561626647454184,
        0.07326921904600191,
        0.07314594648223728,
        0.07302329413106094,
        0.7575806251825479,
        0.1483158300773955,
        0.028227159949111912,
    ];
    let tf_i1e = [
        0.20791041534970844,
        -0.20791041534970844,
        0.12126268138445552,
        0.0559931238928954,
        0.0720333749118688,
        0.07191633059864753,
        0.07179985435101433,
        0.11237756063983881,
        -0.13804121154855417,
        0.028156503394832916,
    ];
    let close = |a: f64, b: f64| ((a - b) / b).abs() < 1e-14;
    for ((&x, &e0), &e1) in x.iter().zip(&tf_i0e).zip(&tf_i1e) {
        assert!(close(i0e(x), e0), "i0e({x}) = {}, TensorFlow {e0}", i0e(x));
        assert!(close(i1e(x), e1), "i1e({x}) = {}, TensorFlow {e1}", i1e(x));
    }
    assert!(close(i0(10.0), 2815.7166284662544) && close(i1(-7.5), -249.58436542268808));
    assert_eq!((i0e(0.0), i1e(0.0), i0e(f64::INFINITY), i1e(f64::NEG_INFINITY)), (1.0, 0.0, 0.0, -0.0));
    assert!(i0e(f64::NAN).is_nan() && i1e(f64::NAN).is_nan());
}
