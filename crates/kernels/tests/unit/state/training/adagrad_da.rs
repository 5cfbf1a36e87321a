use ferroflow_kernels::state::training::adagrad_da::AdagradDa;
use ferroflow_kernels::state::training::apply::UpdateRule;

/// TensorFlow's own unit test of AdagradDA (adagrad_da_test.py): lr 3, initial squared
/// accumulator 0.1, one step at global step 1 from var [1, 2] with grad [0.1, 0.2].
#[test]
fn one_step_matches_tensorflows_unit_test() {
    let mut var = vec![1.0f64, 2.0];
    let mut ga = vec![0.0f64; 2];
    let mut gga = vec![0.1f64; 2];
    AdagradDa.apply(&[3.0, 0.0, 0.0, 1.0], &mut [&mut var, &mut ga, &mut gga], &[0.1, 0.2]);
    assert!((var[0] - -0.904534).abs() < 1e-6 && (var[1] - -1.603567).abs() < 1e-6, "{var:?}");
    assert_eq!(ga, vec![0.1, 0.2]);
}

#[test]
fn l1_zeroes_weights_whose_accumulated_gradient_is_small() {
    let mut var = vec![5.0f64, 5.0];
    let mut ga = vec![0.0f64; 2];
    let mut gga = vec![0.1f64; 2];
    // |g| = 0.1 <= l1 * t = 0.5: zero; |g| = 2 > 0.5: -lr * (2 - 0.5) / sqrt(4.1).
    AdagradDa.apply(&[1.0, 0.5, 0.0, 1.0], &mut [&mut var, &mut ga, &mut gga], &[0.1, 2.0]);
    assert_eq!(var[0], 0.0);
    assert!((var[1] - -1.5 / 4.1f64.sqrt()).abs() < 1e-12, "{var:?}");
}
