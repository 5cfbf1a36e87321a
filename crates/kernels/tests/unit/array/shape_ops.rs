use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::array::shape_ops::reshape_dims;
use ferroflow_kernels::testutil::{node, run_kernel};

fn t(dims: Vec<usize>, n: usize) -> Tensor {
    Tensor::new(dims, (0..n as i32).collect::<Vec<_>>()).unwrap()
}

#[test]
fn reshape_infers_and_checks() {
    assert_eq!(reshape_dims(&[2, 3], &[-1, 2]).unwrap(), vec![3, 2]);
    assert_eq!(reshape_dims(&[0, 3], &[-1, 0]).unwrap(), vec![3, 0]);
    assert_eq!(reshape_dims(&[0, 3], &[-1, 3]).unwrap(), vec![0, 3]);
    assert_eq!(
        reshape_dims(&[2, 3], &[4]).unwrap_err(),
        "Input to reshape is a tensor with 6 values, but the requested shape has 4"
    );
    assert_eq!(
        reshape_dims(&[2, 3], &[-1, 4]).unwrap_err(),
        "Input to reshape is a tensor with 6 values, but the requested shape requires a multiple of 4"
    );
    assert_eq!(reshape_dims(&[2, 3], &[-1, -1]).unwrap_err(), "Only one input size may be -1, not both 0 and 1");
    assert_eq!(reshape_dims(&[2, 3], &[-2, 3]).unwrap_err(), "Size 0 must be non-negative, not -2");
    assert!(reshape_dims(&[2], &[1 << 40, 1 << 40, 0]).is_err());
    let n = node("Reshape", &[("T", attr::ty(DataType::Int32)), ("Tshape", attr::ty(DataType::Int64))]);
    let x = t(vec![2, 3], 6);
    let out = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![3i64, -1])], 1).unwrap();
    assert_eq!(out[0].dims(), &[3, 2]);
    assert!(out[0].shares_buffer(&x));
    let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![4i64])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("node 'test'") && e.message.contains("6 values"), "{e}");
    assert!(run_kernel(n, vec![x, Tensor::scalar(6i64)], 1).is_err());
}

#[test]
fn shape_size_rank() {
    let x = t(vec![2, 3, 1], 6);
    let s = run_kernel(node("Shape", &[("out_type", attr::ty(DataType::Int64))]), vec![x.clone()], 1).unwrap();
    assert_eq!(s[0].as_slice::<i64>().unwrap(), &[2, 3, 1]);
    let s = run_kernel(node("Size", &[("out_type", attr::ty(DataType::Int32))]), vec![x.clone()], 1).unwrap();
    assert_eq!(s[0].scalar_value::<i32>().unwrap(), 6);
    let s = run_kernel(node("Rank", &[]), vec![x.clone()], 1).unwrap();
    assert_eq!(s[0].scalar_value::<i32>().unwrap(), 3);
    let n = node("ShapeN", &[("out_type", attr::ty(DataType::Int32)), ("N", attr::int(2))]);
    let s = run_kernel(n, vec![x, Tensor::scalar(1.0f32)], 2).unwrap();
    assert_eq!(s[0].as_slice::<i32>().unwrap(), &[2, 3, 1]);
    assert_eq!(s[1].dims(), &[0]);
}

#[test]
fn expand_and_squeeze() {
    let n = node("ExpandDims", &[("Tdim", attr::ty(DataType::Int32))]);
    let x = t(vec![2, 3], 6);
    let o = run_kernel(n.clone(), vec![x.clone(), Tensor::scalar(-1i32)], 1).unwrap();
    assert_eq!(o[0].dims(), &[2, 3, 1]);
    let o = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![0i32])], 1).unwrap();
    assert_eq!(o[0].dims(), &[1, 2, 3]);
    let e = run_kernel(n.clone(), vec![x.clone(), Tensor::scalar(3i32)], 1).unwrap_err();
    assert!(e.message.contains("Tried to expand dim index 3 for tensor with 2 dimensions."));
    let e = run_kernel(n, vec![x, Tensor::vec(vec![0i32, 1])], 1).unwrap_err();
    assert!(e.message.contains("'dim' must be a tensor with a single value"));
    let y = t(vec![1, 2, 1], 2);
    let sq = |d: &[i64]| node("Squeeze", &[("squeeze_dims", attr::list_int(d))]);
    assert_eq!(run_kernel(sq(&[]), vec![y.clone()], 1).unwrap()[0].dims(), &[2]);
    assert_eq!(run_kernel(sq(&[-1]), vec![y.clone()], 1).unwrap()[0].dims(), &[1, 2]);
    let e = run_kernel(sq(&[1]), vec![y.clone()], 1).unwrap_err();
    assert!(e.message.contains("Can not squeeze dim[1], expected a dimension of 1, got 2"));
    assert!(run_kernel(sq(&[3]), vec![y], 1).is_err());
}
