use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn keeps_order_and_repeats() {
    let n = node("ListDiff", &[("T", attr::ty(DataType::Float)), ("out_idx", attr::ty(DataType::Int64))]);
    let x = Tensor::vec(vec![1.0f32, -0.0, f32::NAN, 3.0, 1.0, 4.0]);
    let y = Tensor::vec(vec![0.0f32, 1.0, f32::NAN]);
    let o = run_kernel(n, vec![x, y], 2).unwrap();
    let out = o[0].as_slice::<f32>().unwrap();
    assert_eq!(out.len(), 3);
    assert!(out[0].is_nan() && out[1] == 3.0 && out[2] == 4.0);
    assert_eq!(o[1], Tensor::vec(vec![2i64, 3, 5]));
}
