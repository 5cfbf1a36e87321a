use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn coordinates() {
    let x = Tensor::new(vec![2, 2], vec![0.0f32, 1.0, 2.0, 0.0]).unwrap();
    let o = run_kernel(node("Where", &[("T", attr::ty(DataType::Float))]), vec![x], 1).unwrap();
    assert_eq!(o[0].dims(), &[2, 2]);
    assert_eq!(o[0].as_slice::<i64>().unwrap(), &[0, 1, 1, 0]);
    let s = run_kernel(node("Where", &[("T", attr::ty(DataType::Bool))]), vec![Tensor::scalar(true)], 1).unwrap();
    assert_eq!(s[0].dims(), &[1, 0]);
}
