use ferroflow_core::{attr, Code, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run(xs: Vec<Tensor>) -> Result<Tensor, Status> {
    let n = node("AddN", &[("T", attr::ty(xs[0].dtype())), ("N", attr::int(xs.len() as i64))]);
    run_kernel(n, xs, 1).map(|mut v| v.remove(0))
}

#[test]
fn sums() {
    let a = Tensor::vec(vec![1.0f32, 2.]);
    let out = run(vec![a.clone(), a.clone(), Tensor::vec(vec![10.0f32, 20.])]).unwrap();
    assert_eq!(out.as_slice::<f32>().unwrap(), &[12., 24.]);
    assert_eq!(a.as_slice::<f32>().unwrap(), &[1., 2.]);
    let out = run(vec![Tensor::vec(vec![200u8]), Tensor::vec(vec![100u8])]).unwrap();
    assert_eq!(out.as_slice::<u8>().unwrap(), &[44]);
    let one = run(vec![Tensor::vec(vec![7i64])]).unwrap();
    assert_eq!(one.as_slice::<i64>().unwrap(), &[7]);
    let big: Vec<Tensor> = (0..3).map(|k| Tensor::vec(vec![k as f64; 100_000])).collect();
    assert_eq!(run(big).unwrap().as_slice::<f64>().unwrap()[99_999], 3.);
}

#[test]
fn shape_mismatch() {
    let e = run(vec![Tensor::new(vec![2usize, 2], vec![1.0f32; 4]).unwrap(), Tensor::vec(vec![1.0f32; 2])]);
    let e = e.unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Input 0: [2,2] != input 1: [2]"), "{e}");
}
