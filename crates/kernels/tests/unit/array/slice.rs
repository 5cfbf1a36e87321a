use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn slices() {
    let n = node("Slice", &[("T", attr::ty(DataType::Int32)), ("Index", attr::ty(DataType::Int64))]);
    let x = Tensor::new(vec![3, 4], (0..12).collect::<Vec<i32>>()).unwrap();
    let run = |b: Vec<i64>, s: Vec<i64>| run_kernel(n.clone(), vec![x.clone(), Tensor::vec(b), Tensor::vec(s)], 1);
    let o = run(vec![1, 1], vec![2, -1]).unwrap();
    assert_eq!(o[0].dims(), &[2, 3]);
    assert_eq!(o[0].as_slice::<i32>().unwrap(), &[5, 6, 7, 9, 10, 11]);
    assert!(run(vec![0, 0], vec![-1, -1]).unwrap()[0].shares_buffer(&x));
    assert_eq!(run(vec![3, 0], vec![0, 4]).unwrap()[0].dims(), &[0, 4]);
    assert!(run(vec![0, 0], vec![4, 1]).unwrap_err().message.contains("Expected size[0] in [0, 3], but got 4"));
    assert!(run(vec![0, 5], vec![1, 1]).unwrap_err().message.contains("Expected begin[1] in [0, 4], but got 5"));
    assert!(run(vec![0, -1], vec![1, 1]).unwrap_err().message.contains("Expected begin[1] in [0, 4], but got -1"));
    assert!(run(vec![0, 0, 0], vec![1, 1]).unwrap_err().message.contains("1-D tensors of size 2"));
    assert!(run(vec![i64::MIN, 0], vec![-1, 1]).is_err());
}
