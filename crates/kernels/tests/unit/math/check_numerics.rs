use ferroflow_core::{attr, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn passes_finite_and_names_what_is_not() {
    let n = node("CheckNumerics", &[("message", attr::string("m"))]);
    let ok = Tensor::vec(vec![1.0f32, -2.0]);
    assert_eq!(run_kernel(n.clone(), vec![ok.clone()], 1).unwrap()[0], ok);
    for (v, want) in [
        (vec![1.0f32, f32::INFINITY], "m : Tensor had Inf values"),
        (vec![f32::NAN], "m : Tensor had NaN values"),
        (vec![f32::NAN, f32::NEG_INFINITY], "m : Tensor had Inf and NaN values"),
    ] {
        assert_eq!(run_kernel(n.clone(), vec![Tensor::vec(v)], 1).unwrap_err().message, want);
    }
    let d = Tensor::vec(vec![f64::NAN]);
    assert!(run_kernel(n, vec![d], 1).is_err());
}
