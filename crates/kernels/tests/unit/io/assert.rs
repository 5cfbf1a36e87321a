use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn passes_and_fails_with_the_data() {
    let n =
        node("Assert", &[("T", attr::list_type(&[DataType::String, DataType::Float])), ("summarize", attr::int(2))]);
    let data = vec![Tensor::scalar(b"x must be positive:".to_vec()), Tensor::vec(vec![1.5f32, -2.0, 3.0])];
    let mut ok = vec![Tensor::scalar(true)];
    ok.extend(data.clone());
    assert!(run_kernel(n.clone(), ok, 0).is_ok());
    let mut bad = vec![Tensor::scalar(false)];
    bad.extend(data);
    let e = run_kernel(n.clone(), bad, 0).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("assertion failed: x must be positive: [1.5 -2...]"), "{e}");
    let e = run_kernel(n, vec![Tensor::vec(vec![true, false])], 0).unwrap_err();
    assert!(e.message.contains("scalar bool"), "{e}");
}
