use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn arg(op: &str, x: Tensor, dim: Tensor, out: DataType) -> Result<Tensor, Status> {
    let n = node(op, &[("T", attr::ty(x.dtype())), ("Tidx", attr::ty(dim.dtype())), ("output_type", attr::ty(out))]);
    run_kernel(n, vec![x, dim], 1).map(|mut v| v.remove(0))
}

#[test]
fn values() {
    let x = Tensor::new(vec![2usize, 3], vec![1.0f32, 5., 5., 7., 0., 7.]).unwrap();
    let a = arg("ArgMax", x.clone(), Tensor::scalar(1i32), DataType::Int64).unwrap();
    assert_eq!(a.as_slice::<i64>().unwrap(), &[1, 0]);
    let a = arg("ArgMin", x.clone(), Tensor::scalar(-2i64), DataType::Int32).unwrap();
    assert_eq!(a.as_slice::<i32>().unwrap(), &[0, 1, 0]);
    let n = Tensor::vec(vec![f32::NAN, 1., 2.]);
    assert_eq!(
        arg("ArgMax", n.clone(), Tensor::scalar(0i32), DataType::Int64).unwrap().as_slice::<i64>().unwrap(),
        &[2]
    );
    assert_eq!(arg("ArgMin", n, Tensor::scalar(0i32), DataType::Int64).unwrap().as_slice::<i64>().unwrap(), &[1]);
    let b = Tensor::vec(vec![false, true, true]);
    assert_eq!(arg("ArgMax", b, Tensor::scalar(0i32), DataType::Int64).unwrap().as_slice::<i64>().unwrap(), &[1]);
    let big = Tensor::new(
        vec![3usize, 40_000],
        (0..120_000i32).map(|i| (i % 40_000) * (1 - 2 * (i / 40_000 % 2))).collect::<Vec<_>>(),
    )
    .unwrap();
    let a = arg("ArgMax", big.clone(), Tensor::scalar(1i32), DataType::Int64).unwrap();
    assert_eq!(a.as_slice::<i64>().unwrap(), &[39_999, 0, 39_999]);
    let a = arg("ArgMin", big, Tensor::scalar(0i32), DataType::Int64).unwrap();
    assert_eq!(&a.as_slice::<i64>().unwrap()[..3], &[0, 1, 1]);
}

#[test]
fn errors() {
    let x = || Tensor::zeros(DataType::Float, vec![0, 3]).unwrap();
    let e = arg("ArgMax", x(), Tensor::scalar(0i32), DataType::Int64).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Reduction axis 0 is empty in shape [0,3]"), "{e}");
    let ok = arg("ArgMax", x(), Tensor::scalar(1i32), DataType::Int64).unwrap();
    assert_eq!(ok.dims(), &[0]);
    let e = arg("ArgMax", x(), Tensor::scalar(2i32), DataType::Int64).unwrap_err();
    assert!(e.message.contains("Expected dimension in the range [-2, 2), but got 2"), "{e}");
    let e = arg("ArgMax", x(), Tensor::vec(vec![1i32]), DataType::Int64).unwrap_err();
    assert!(e.message.contains("dim must be a scalar, but received tensor of shape: [1]"), "{e}");
    let e = arg("ArgMax", Tensor::scalar(1.0f32), Tensor::scalar(0i32), DataType::Int64).unwrap_err();
    assert!(e.message.contains("range [0, 0)"), "{e}");
}
