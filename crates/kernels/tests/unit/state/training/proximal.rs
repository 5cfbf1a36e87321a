use ferroflow_kernels::state::training::apply::UpdateRule;
use ferroflow_kernels::state::training::proximal::{fobos, ProximalAdagrad};

#[test]
fn l1_pulls_small_weights_to_zero_and_keeps_the_sign() {
    // prox = 0.05 - 0.1 * 0.2 = 0.03 < rate * l1 = 0.1 * 0.5: exactly zero.
    assert_eq!(fobos(0.05f64, 0.2, 0.1, 0.5, 0.0), 0.0);
    // prox = -1.02; |prox| - 0.05 = 0.97; / (1 + 0.1 * 0.3).
    let v = fobos(-1.0f64, 0.2, 0.1, 0.5, 0.3);
    assert!((v - (-0.97 / 1.03)).abs() < 1e-12, "{v}");
    // Without l1, only the l2 shrinkage.
    let v = fobos(1.0f64, 0.2, 0.1, 0.0, 0.3);
    assert!((v - 0.98 / 1.03).abs() < 1e-12, "{v}");
}

#[test]
fn proximal_adagrad_checks_its_hyper_parameters() {
    let p = ProximalAdagrad;
    assert!(p.check(&[0.1f32, 0.0, 0.0]).is_ok());
    assert_eq!(p.check(&[0.0f32, 0.0, 0.0]).unwrap_err(), "lr is not a positive scalar");
    assert!(p.check(&[0.1f32, -1.0, 0.0]).unwrap_err().starts_with("l1 regularization"));
    assert!(p.check(&[0.1f32, 0.0, -1.0]).unwrap_err().starts_with("l2 regularization"));
}
