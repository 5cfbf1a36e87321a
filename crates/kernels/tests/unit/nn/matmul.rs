use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn mm(a: Tensor, b: Tensor, ta: bool, tb: bool) -> Result<Tensor, Status> {
    let n =
        node("MatMul", &[("T", attr::ty(a.dtype())), ("transpose_a", attr::bool(ta)), ("transpose_b", attr::bool(tb))]);
    run_kernel(n, vec![a, b], 1).map(|mut v| v.remove(0))
}

#[test]
fn products_with_transposes() {
    let a = Tensor::new(vec![2, 3], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap();
    let b = Tensor::new(vec![3, 2], vec![7.0f32, 8., 9., 10., 11., 12.]).unwrap();
    let c = mm(a.clone(), b.clone(), false, false).unwrap();
    assert_eq!(c.dims(), &[2, 2]);
    assert_eq!(c.as_slice::<f32>().unwrap(), &[58., 64., 139., 154.]);
    // a^T (3x2 stored as 2x3) times b^T (2x3 stored as 3x2) = 3x3
    let c = mm(a.clone(), b.clone(), true, true).unwrap();
    assert_eq!(c.dims(), &[3, 3]);
    assert_eq!(c.as_slice::<f32>().unwrap(), &[39., 49., 59., 54., 68., 82., 69., 87., 105.]);
    let ai = Tensor::new(vec![2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
    let c = mm(ai.clone(), ai, false, true).unwrap();
    assert_eq!(c.as_slice::<i32>().unwrap(), &[14, 32, 32, 77]);
}

#[test]
fn mismatched_inner_dims_name_node_and_shapes() {
    let a = Tensor::zeros(DataType::Float, vec![2, 3]).unwrap();
    let b = Tensor::zeros(DataType::Float, vec![4, 5]).unwrap();
    let e = mm(a, b, false, false).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("'test'") && e.message.contains("In[0]: [2,3], In[1]: [4,5]"), "{e}");
    let v = Tensor::zeros(DataType::Float, vec![3]).unwrap();
    let e = mm(v.clone(), v, false, false).unwrap_err();
    assert!(e.message.contains("not a matrix"), "{e}");
}

#[test]
fn a_huge_empty_product_is_refused() {
    let a = Tensor::zeros(DataType::Float, vec![1 << 40, 0]).unwrap();
    let b = Tensor::zeros(DataType::Float, vec![0, 1 << 40]).unwrap();
    let e = mm(a, b, false, false).unwrap_err();
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
}

#[test]
fn empty_inner_dim_gives_zeros() {
    let a = Tensor::zeros(DataType::Double, vec![2, 0]).unwrap();
    let b = Tensor::zeros(DataType::Double, vec![0, 3]).unwrap();
    let c = mm(a, b, false, false).unwrap();
    assert_eq!(c.as_slice::<f64>().unwrap(), &[0.0; 6]);
}

#[test]
fn complex_products_transpose_without_conjugating() {
    use ferroflow_core::C64;
    let c = |re: f32, im: f32| C64::new(re, im);
    let a = Tensor::new(vec![2, 2], vec![c(1.0, 1.0), c(2.0, 0.0), c(0.0, 0.0), c(0.0, -1.0)]).unwrap();
    let b = Tensor::new(vec![2, 1], vec![c(0.0, 1.0), c(3.0, 0.0)]).unwrap();
    let p = mm(a.clone(), b.clone(), false, false).unwrap();
    // (1+i)i + 2*3 = 5+i; 0*i + (-i)*3 = -3i.
    assert_eq!(p.as_slice::<C64>().unwrap(), &[c(5.0, 1.0), c(0.0, -3.0)]);
    // a^T b: column 0 of a is [1+i, 0]: (1+i)i = -1+i; column 1 [2, -i]: 2i - 3i = -i.
    let p = mm(a, b, true, false).unwrap();
    assert_eq!(p.as_slice::<C64>().unwrap(), &[c(-1.0, 1.0), c(0.0, -1.0)]);
}
