use ferroflow_core::{attr, Code, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run(op: &str, y: Tensor, dy: Tensor) -> Result<Tensor, Status> {
    run_kernel(node(op, &[("T", attr::ty(y.dtype()))]), vec![y, dy], 1).map(|mut v| v.remove(0))
}

#[test]
fn values() {
    let y = || Tensor::new(vec![2usize], vec![2.0f32, 0.5]).unwrap();
    let dy = || Tensor::vec(vec![3.0f32, 2.]);
    let v = |op| run(op, y(), dy()).unwrap().as_slice::<f32>().unwrap().to_vec();
    assert_eq!(v("TanhGrad"), vec![-9., 1.5]);
    assert_eq!(v("SigmoidGrad"), vec![-6., 0.5]);
    assert_eq!(v("SqrtGrad"), vec![0.75, 2.]);
    assert_eq!(v("RsqrtGrad"), vec![-12., -0.125]);
    assert_eq!(v("ReciprocalGrad"), vec![-12., -0.5]);
    assert_eq!(v("InvGrad"), vec![-12., -0.5]);
    // Same element count, different shapes: output takes y's shape.
    let out = run("TanhGrad", Tensor::new(vec![2usize, 2], vec![0.0f64; 4]).unwrap(), Tensor::vec(vec![1.0f64; 4]));
    assert_eq!(out.unwrap().dims(), &[2, 2]);
}

#[test]
fn errors() {
    let e = run("TanhGrad", Tensor::vec(vec![1.0f32; 4]), Tensor::vec(vec![1.0f32; 3])).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("same number of elements, got 4 and 3"));
    assert_eq!(run("SqrtGrad", Tensor::vec(vec![1i32]), Tensor::vec(vec![1i32])).unwrap_err().code, Code::NotFound);
}
