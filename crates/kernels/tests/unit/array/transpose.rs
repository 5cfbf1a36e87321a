use ferroflow_core::{attr, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn tp(x: Tensor, perm: Vec<i32>) -> Result<Tensor, Status> {
    let n = node("Transpose", &[("T", attr::ty(x.dtype())), ("Tperm", attr::ty(DataType::Int32))]);
    Ok(run_kernel(n, vec![x, Tensor::vec(perm)], 1)?.remove(0))
}

#[test]
fn transposes() {
    let x = Tensor::new(vec![2, 3], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap();
    let y = tp(x.clone(), vec![1, 0]).unwrap();
    assert_eq!(y.dims(), &[3, 2]);
    assert_eq!(y.as_slice::<f32>().unwrap(), &[1., 4., 2., 5., 3., 6.]);
    let z = Tensor::new(vec![2, 2, 2], (0..8).collect::<Vec<i32>>()).unwrap();
    assert_eq!(tp(z.clone(), vec![2, 0, 1]).unwrap().as_slice::<i32>().unwrap(), &[0, 2, 4, 6, 1, 3, 5, 7]);
    assert!(tp(z.clone(), vec![0, 1, 2]).unwrap().shares_buffer(&z));
    let big = Tensor::new(vec![300, 257], (0..300 * 257).collect::<Vec<i32>>()).unwrap();
    let bt = tp(big, vec![1, 0]).unwrap();
    assert_eq!(bt.as_slice::<i32>().unwrap()[2 * 300 + 7], 7 * 257 + 2);
    assert!(tp(x.clone(), vec![0, 1, 2]).unwrap_err().message.contains("transpose expects a vector of size 2"));
    assert!(tp(x.clone(), vec![1, 1]).unwrap_err().message.contains("0 is missing from {1,1}."));
    assert!(tp(x, vec![0, 2]).unwrap_err().message.contains("2 is out of range [0 .. 2)"));
}

#[test]
fn inverts() {
    let n = node("InvertPermutation", &[("T", attr::ty(DataType::Int32))]);
    let o = run_kernel(n.clone(), vec![Tensor::vec(vec![3i32, 4, 0, 2, 1])], 1).unwrap();
    assert_eq!(o[0].as_slice::<i32>().unwrap(), &[2, 4, 3, 0, 1]);
    assert!(run_kernel(n.clone(), vec![Tensor::vec(vec![0i32, 5, 1])], 1)
        .unwrap_err()
        .message
        .contains("5 is not between 0 and 3"));
    assert!(run_kernel(n, vec![Tensor::vec(vec![0i32, 0, 1])], 1).unwrap_err().message.contains("0 is duplicated"));
}
