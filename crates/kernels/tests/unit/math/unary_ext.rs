use ferroflow_core::half::{bf16, f16};
use ferroflow_core::{attr, Code, Status, Tensor, TensorType};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run<T: TensorType>(op: &str, v: Vec<T>) -> Result<Tensor, Status> {
    let x = Tensor::vec(v);
    let n = node(op, &[("T", attr::ty(x.dtype()))]);
    run_kernel(n, vec![x], 1).map(|mut o| o.remove(0))
}

#[test]
fn values_and_types() {
    let v = run("Erf", vec![0.0f64, 1.0]).unwrap();
    assert_eq!(v.as_slice::<f64>().unwrap(), &[0.0, libm::erf(1.0)]);
    let v = run("Rint", vec![0.5f32, 1.5, -2.5]).unwrap();
    assert_eq!(v.as_slice::<f32>().unwrap(), &[0.0, 2.0, -2.0]);
    let v = run("IsFinite", vec![f16::INFINITY, f16::ONE, f16::NAN]).unwrap();
    assert_eq!(v.as_slice::<bool>().unwrap(), &[false, true, false]);
    let v = run("IsNan", vec![f64::NAN, 0.0]).unwrap();
    assert_eq!(v.as_slice::<bool>().unwrap(), &[true, false]);
    assert_eq!(run("Invert", vec![0u8, 5]).unwrap().as_slice::<u8>().unwrap(), &[255, 250]);
    let v = run("Sin", vec![bf16::from_f32(1.0)]).unwrap();
    assert_eq!(v.as_slice::<bf16>().unwrap(), &[bf16::from_f32(1.0f32.sin())]);
    assert_eq!(run("Erf", vec![1i32]).unwrap_err().code, Code::NotFound);
    assert_eq!(run("Invert", vec![1.0f32]).unwrap_err().code, Code::NotFound);
}

#[test]
fn large_input_in_place() {
    let x: Vec<f32> = (0..70_000).map(|i| (i % 100) as f32 / 50.0 - 1.0).collect();
    let y = run("Atanh", x.clone()).unwrap();
    let y = y.as_slice::<f32>().unwrap();
    assert_eq!(y[70], libm::atanhf(x[70]));
    assert!(y[0].is_infinite() && y[0] < 0.0);
}
