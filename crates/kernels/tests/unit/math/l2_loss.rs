use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn l2_loss_values() {
    let x = Tensor::new(vec![2usize, 2], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
    let out = run_kernel(node("L2Loss", &[("T", attr::ty(DataType::Double))]), vec![x], 1).unwrap();
    assert_eq!((out[0].dims(), out[0].as_slice::<f64>().unwrap()), (&[][..], &[15.0][..]));
    let big = Tensor::vec(vec![0.5f32; 100_000]);
    let out = run_kernel(node("L2Loss", &[("T", attr::ty(DataType::Float))]), vec![big], 1).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[12_500.0]);
}

#[test]
fn approximate_equal_shapes() {
    let n = node("ApproximateEqual", &[("T", attr::ty(DataType::Double)), ("tolerance", attr::float(2.5))]);
    let out = run_kernel(n.clone(), vec![Tensor::vec(vec![1.0f64, 5.0]), Tensor::vec(vec![3.0f64, 8.0])], 1).unwrap();
    assert_eq!(out[0].as_slice::<bool>().unwrap(), &[true, false]);
    let e = run_kernel(n, vec![Tensor::vec(vec![1.0f64, 5.0]), Tensor::vec(vec![3.0f64])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("x and y must be of the same shape. x shape: [2]. y shape: [1]"), "{e}");
}
