use ferroflow_core::{attr, Code, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run(op: &str, inputs: Vec<Tensor>) -> Result<Tensor, Status> {
    run_kernel(node(op, &[("T", attr::ty(inputs[0].dtype()))]), inputs, 1).map(|mut v| v.remove(0))
}

#[test]
fn forward_values() {
    let x = Tensor::vec(vec![f32::NAN, -1.0, 0.0, 2.0, 7.0]);
    let y = run("Relu", vec![x.clone()]).unwrap().to_f64_vec().unwrap();
    assert!(y[0].is_nan());
    assert_eq!(&y[1..], &[0.0, 0.0, 2.0, 7.0]);
    let y = run("Relu6", vec![x.clone()]).unwrap().to_f64_vec().unwrap();
    assert!(y[0].is_nan());
    assert_eq!(&y[1..], &[0.0, 0.0, 2.0, 6.0]);
    let y = run("Elu", vec![Tensor::vec(vec![-1.0f64, 0.5])]).unwrap();
    assert_eq!(y.as_slice::<f64>().unwrap(), &[(-1.0f64).exp() - 1.0, 0.5]);
    let y = run("Relu", vec![Tensor::vec(vec![-3i64, 4])]).unwrap();
    assert_eq!(y.as_slice::<i64>().unwrap(), &[0, 4]);
}

#[test]
fn large_input_in_place() {
    let x: Vec<f32> = (0..100_000).map(|i| (i % 7) as f32 - 3.0).collect();
    let y = run("Relu", vec![Tensor::vec(x.clone())]).unwrap();
    let want: Vec<f32> = x.iter().map(|v| v.max(0.0)).collect();
    assert_eq!(y.as_slice::<f32>().unwrap(), &want[..]);
}

#[test]
fn gradients() {
    let g = Tensor::vec(vec![1.0f32, 2.0, 3.0, 4.0]);
    let f = Tensor::vec(vec![-1.0f32, 0.0, 3.0, 7.0]);
    assert_eq!(run("ReluGrad", vec![g.clone(), f.clone()]).unwrap().as_slice::<f32>().unwrap(), &[0., 0., 3., 4.]);
    assert_eq!(run("Relu6Grad", vec![g.clone(), f.clone()]).unwrap().as_slice::<f32>().unwrap(), &[0., 0., 3., 0.]);
    let o = Tensor::vec(vec![-0.5f32, 0.0, 1.0, -1.0]);
    assert_eq!(run("EluGrad", vec![g.clone(), o]).unwrap().as_slice::<f32>().unwrap(), &[0.5, 2., 3., 0.]);
    let e = run("ReluGrad", vec![g, Tensor::vec(vec![1.0f32])]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("[4] != input 1: [1]"), "{e}");
}
