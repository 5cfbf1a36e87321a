use ferroflow_core::{attr, Code, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run(op: &str, x: Tensor) -> Result<Tensor, Status> {
    run_kernel(node(op, &[("T", attr::ty(x.dtype()))]), vec![x], 1).map(|mut v| v.remove(0))
}

#[test]
fn rows_are_stable_distributions() {
    let x = Tensor::new(vec![2, 3], vec![1.0f64, 2.0, 3.0, 1000.0, 1000.0, 1000.0]).unwrap();
    let y = run("Softmax", x.clone()).unwrap();
    let y = y.as_slice::<f64>().unwrap();
    let e: Vec<f64> = [1.0f64, 2.0, 3.0].iter().map(|v| (v - 3.0f64).exp()).collect();
    let s: f64 = e.iter().sum();
    for i in 0..3 {
        assert!((y[i] - e[i] / s).abs() < 1e-15);
        assert!((y[3 + i] - 1.0 / 3.0).abs() < 1e-15);
    }
    let l = run("LogSoftmax", x).unwrap();
    let l = l.as_slice::<f64>().unwrap();
    assert!((l[0] - (e[0] / s).ln()).abs() < 1e-14);
    assert!((l[4] + 3.0f64.ln()).abs() < 1e-14);
}

#[test]
fn scalar_is_rejected() {
    let e = run("Softmax", Tensor::scalar(1.0f32)).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains(">= 1 dimension"));
}
