use ferroflow_core::{attr, Code, DataType, Tensor, TensorType};

use ferroflow_kernels::testutil::{node, run_kernel};

fn t<T: TensorType>(shape: &[usize], v: Vec<T>) -> Tensor {
    Tensor::new(shape, v).unwrap()
}

fn bools(t: &Tensor) -> Vec<bool> {
    t.as_slice::<bool>().unwrap().to_vec()
}

#[test]
fn comparisons_broadcast() {
    let n = node("Greater", &[("T", attr::ty(DataType::Float))]);
    let out = run_kernel(n, vec![t(&[2, 2], vec![1.0f32, 5., f32::NAN, 3.]), t(&[2], vec![2.0f32, 3.])], 1).unwrap();
    assert_eq!(out[0].dims(), &[2, 2]);
    assert_eq!(bools(&out[0]), vec![false, true, false, false]);
    let n = node("LessEqual", &[("T", attr::ty(DataType::UInt8))]);
    let out = run_kernel(n, vec![t(&[3], vec![1u8, 2, 3]), t(&[], vec![2u8])], 1).unwrap();
    assert_eq!(bools(&out[0]), vec![true, true, false]);
}

#[test]
fn equality() {
    let eq = |op: &str, flag: bool, a: Tensor, b: Tensor| {
        let n = node(op, &[("T", attr::ty(a.dtype())), ("incompatible_shape_error", attr::bool(flag))]);
        run_kernel(n, vec![a, b], 1).map(|mut v| v.remove(0))
    };
    let o = eq("Equal", true, t(&[2], vec![true, false]), t(&[2], vec![true, true])).unwrap();
    assert_eq!(bools(&o), vec![true, false]);
    let o = eq("NotEqual", true, t(&[2], vec![b"a".to_vec(), b"b".to_vec()]), t(&[], vec![b"a".to_vec()])).unwrap();
    assert_eq!(bools(&o), vec![false, true]);
    let o = eq("NotEqual", false, t(&[2], vec![1i32, 2]), t(&[3], vec![1i32, 2, 3])).unwrap();
    assert_eq!((o.rank(), bools(&o)), (0, vec![true]));
    let o = eq("Equal", false, t(&[2], vec![1i32, 2]), t(&[3], vec![1i32, 2, 3])).unwrap();
    assert_eq!(bools(&o), vec![false]);
    let e = eq("Equal", true, t(&[2], vec![1i32, 2]), t(&[3], vec![1i32, 2, 3])).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Incompatible shapes: [2] vs. [3]"));
}

#[test]
fn logic() {
    let n = node("LogicalAnd", &[]);
    let out = run_kernel(n, vec![t(&[2], vec![true, false]), t(&[2, 1], vec![true, false])], 1).unwrap();
    assert_eq!(bools(&out[0]), vec![true, false, false, false]);
    let n = node("LogicalOr", &[]);
    let out = run_kernel(n, vec![t(&[2], vec![true, false]), t(&[], vec![false])], 1).unwrap();
    assert_eq!(bools(&out[0]), vec![true, false]);
    let out = run_kernel(node("LogicalNot", &[]), vec![t(&[2], vec![true, false])], 1).unwrap();
    assert_eq!(bools(&out[0]), vec![false, true]);
    let e = run_kernel(node("LogicalNot", &[]), vec![t(&[1], vec![1.0f32])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}
