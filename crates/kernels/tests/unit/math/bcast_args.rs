use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::math::bcast_args::broadcast_gradient_args;
use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn reduction_axes() {
    assert_eq!(broadcast_gradient_args(&[2, 1, 3], &[3]), Some((vec![1], vec![0, 1])));
    assert_eq!(broadcast_gradient_args(&[1, 1], &[1]), Some((vec![0, 1], vec![0, 1])));
    assert_eq!(broadcast_gradient_args(&[0, 1], &[1]), Some((vec![1], vec![0, 1])));
    assert_eq!(broadcast_gradient_args(&[2, 3], &[2, 3]), Some((vec![], vec![])));
    assert_eq!(broadcast_gradient_args(&[], &[]), Some((vec![], vec![])));
    assert_eq!(broadcast_gradient_args(&[2, 3], &[4]), None);
    assert_eq!(broadcast_gradient_args(&[0], &[5]), None);
}

#[test]
fn kernel() {
    let n = node("BroadcastGradientArgs", &[("T", attr::ty(DataType::Int64))]);
    let out = run_kernel(n, vec![Tensor::vec(vec![2i64, 3]), Tensor::vec(vec![2i64, 1])], 2).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &[] as &[i64]);
    assert_eq!(out[1].as_slice::<i64>().unwrap(), &[1]);
    let n = || node("BroadcastGradientArgs", &[("T", attr::ty(DataType::Int32))]);
    let e = run_kernel(n(), vec![Tensor::vec(vec![2i32, 3]), Tensor::vec(vec![4i32])], 2).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Incompatible shapes: [2,3] vs. [4]"), "{e}");
    let e = run_kernel(n(), vec![Tensor::scalar(2i32), Tensor::vec(vec![4i32])], 2).unwrap_err();
    assert!(e.message.contains("In[0] must be a vector"), "{e}");
}
