use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn pads() {
    let n = node("Pad", &[("T", attr::ty(DataType::Int32)), ("Tpaddings", attr::ty(DataType::Int32))]);
    let x = Tensor::new(vec![2, 2], vec![1i32, 2, 3, 4]).unwrap();
    let p = Tensor::new(vec![2, 2], vec![1i32, 0, 0, 2]).unwrap();
    let o = run_kernel(n.clone(), vec![x.clone(), p.clone()], 1).unwrap();
    assert_eq!(o[0].dims(), &[3, 4]);
    assert_eq!(o[0].as_slice::<i32>().unwrap(), &[0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0]);
    let v2 = node("PadV2", &[("T", attr::ty(DataType::Int32)), ("Tpaddings", attr::ty(DataType::Int32))]);
    let o = run_kernel(v2.clone(), vec![x.clone(), p.clone(), Tensor::scalar(9i32)], 1).unwrap();
    assert_eq!(&o[0].as_slice::<i32>().unwrap()[..6], &[9, 9, 9, 9, 1, 2]);
    let e = run_kernel(v2, vec![x.clone(), p, Tensor::vec(vec![9i32])], 1).unwrap_err();
    assert!(e.message.contains("constant_values must be a scalar. Found: [1]"));
    let bad = Tensor::new(vec![1, 2], vec![1i32, 1]).unwrap();
    let e = run_kernel(n.clone(), vec![x.clone(), bad], 1).unwrap_err();
    assert!(e.message.contains("The first dimension of paddings must be the rank of inputs[1,2] [2,2]"));
    let neg = Tensor::new(vec![2, 2], vec![1i32, -1, 0, 0]).unwrap();
    assert!(run_kernel(n, vec![x, neg], 1).unwrap_err().message.contains("Paddings must be non-negative: 1 -1"));
}
