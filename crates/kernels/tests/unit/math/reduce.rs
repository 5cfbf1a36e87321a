use ferroflow_core::{attr, Code, DataType, Status, Tensor, TensorType};

use ferroflow_kernels::testutil::{node, run_kernel};

fn reduce<T: TensorType>(op: &str, x: Tensor, axes: Vec<T>, keep: bool) -> Result<Tensor, Status> {
    let ax = if axes.len() == 1 { Tensor::scalar(axes[0].clone()) } else { Tensor::vec(axes) };
    let n = node(op, &[("T", attr::ty(x.dtype())), ("Tidx", attr::ty(ax.dtype())), ("keep_dims", attr::bool(keep))]);
    run_kernel(n, vec![x, ax], 1).map(|mut v| v.remove(0))
}

fn m() -> Tensor {
    Tensor::new(vec![2usize, 3], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap()
}

#[test]
fn values_and_shapes() {
    let s = reduce("Sum", m(), vec![1i32], false).unwrap();
    assert_eq!((s.dims(), s.as_slice::<f32>().unwrap()), (&[2usize][..], &[6., 15.][..]));
    let s = reduce("Sum", m(), vec![-2i64], true).unwrap();
    assert_eq!((s.dims(), s.as_slice::<f32>().unwrap()), (&[1usize, 3][..], &[5., 7., 9.][..]));
    let s = reduce("Mean", m(), vec![0i32, 1], false).unwrap();
    assert_eq!((s.rank(), s.as_slice::<f32>().unwrap()), (0, &[3.5][..]));
    let s = reduce("Max", m(), vec![0i32, -1], true).unwrap();
    assert_eq!((s.dims(), s.as_slice::<f32>().unwrap()), (&[1usize, 1][..], &[6.][..]));
    let s = reduce("Min", m(), vec![1i32], false).unwrap();
    assert_eq!(s.as_slice::<f32>().unwrap(), &[1., 4.]);
    let s = reduce("Prod", m(), vec![0i32], false).unwrap();
    assert_eq!(s.as_slice::<f32>().unwrap(), &[4., 10., 18.]);
    let id = reduce("Sum", m(), Vec::<i32>::new(), false).unwrap();
    assert_eq!(id, m());
}

#[test]
fn integer_mean_and_empty() {
    let x = Tensor::vec(vec![i32::MAX, i32::MAX]);
    assert_eq!(reduce("Mean", x, vec![0i32], false).unwrap().as_slice::<i32>().unwrap(), &[i32::MAX]);
    let x = Tensor::vec(vec![-1i32, -2, -2]);
    assert_eq!(reduce("Mean", x, vec![0i32], false).unwrap().as_slice::<i32>().unwrap(), &[-1]);
    let x = Tensor::vec(vec![200u8, 200, 200]);
    assert_eq!(reduce("Mean", x.clone(), vec![0i32], false).unwrap().as_slice::<u8>().unwrap(), &[200]);
    assert_eq!(reduce("Sum", x, vec![0i32], false).unwrap().as_slice::<u8>().unwrap(), &[88]);
    let e = Tensor::zeros(DataType::Float, vec![0, 3]).unwrap();
    let mean = reduce("Mean", e.clone(), vec![0i32], false).unwrap();
    assert!(mean.as_slice::<f32>().unwrap().iter().all(|v| v.is_nan()));
    let mx = reduce("Max", e, vec![0i32], false).unwrap();
    assert_eq!(mx.as_slice::<f32>().unwrap(), &[f32::NEG_INFINITY; 3]);
    let e = Tensor::zeros(DataType::Int64, vec![0]).unwrap();
    assert_eq!(reduce("Mean", e, vec![0i32], false).unwrap().as_slice::<i64>().unwrap(), &[0]);
}

#[test]
fn errors() {
    let e = reduce("Sum", m(), vec![2i32], false).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Invalid reduction dimension (2 for input with 2 dimension(s)"), "{e}");
    let e = reduce("Sum", m(), vec![1i32, -1], false).unwrap_err();
    assert!(e.message.contains("Axes contains duplicate dimension: 1"), "{e}");
    let e = reduce("Sum", Tensor::scalar(3.0f32), vec![0i32], false).unwrap_err();
    assert!(e.message.contains("(0 for input with 0 dimension(s)"), "{e}");
    let e = reduce("Sum", Tensor::vec(vec![true]), vec![0i32], false).unwrap_err();
    assert_eq!(e.code, Code::NotFound);
}

#[test]
fn large_sum_is_accurate() {
    let n = 1_000_000usize;
    let x = Tensor::vec((0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect::<Vec<_>>());
    let want: f64 = x.to_f64_vec().unwrap().iter().sum();
    let s = reduce("Sum", x, vec![0i32], false).unwrap().as_slice::<f32>().unwrap()[0] as f64;
    assert!((s - want).abs() / want < 1e-6, "{s} vs {want}");
}
