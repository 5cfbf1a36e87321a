use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn tiles() {
    let n = node("Tile", &[("T", attr::ty(DataType::Int32)), ("Tmultiples", attr::ty(DataType::Int32))]);
    let x = Tensor::new(vec![2, 2], vec![1i32, 2, 3, 4]).unwrap();
    let o = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![2i32, 3])], 1).unwrap();
    assert_eq!(o[0].dims(), &[4, 6]);
    assert_eq!(&o[0].as_slice::<i32>().unwrap()[..12], &[1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4]);
    assert_eq!(run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![0i32, 3])], 1).unwrap()[0].dims(), &[0, 6]);
    let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![1i32])], 1).unwrap_err();
    assert!(e.message.contains("Expected multiples argument to be a vector of length 2 but got length 1"));
    let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![1i32, -1])], 1).unwrap_err();
    assert!(e.message.contains("Expected multiples[1] >= 0, but got -1"));
    let huge = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![1i32 << 20, 1 << 20])], 1).unwrap_err();
    assert_eq!(huge.code, ferroflow_core::Code::ResourceExhausted);
    let n64 = node("Tile", &[("T", attr::ty(DataType::Int32)), ("Tmultiples", attr::ty(DataType::Int64))]);
    assert!(run_kernel(n64, vec![x, Tensor::vec(vec![i64::MAX, 2])], 1).is_err());
}

#[test]
fn broadcasts() {
    let n = node("BroadcastTo", &[("T", attr::ty(DataType::Float)), ("Tidx", attr::ty(DataType::Int64))]);
    let x = Tensor::new(vec![2, 1], vec![1.0f32, 2.0]).unwrap();
    let o = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![2i64, 2, 3])], 1).unwrap();
    assert_eq!(o[0].dims(), &[2, 2, 3]);
    assert_eq!(&o[0].as_slice::<f32>().unwrap()[..6], &[1., 1., 1., 2., 2., 2.]);
    let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![3i64, 3])], 1).unwrap_err();
    assert!(e.message.contains("Incompatible shapes: [2,1] vs. [3,3]"));
    let e = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![2i64])], 1).unwrap_err();
    assert!(e.message.contains("Rank of input (2) must be no greater than rank of output shape (1)."));
    let e = run_kernel(n, vec![x, Tensor::vec(vec![-1i64, 1])], 1).unwrap_err();
    assert!(e.message.contains("Dimension -1 must be >= 0"));
}
