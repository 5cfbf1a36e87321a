use ferroflow_core::{attr, Code, Status, Tensor, TensorType};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run<T: TensorType>(op: &str, a: Vec<T>, b: Vec<T>) -> Result<Vec<f64>, Status> {
    let (a, b) = (Tensor::vec(a), Tensor::vec(b));
    let n = node(op, &[("T", attr::ty(a.dtype()))]);
    run_kernel(n, vec![a, b], 1).map(|o| o[0].to_f64_vec().unwrap())
}

#[test]
fn shifts_clamp_the_amount() {
    let l = run("LeftShift", vec![1i32, 1, -8, 5], vec![3, 40, -1, 32]).unwrap();
    assert_eq!(l, vec![8.0, i32::MIN as f64, -8.0, i32::MIN as f64]);
    assert_eq!(run("RightShift", vec![-8i32, 5], vec![40, -1]).unwrap(), vec![-1.0, 5.0]);
    assert_eq!(run("RightShift", vec![200u8], vec![9]).unwrap(), vec![1.0]);
    assert_eq!(run("BitwiseXor", vec![0b1100u16], vec![0b1010]).unwrap(), vec![6.0]);
}

#[test]
fn integer_division_by_zero() {
    assert_eq!(run("TruncateDiv", vec![-7i32, 7], vec![2, -2]).unwrap(), vec![-3.0, -3.0]);
    assert_eq!(run("Mod", vec![-7i64, 7], vec![2, -2]).unwrap(), vec![-1.0, 1.0]);
    let e = run("Mod", vec![7i32], vec![0]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Integer division by zero") && e.message.contains("'test'"), "{e}");
    assert_eq!(run("TruncateMod", vec![7i64], vec![0]).unwrap_err().code, Code::Internal);
    assert_eq!(run("TruncateDiv", vec![i32::MIN], vec![-1]).unwrap(), vec![i32::MIN as f64]);
}

#[test]
fn float_edge_cases_and_types() {
    assert_eq!(run("Xlogy", vec![0.0f64, 2.0], vec![f64::NAN, 1.0]).unwrap(), vec![0.0, 0.0]);
    assert_eq!(run("MulNoNan", vec![f32::INFINITY], vec![0.0]).unwrap(), vec![0.0]);
    assert_eq!(run("TruncateDiv", vec![-7.5f32], vec![2.0]).unwrap(), vec![-3.0]);
    assert_eq!(run("Zeta", vec![2.0f64], vec![1.0]).unwrap()[0], std::f64::consts::PI.powi(2) / 6.0);
    assert_eq!(run("Atan2", vec![1i32], vec![1]).unwrap_err().code, Code::NotFound);
    assert_eq!(run("BitwiseAnd", vec![1.0f32], vec![1.0]).unwrap_err().code, Code::NotFound);
    let e = run("Atan2", vec![1.0f32, 2.0], vec![1.0, 2.0, 3.0]).unwrap_err();
    assert!(e.message.contains("Incompatible shapes"), "{e}");
}
