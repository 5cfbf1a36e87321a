use ferroflow_core::{attr, Code, DataType, Status, Tensor, TensorType};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run<T: TensorType>(op: &str, v: Vec<T>) -> Result<Vec<f64>, Status> {
    let x = Tensor::vec(v);
    let n = node(op, &[("T", attr::ty(x.dtype()))]);
    run_kernel(n, vec![x], 1).map(|o| o[0].to_f64_vec().unwrap())
}

#[test]
fn values() {
    assert_eq!(run("Neg", vec![1.5f32, -2.]).unwrap(), vec![-1.5, 2.]);
    assert_eq!(run("Neg", vec![i32::MIN]).unwrap(), vec![i32::MIN as f64]);
    assert_eq!(run("Square", vec![30u8, 3]).unwrap(), vec![132., 9.]);
    assert_eq!(run("Sqrt", vec![4.0f64, 0.]).unwrap(), vec![2., 0.]);
    assert_eq!(run("Rsqrt", vec![4.0f32, 0.]).unwrap(), vec![0.5, f64::INFINITY]);
    assert_eq!(run("Exp", vec![0.0f64]).unwrap(), vec![1.]);
    assert_eq!(run("Log", vec![1.0f64, 0.]).unwrap(), vec![0., f64::NEG_INFINITY]);
    assert_eq!(run("Log1p", vec![0.0f32]).unwrap(), vec![0.]);
    assert_eq!(run("Tanh", vec![0.0f32, 100.]).unwrap(), vec![0., 1.]);
    assert_eq!(run("Sigmoid", vec![0.0f32, -100., 100.]).unwrap(), vec![0.5, 0., 1.]);
    assert_eq!(run("Floor", vec![-0.5f32, 1.5]).unwrap(), vec![-1., 1.]);
    assert_eq!(run("Ceil", vec![-0.5f32, 1.2]).unwrap(), vec![0., 2.]);
    assert_eq!(run("Round", vec![0.5f32, 1.5, 2.5, -0.5, -1.5]).unwrap(), vec![0., 2., 2., 0., -2.]);
    assert_eq!(run("Round", vec![3i64, -4]).unwrap(), vec![3., -4.]);
    assert_eq!(run("Abs", vec![i32::MIN, -3]).unwrap(), vec![i32::MIN as f64, 3.]);
    let s = run("Sign", vec![f32::NAN, -0.0, 2., -3.]).unwrap();
    assert!(s[0].is_nan());
    assert_eq!(&s[1..], &[0., 1., -1.]);
    assert_eq!(run("Sign", vec![-7i64, 0, 9]).unwrap(), vec![-1., 0., 1.]);
    assert_eq!(run("Reciprocal", vec![0.0f32, 2.]).unwrap(), vec![f64::INFINITY, 0.5]);
    assert_eq!(run("Inv", vec![4.0f64]).unwrap(), vec![0.25]);
}

#[test]
fn type_errors() {
    assert_eq!(run("Sqrt", vec![4i32]).unwrap_err().code, Code::NotFound);
    assert_eq!(run("Neg", vec![4u8]).unwrap_err().code, Code::NotFound);
    let n = node("Exp", &[("T", attr::ty(DataType::Double))]);
    let e = run_kernel(n, vec![Tensor::vec(vec![1.0f32])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("'test'"));
}

#[test]
fn large_and_shared() {
    let x = Tensor::vec((0..50_000).map(|i| i as f32).collect::<Vec<_>>());
    let n = node("Square", &[("T", attr::ty(DataType::Float))]);
    let out = run_kernel(n, vec![x.clone()], 1).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap()[300], 90000.);
    assert_eq!(x.as_slice::<f32>().unwrap()[300], 300.);
}
