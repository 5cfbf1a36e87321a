//! MaxPoolV2 and its gradients read ksize and strides from inputs; TensorFlow's values are in
//! tests/golden/v2_ops.json, these check the inputs' errors (TensorFlow 2.21's classes).

use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn v2(op: &str) -> ferroflow_core::proto::NodeDef {
    node(
        op,
        &[("T", attr::ty(DataType::Float)), ("padding", attr::string("VALID")), ("data_format", attr::string("NHWC"))],
    )
}

fn pool(ksize: Tensor, strides: Tensor) -> Result<Vec<Tensor>, ferroflow_core::Status> {
    let x = Tensor::new(vec![1, 2, 4, 1], vec![1.0f32, 5., 2., 0., 4., 3., 9., 7.]).unwrap();
    run_kernel(v2("MaxPoolV2"), vec![x, ksize, strides], 1)
}

#[test]
fn window_comes_from_the_inputs() {
    let out = pool(Tensor::vec(vec![1i32, 2, 2, 1]), Tensor::vec(vec![1i32, 2, 2, 1])).unwrap().remove(0);
    assert_eq!(out.dims(), &[1, 1, 2, 1]);
    assert_eq!(out.as_slice::<f32>().unwrap(), &[5.0, 9.0]);
    let out = pool(Tensor::vec(vec![1i32, 1, 3, 1]), Tensor::vec(vec![1i32, 1, 1, 1])).unwrap().remove(0);
    assert_eq!(out.as_slice::<f32>().unwrap(), &[5.0, 5.0, 9.0, 9.0]);
}

#[test]
fn bad_windows_get_tensorflows_error_classes() {
    let four = || Tensor::vec(vec![1i32, 1, 1, 1]);
    let e = pool(Tensor::vec(vec![1i32, 2, 2]), four()).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("ksize field must specify 4 dimensions"), "{e}");
    let e = pool(Tensor::vec(vec![2i32, 2, 2, 1]), four()).unwrap_err();
    assert_eq!(e.code, Code::Unimplemented, "{e}");
    let e = pool(four(), Tensor::vec(vec![1i32, 0, 1, 1])).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    let e = pool(Tensor::vec(vec![1i64, 2, 2, 1]), four()).unwrap_err();
    assert!(e.message.contains("ksize must be an int32 vector"), "{e}");
}

#[test]
fn gradient_routes_to_the_maximum() {
    let x = Tensor::new(vec![1, 2, 4, 1], vec![1.0f32, 5., 2., 0., 4., 3., 9., 7.]).unwrap();
    let y = Tensor::new(vec![1, 1, 2, 1], vec![5.0f32, 9.]).unwrap();
    let g = Tensor::new(vec![1, 1, 2, 1], vec![10.0f32, 20.]).unwrap();
    let k = Tensor::vec(vec![1i32, 2, 2, 1]);
    let out = run_kernel(v2("MaxPoolGradV2"), vec![x.clone(), y.clone(), g, k.clone(), k.clone()], 1).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[0., 10., 0., 0., 0., 0., 20., 0.]);
    let gg = Tensor::new(vec![1, 2, 4, 1], (0..8).map(|v| v as f32).collect::<Vec<_>>()).unwrap();
    let out = run_kernel(v2("MaxPoolGradGradV2"), vec![x, y, gg, k.clone(), k], 1).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[1., 6.]);
}
