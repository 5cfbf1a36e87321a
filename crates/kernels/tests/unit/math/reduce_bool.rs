use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn red(op: &str, x: Tensor, axes: Tensor, keep: bool) -> Result<Tensor, Status> {
    let n = node(op, &[("Tidx", attr::ty(axes.dtype())), ("keep_dims", attr::bool(keep))]);
    run_kernel(n, vec![x, axes], 1).map(|mut v| v.remove(0))
}

#[test]
fn all_and_any() {
    let x = Tensor::new(vec![2usize, 3], vec![true, false, true, true, true, true]).unwrap();
    let a = red("All", x.clone(), Tensor::scalar(1i32), false).unwrap();
    assert_eq!((a.dims(), a.as_slice::<bool>().unwrap()), (&[2usize][..], &[false, true][..]));
    let a = red("Any", x.clone(), Tensor::vec(vec![-2i64]), true).unwrap();
    assert_eq!((a.dims(), a.as_slice::<bool>().unwrap()), (&[1usize, 3][..], &[true, true, true][..]));
    let a = red("All", x.clone(), Tensor::vec(vec![0i32, 1]), false).unwrap();
    assert_eq!(a.as_slice::<bool>().unwrap(), &[false]);
    let id = red("Any", x.clone(), Tensor::vec(Vec::<i32>::new()), false).unwrap();
    assert_eq!(id, x);
    let e = Tensor::zeros(DataType::Bool, vec![0, 2]).unwrap();
    assert_eq!(red("All", e.clone(), Tensor::scalar(0i32), false).unwrap().as_slice::<bool>().unwrap(), &[true; 2]);
    assert_eq!(red("Any", e, Tensor::scalar(0i32), false).unwrap().as_slice::<bool>().unwrap(), &[false; 2]);
    let err = red("All", x, Tensor::scalar(2i32), false).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument);
}
