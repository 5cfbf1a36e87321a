use ferroflow_core::{attr, Code, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run3(a: Tensor, b: Tensor, x: Tensor) -> Result<Tensor, Status> {
    run_kernel(node("Betainc", &[("T", attr::ty(a.dtype()))]), vec![a, b, x], 1).map(|mut v| v.remove(0))
}

#[test]
fn scalars_broadcast_and_shapes_are_checked() {
    let out = run3(Tensor::scalar(1.0f64), Tensor::vec(vec![1.0f64, 2.0]), Tensor::scalar(0.5f64)).unwrap();
    assert_eq!(out.dims(), &[2]);
    assert_eq!(out.as_slice::<f64>().unwrap(), &[0.5, 0.75]);
    let e = run3(Tensor::vec(vec![1.0f32, 1.0]), Tensor::vec(vec![1.0f32]), Tensor::scalar(0.5f32)).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Shapes of a and b are inconsistent: [2] vs. [1]"), "{e}");
    let empty = run3(Tensor::vec(Vec::<f32>::new()), Tensor::scalar(1.0f32), Tensor::scalar(0.5f32)).unwrap();
    assert_eq!(empty.dims(), &[0]);
}
