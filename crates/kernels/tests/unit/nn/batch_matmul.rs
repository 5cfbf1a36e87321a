use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn bmm(x: Tensor, y: Tensor, ax: bool, ay: bool) -> Result<Tensor, Status> {
    let n = node("BatchMatMulV2", &[("T", attr::ty(x.dtype())), ("adj_x", attr::bool(ax)), ("adj_y", attr::bool(ay))]);
    run_kernel(n, vec![x, y], 1).map(|mut v| v.remove(0))
}

#[test]
fn broadcasts_batches() {
    // x: [2,1,2,2], y: [3,2,1] -> out [2,3,2,1]
    let x = Tensor::new(vec![2, 1, 2, 2], vec![1.0f32, 0., 0., 1., 2., 0., 0., 2.]).unwrap();
    let y = Tensor::new(vec![3, 2, 1], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap();
    let z = bmm(x, y, false, false).unwrap();
    assert_eq!(z.dims(), &[2, 3, 2, 1]);
    assert_eq!(z.as_slice::<f32>().unwrap(), &[1., 2., 3., 4., 5., 6., 2., 4., 6., 8., 10., 12.]);
}

#[test]
fn adjoints_and_shared_rhs() {
    // x: [2,3,2] with adj_x -> [2,2,3]; y: [3,1] shared.
    let x = Tensor::new(vec![2, 3, 2], (0..12).map(|v| v as f64).collect::<Vec<_>>()).unwrap();
    let y = Tensor::new(vec![1, 3], vec![1.0f64, 1., 1.]).unwrap();
    let z = bmm(x.clone(), y.clone(), true, true).unwrap();
    assert_eq!(z.dims(), &[2, 2, 1]);
    assert_eq!(z.as_slice::<f64>().unwrap(), &[6., 9., 24., 27.]);
    let y = Tensor::new(vec![2, 1], vec![1.0f64, 10.]).unwrap();
    let z = bmm(x, y, false, false).unwrap();
    assert_eq!(z.dims(), &[2, 3, 1]);
    assert_eq!(z.as_slice::<f64>().unwrap(), &[10., 32., 54., 76., 98., 120.]);
}

#[test]
fn errors() {
    let x = Tensor::zeros(DataType::Float, vec![2, 2, 3]).unwrap();
    let y = Tensor::zeros(DataType::Float, vec![3, 3, 2]).unwrap();
    let e = bmm(x.clone(), y, false, false).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("compatible batch dimensions"), "{e}");
    let y = Tensor::zeros(DataType::Float, vec![2, 2]).unwrap();
    let e = bmm(x, y, false, false).unwrap_err();
    assert!(e.message.contains("Matrix size-incompatible: In[0]: [2,2,3], In[1]: [2,2]"), "{e}");
}
