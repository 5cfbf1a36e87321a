use ferroflow_core::{attr, Code, DataType, Status, Tensor, TensorType};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run(op: &str, a: Tensor, b: Tensor) -> Result<Tensor, Status> {
    let n = node(op, &[("T", attr::ty(a.dtype()))]);
    run_kernel(n, vec![a, b], 1).map(|mut v| v.remove(0))
}

fn t<T: TensorType>(shape: &[usize], v: Vec<T>) -> Tensor {
    Tensor::new(shape, v).unwrap()
}

#[test]
fn broadcast_add_and_reuse() {
    let out = run("Add", t(&[2, 3], vec![1.0f32, 2., 3., 4., 5., 6.]), t(&[3], vec![10.0f32, 20., 30.])).unwrap();
    assert_eq!(out.dims(), &[2, 3]);
    assert_eq!(out.as_slice::<f32>().unwrap(), &[11., 22., 33., 14., 25., 36.]);
    let out = run("AddV2", t(&[2, 1], vec![1i64, 2]), t(&[1, 3], vec![10i64, 20, 30])).unwrap();
    assert_eq!(out.as_slice::<i64>().unwrap(), &[11, 21, 31, 12, 22, 32]);
    // b has the output shape after a rank-extending broadcast.
    let out = run("Sub", t(&[], vec![1i32]), t(&[1, 2], vec![5, 7])).unwrap();
    assert_eq!((out.dims(), out.as_slice::<i32>().unwrap()), (&[1usize, 2][..], &[-4, -6][..]));
    let out = run("Mul", t(&[1], vec![200u8]), t(&[], vec![3u8])).unwrap();
    assert_eq!(out.as_slice::<u8>().unwrap(), &[88]);
}

#[test]
fn shared_input_is_not_overwritten() {
    let a = t(&[3], vec![1.0f64, 2., 3.]);
    let n = node("Mul", &[("T", attr::ty(DataType::Double))]);
    let out = run_kernel(n, vec![a.clone(), a.clone()], 1).unwrap();
    assert_eq!(out[0].as_slice::<f64>().unwrap(), &[1., 4., 9.]);
    assert_eq!(a.as_slice::<f64>().unwrap(), &[1., 2., 3.]);
}

#[test]
fn division_semantics() {
    let a = || t(&[4], vec![-7i32, 7, -7, i32::MIN]);
    let b = || t(&[4], vec![2i32, -2, -2, -1]);
    assert_eq!(run("Div", a(), b()).unwrap().as_slice::<i32>().unwrap(), &[-3, -3, 3, i32::MIN]);
    assert_eq!(run("FloorDiv", a(), b()).unwrap().as_slice::<i32>().unwrap(), &[-4, -4, 3, i32::MIN]);
    assert_eq!(run("FloorMod", a(), b()).unwrap().as_slice::<i32>().unwrap(), &[1, -1, -1, 0]);
    let e = run("FloorMod", a(), t(&[], vec![0i32])).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Integer division by zero") && e.message.contains("'test'"), "{e}");
    let f = run("FloorMod", t(&[2], vec![-7.5f32, 1.]), t(&[2], vec![2.0f32, 0.])).unwrap();
    assert_eq!(f.as_slice::<f32>().unwrap()[0], 0.5);
    assert!(f.as_slice::<f32>().unwrap()[1].is_nan());
    let d = run("DivNoNan", t(&[2], vec![f32::NAN, 6.]), t(&[2], vec![0.0f32, 3.])).unwrap();
    assert_eq!(d.as_slice::<f32>().unwrap(), &[0., 2.]);
}

#[test]
fn pow_max_sqdiff() {
    let p = run("Pow", t(&[3], vec![2i32, 3, -2]), t(&[3], vec![31i32, 40, 3])).unwrap();
    assert_eq!(p.as_slice::<i32>().unwrap(), &[i32::MIN, 689956897, -8]);
    let e = run("Pow", t(&[1], vec![2i64]), t(&[1], vec![-1i64])).unwrap_err();
    assert!(e.message.contains("negative integer powers"));
    let m = run("Maximum", t(&[3], vec![f32::NAN, 1., 2.]), t(&[], vec![1.5f32])).unwrap();
    let m = m.as_slice::<f32>().unwrap();
    assert!(m[0].is_nan() && m[1] == 1.5 && m[2] == 2.);
    let s = run("SquaredDifference", t(&[1], vec![2i32]), t(&[1], vec![5i32])).unwrap();
    assert_eq!(s.as_slice::<i32>().unwrap(), &[9]);
}

#[test]
fn errors() {
    let e = run("Add", t(&[2, 2], vec![1.0f32; 4]), t(&[3], vec![1.0f32; 3])).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Incompatible shapes: [2,2] vs. [3]") && e.message.contains("'test'"), "{e}");
    let e = run("RealDiv", t(&[1], vec![1i32]), t(&[1], vec![1i32])).unwrap_err();
    assert_eq!(e.code, Code::NotFound);
    let n = node("Add", &[("T", attr::ty(DataType::Float))]);
    let e = run_kernel(n, vec![t(&[1], vec![1i32]), t(&[1], vec![1i32])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}

#[test]
fn large_parallel() {
    let n = 100_000;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let out = run("Sub", t(&[n / 10, 10], a), t(&[n / 10, 1], (0..n / 10).map(|i| i as f32).collect())).unwrap();
    let o = out.as_slice::<f32>().unwrap();
    assert_eq!((o[0], o[11], o[n - 1]), (0., 10., (n - 1) as f32 - (n / 10 - 1) as f32));
}
