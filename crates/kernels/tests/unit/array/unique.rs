use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn first_appearance_order_and_indices() {
    let n = node("Unique", &[("T", attr::ty(DataType::Int64)), ("out_idx", attr::ty(DataType::Int32))]);
    let o = run_kernel(n.clone(), vec![Tensor::vec(vec![7i64, 3, 7, 9, 3, 3])], 2).unwrap();
    assert_eq!(o[0], Tensor::vec(vec![7i64, 3, 9]));
    assert_eq!(o[1], Tensor::vec(vec![0i32, 1, 0, 2, 1, 1]));
    let e = run_kernel(n, vec![Tensor::scalar(1i64)], 2).unwrap_err();
    assert!(e.message.contains("unique expects a 1D vector"), "{e}");
    let n = node("Unique", &[("T", attr::ty(DataType::Float)), ("out_idx", attr::ty(DataType::Int64))]);
    let o = run_kernel(n, vec![Tensor::vec(vec![0.0f32, -0.0, f32::NAN, 1.5, f32::NAN, 1.5])], 2).unwrap();
    assert_eq!(o[0].dims(), &[4]);
    assert_eq!(o[1], Tensor::vec(vec![0i64, 0, 1, 2, 3, 2]));
}
