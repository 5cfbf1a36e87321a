use ferroflow_core::half::f16;
use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::nn::activation::{SELU_SCALE, SELU_SCALE_ALPHA};
use ferroflow_kernels::testutil::{node, run_kernel};

fn run(op: &str, inputs: Vec<Tensor>, alpha: Option<f32>) -> Result<Tensor, Status> {
    let mut attrs = vec![("T", attr::ty(inputs[0].dtype()))];
    if let Some(a) = alpha {
        attrs.push(("alpha", attr::float(a)));
    }
    run_kernel(node(op, &attrs), inputs, 1).map(|mut v| v.remove(0))
}

fn f32s(t: Tensor) -> Vec<f32> {
    t.as_slice::<f32>().unwrap().to_vec()
}

#[test]
fn forward_values() {
    let x = || Tensor::vec(vec![-20.0f32, -1.0, 0.0, 2.0, 20.0]);
    let sp = f32s(run("Softplus", vec![x()], None).unwrap());
    // Below ln(ε) + 2 softplus is eˣ, above -(ln(ε) + 2) it is x.
    assert!((sp[0] / (-20.0f32).exp() - 1.0).abs() < 1e-6);
    assert_eq!(sp[4], 20.0);
    assert!((sp[2] - std::f32::consts::LN_2).abs() < 1e-7);
    assert_eq!(f32s(run("Softsign", vec![x()], None).unwrap())[1..4], [-0.5, 0.0, 2.0 / 3.0]);
    let se = f32s(run("Selu", vec![x()], None).unwrap());
    assert_eq!(se[3], 2.0 * SELU_SCALE as f32);
    assert!((se[1] - -1.1113307).abs() < 1e-6);
    assert_eq!(f32s(run("LeakyRelu", vec![x()], None).unwrap()), vec![-4.0, -0.2, 0.0, 2.0, 20.0]);
    assert_eq!(f32s(run("LeakyRelu", vec![x()], Some(1.5)).unwrap())[..2], [-30.0, -1.5]);
    let h = run("Softplus", vec![Tensor::vec(vec![f16::from_f32(5.0), f16::from_f32(0.0)])], None).unwrap();
    assert_eq!(h.as_slice::<f16>().unwrap(), &[f16::from_f32(5.0), f16::from_f32(std::f32::consts::LN_2)]);
}

#[test]
fn gradients() {
    let g = || Tensor::vec(vec![1.0f64, 2.0, 3.0]);
    let f = || Tensor::vec(vec![-1.0f64, 0.0, 1.0]);
    let v = |op: &str, alpha| run(op, vec![g(), f()], alpha).unwrap().as_slice::<f64>().unwrap().to_vec();
    assert_eq!(v("SoftplusGrad", None), vec![1.0 / (1.0f64.exp() + 1.0), 1.0, 3.0 / ((-1.0f64).exp() + 1.0)]);
    assert_eq!(v("SoftsignGrad", None), vec![0.25, 2.0, 0.75]);
    assert_eq!(v("SeluGrad", None), vec![-1.0 + SELU_SCALE_ALPHA, 2.0 * SELU_SCALE, 3.0 * SELU_SCALE]);
    assert_eq!(v("LeakyReluGrad", Some(0.5)), vec![0.5, 1.0, 3.0]);
}

#[test]
fn errors() {
    let e = run("SoftplusGrad", vec![Tensor::vec(vec![1.0f32; 3]), Tensor::vec(vec![1.0f32; 2])], None).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("[3] vs. features [2]") && e.message.contains("'test'"), "{e}");
    let e = run("Selu", vec![Tensor::vec(vec![1i32])], None).unwrap_err();
    assert_eq!(e.code, Code::NotFound);
    let n = node("Softsign", &[("T", attr::ty(DataType::Double))]);
    let e = run_kernel(n, vec![Tensor::vec(vec![1.0f32])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}

#[test]
fn large_and_shared_inputs() {
    let x = Tensor::vec((0..70_000).map(|i| (i % 13) as f32 - 6.0).collect::<Vec<_>>());
    let y = run("LeakyRelu", vec![x.clone()], None).unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap()[0], -6.0 * 0.2f32);
    assert_eq!(x.as_slice::<f32>().unwrap()[0], -6.0);
}
