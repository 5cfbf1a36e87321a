use ferroflow_kernels::math::vmath::{exp_f32, sigmoid_f32, tanh_f32};

fn rel(a: f32, b: f64) -> f64 {
    if b == 0.0 {
        (a as f64).abs()
    } else {
        ((a as f64 - b) / b).abs()
    }
}

#[test]
fn exp_accuracy() {
    let mut worst = 0.0f64;
    let mut x = -87.0f32;
    while x < 88.7 {
        worst = worst.max(rel(exp_f32(x), (x as f64).exp()));
        x += 0.0137;
    }
    assert!(worst < 3e-7, "worst relative error {worst}");
    assert_eq!(exp_f32(0.0), 1.0);
    assert_eq!(exp_f32(-100.0), 0.0);
    assert_eq!(exp_f32(89.0), f32::INFINITY);
    assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
    assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
    assert!(exp_f32(f32::NAN).is_nan());
    assert!(exp_f32(88.72).is_finite());
}

#[test]
fn tanh_sigmoid_accuracy() {
    let (mut wt, mut ws) = (0.0f64, 0.0f64);
    let mut x = -20.0f32;
    while x < 20.0 {
        wt = wt.max(rel(tanh_f32(x), (x as f64).tanh()));
        ws = ws.max(rel(sigmoid_f32(x), 1.0 / (1.0 + (-(x as f64)).exp())));
        x += 0.00731;
    }
    assert!(wt < 5e-7, "tanh worst relative error {wt}");
    assert!(ws < 5e-7, "sigmoid worst relative error {ws}");
    assert_eq!(tanh_f32(0.0), 0.0);
    assert_eq!(tanh_f32(100.0), 1.0);
    assert_eq!(tanh_f32(-100.0), -1.0);
    assert!(tanh_f32(f32::NAN).is_nan() && sigmoid_f32(f32::NAN).is_nan());
    assert_eq!((sigmoid_f32(-100.0), sigmoid_f32(100.0)), (0.0, 1.0));
    assert!((tanh_f32(1e-6) - 1e-6).abs() < 1e-12);
}
