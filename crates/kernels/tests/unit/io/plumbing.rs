use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn const_and_identity() {
    let v = Tensor::vec(vec![1.0f32, 2.0]);
    let n = node("Const", &[("value", attr::tensor(&v)), ("dtype", attr::ty(DataType::Float))]);
    assert_eq!(run_kernel(n, vec![], 1).unwrap()[0], v);
    let bad = node("Const", &[("value", attr::tensor(&v)), ("dtype", attr::ty(DataType::Int32))]);
    let e = run_kernel(bad, vec![], 1).unwrap_err();
    assert!(e.message.contains("Type mismatch between value (float) and dtype (int32)"), "{e}");
    for op in ["Identity", "Snapshot", "StopGradient", "PreventGradient"] {
        let out = run_kernel(node(op, &[("T", attr::ty(DataType::Float))]), vec![v.clone()], 1).unwrap();
        assert!(out[0].shares_buffer(&v));
    }
    let n = node("IdentityN", &[("T", attr::list_type(&[DataType::Float, DataType::Int32]))]);
    let out = run_kernel(n, vec![v.clone(), Tensor::scalar(3i32)], 2).unwrap();
    assert_eq!(out[1].scalar_value::<i32>().unwrap(), 3);
    assert!(run_kernel(node("NoOp", &[]), vec![], 0).unwrap().is_empty());
}

#[test]
fn placeholder_must_be_fed() {
    let mut n = node("Placeholder", &[("dtype", attr::ty(DataType::Float)), ("shape", attr::shape(Some(&[-1, 784])))]);
    n.name = "x".into();
    let e = run_kernel(n, vec![], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert_eq!(e.message, "You must feed a value for placeholder tensor 'x' with dtype float and shape [?,784]");
    let mut n = node("Placeholder", &[("dtype", attr::ty(DataType::Int32)), ("shape", attr::shape(None))]);
    n.name = "y".into();
    assert_eq!(
        run_kernel(n, vec![], 1).unwrap_err().message,
        "You must feed a value for placeholder tensor 'y' with dtype int32"
    );
    let n = node("PlaceholderWithDefault", &[("dtype", attr::ty(DataType::Int32)), ("shape", attr::shape(Some(&[])))]);
    assert_eq!(run_kernel(n, vec![Tensor::scalar(4i32)], 1).unwrap()[0].scalar_value::<i32>().unwrap(), 4);
}
