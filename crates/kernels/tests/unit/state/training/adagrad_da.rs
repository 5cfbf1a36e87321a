use ferroflow_kernels::state::training::adagrad_da::AdagradDa;
use ferroflow_kernels::state::training::apply::UpdateRule;

/// One step from `var` with accumulators 0 (gradient) and 0.1 (squared); `s` is (lr, l1,
/// l2, global step). Returns var and the gradient accumulator after it.
fn step(mut var: Vec<f64>, s: [f64; 4], grad: [f64; 2]) -> (Vec<f64>, Vec<f64>) {
    let (mut ga, mut gga) = (vec![0.0; 2], vec![0.1; 2]);
    AdagradDa.apply(&s, &mut [&mut var, &mut ga, &mut gga], &grad);
    (var, ga)
}

/// TensorFlow's own unit test of AdagradDA (adagrad_da_test.py): lr 3, initial squared
/// accumulator 0.1, one step at global step 1 from var [1, 2] with grad [0.1, 0.2].
#[test]
fn one_step_matches_tensorflows_unit_test() {
    let (var, ga) = step(vec![1.0, 2.0], [3.0, 0.0, 0.0, 1.0], [0.1, 0.2]);
    assert!((var[0] - -0.904534).abs() < 1e-6 && (var[1] - -1.603567).abs() < 1e-6, "{var:?}");
    assert_eq!(ga, vec![0.1, 0.2]);
}

#[test]
fn l1_zeroes_weights_whose_accumulated_gradient_is_small() {
    // |g| = 0.1 <= l1 * t = 0.5: zero; |g| = 2 > 0.5: -lr * (2 - 0.5) / sqrt(4.1).
    let (var, _) = step(vec![5.0, 5.0], [1.0, 0.5, 0.0, 1.0], [0.1, 2.0]);
    assert_eq!(var[0], 0.0);
    assert!((var[1] - -1.5 / 4.1f64.sqrt()).abs() < 1e-12, "{var:?}");
}
