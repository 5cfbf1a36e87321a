use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn fill_values_and_errors() {
    let n = node("Fill", &[("T", attr::ty(DataType::Float)), ("index_type", attr::ty(DataType::Int32))]);
    let o = run_kernel(n.clone(), vec![Tensor::vec(vec![2i32, 3]), Tensor::scalar(1.5f32)], 1).unwrap();
    assert_eq!(o[0].dims(), &[2, 3]);
    assert_eq!(o[0].as_slice::<f32>().unwrap(), &[1.5; 6]);
    let e = run_kernel(n.clone(), vec![Tensor::vec(vec![-2i32]), Tensor::scalar(1.5f32)], 1).unwrap_err();
    assert!(e.message.contains("Dimension -2 must be >= 0"));
    assert!(run_kernel(n.clone(), vec![Tensor::scalar(2i32), Tensor::scalar(1.5f32)], 1).is_err());
    let e = run_kernel(n.clone(), vec![Tensor::vec(vec![1i32 << 30, 1 << 30]), Tensor::scalar(1.5f32)], 1).unwrap_err();
    assert_eq!(e.code, ferroflow_core::Code::ResourceExhausted);
    assert!(run_kernel(n, vec![Tensor::vec(vec![2i32]), Tensor::vec(vec![1.5f32])], 1).is_err());
    let s = node("Fill", &[("T", attr::ty(DataType::String)), ("index_type", attr::ty(DataType::Int64))]);
    let o = run_kernel(s, vec![Tensor::vec(vec![2i64]), Tensor::from("ab")], 1).unwrap();
    assert_eq!(o[0].as_slice::<Vec<u8>>().unwrap(), &[b"ab".to_vec(), b"ab".to_vec()]);
}

#[test]
fn zeros_and_ones_like() {
    let x = Tensor::new(vec![2, 1], vec![3i64, 4]).unwrap();
    let z = run_kernel(node("ZerosLike", &[("T", attr::ty(DataType::Int64))]), vec![x.clone()], 1).unwrap();
    assert_eq!(z[0].as_slice::<i64>().unwrap(), &[0, 0]);
    assert_eq!(z[0].dims(), &[2, 1]);
    let o = run_kernel(node("OnesLike", &[("T", attr::ty(DataType::Int64))]), vec![x], 1).unwrap();
    assert_eq!(o[0].as_slice::<i64>().unwrap(), &[1, 1]);
    let s = Tensor::vec(vec![b"a".to_vec()]);
    let z = run_kernel(node("ZerosLike", &[("T", attr::ty(DataType::String))]), vec![s.clone()], 1).unwrap();
    assert_eq!(z[0].as_slice::<Vec<u8>>().unwrap(), &[Vec::<u8>::new()]);
    assert!(run_kernel(node("OnesLike", &[("T", attr::ty(DataType::String))]), vec![s], 1).is_err());
}
