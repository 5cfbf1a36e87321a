use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn round_trip_and_none() {
    let x = Tensor::vec(vec![1.5f32, 2.5]);
    let y = Tensor::scalar(7i64);
    let n = node("OptionalFromValue", &[("Toutput_types", attr::list_type(&[DataType::Float, DataType::Int64]))]);
    let opt = run_kernel(n, vec![x.clone(), y.clone()], 1).unwrap().remove(0);
    let has = run_kernel(node("OptionalHasValue", &[]), vec![opt.clone()], 1).unwrap();
    assert!(has[0].scalar_value::<bool>().unwrap());
    let n = node("OptionalGetValue", &[("output_types", attr::list_type(&[DataType::Float, DataType::Int64]))]);
    let got = run_kernel(n.clone(), vec![opt], 2).unwrap();
    assert_eq!(got, vec![x, y]);

    let none = run_kernel(node("OptionalNone", &[]), vec![], 1).unwrap().remove(0);
    let has = run_kernel(node("OptionalHasValue", &[]), vec![none.clone()], 1).unwrap();
    assert!(!has[0].scalar_value::<bool>().unwrap());
    let e = run_kernel(n, vec![none], 2).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("does not have a value"), "{e}");
    let e = run_kernel(node("OptionalHasValue", &[]), vec![Tensor::scalar(1.0f32)], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}

#[test]
fn zeros_like_keeps_presence_and_zeroes_components() {
    let n = node("OptionalFromValue", &[("Toutput_types", attr::list_type(&[DataType::Float, DataType::Int64]))]);
    let opt = run_kernel(n, vec![Tensor::vec(vec![1.5f32, -2.0]), Tensor::scalar(7i64)], 1).unwrap().remove(0);
    let z = run_kernel(node("ZerosLike", &[("T", attr::ty(DataType::Variant))]), vec![opt], 1).unwrap().remove(0);
    let n = node("OptionalGetValue", &[("output_types", attr::list_type(&[DataType::Float, DataType::Int64]))]);
    let got = run_kernel(n, vec![z], 2).unwrap();
    assert_eq!(got, vec![Tensor::vec(vec![0.0f32, 0.0]), Tensor::scalar(0i64)]);

    let none = run_kernel(node("OptionalNone", &[]), vec![], 1).unwrap().remove(0);
    let z = run_kernel(node("ZerosLike", &[("T", attr::ty(DataType::Variant))]), vec![none], 1).unwrap().remove(0);
    let has = run_kernel(node("OptionalHasValue", &[]), vec![z], 1).unwrap();
    assert!(!has[0].scalar_value::<bool>().unwrap());
}
