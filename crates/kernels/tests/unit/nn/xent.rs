use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn dense(l: Tensor, y: Tensor) -> Result<Vec<Tensor>, Status> {
    run_kernel(node("SoftmaxCrossEntropyWithLogits", &[("T", attr::ty(l.dtype()))]), vec![l, y], 2)
}

fn sparse(l: Tensor, y: Tensor) -> Result<Vec<Tensor>, Status> {
    let n =
        node("SparseSoftmaxCrossEntropyWithLogits", &[("T", attr::ty(l.dtype())), ("Tlabels", attr::ty(y.dtype()))]);
    run_kernel(n, vec![l, y], 2)
}

#[test]
fn dense_and_sparse_agree_on_one_hot() {
    let l = Tensor::new(vec![2, 3], vec![1.0f64, 2.0, 3.0, -1.0, 0.0, 5.0]).unwrap();
    let y = Tensor::new(vec![2, 3], vec![0.0f64, 0.0, 1.0, 1.0, 0.0, 0.0]).unwrap();
    let d = dense(l.clone(), y).unwrap();
    let s = sparse(l, Tensor::vec(vec![2i32, 0])).unwrap();
    let e: f64 = [1.0f64, 2.0, 3.0].iter().map(|v| (v - 3.0f64).exp()).sum();
    let want0 = e.ln();
    for t in [&d, &s] {
        let loss = t[0].as_slice::<f64>().unwrap();
        assert!((loss[0] - want0).abs() < 1e-12, "{loss:?}");
        let bp = t[1].as_slice::<f64>().unwrap();
        assert!((bp[2] - ((0.0f64).exp() / e - 1.0)).abs() < 1e-12);
        assert!((bp[0] - (-2.0f64).exp() / e).abs() < 1e-12);
    }
    assert_eq!(d[1], s[1]);
}

#[test]
fn dense_broadcasts_labels() {
    let l = Tensor::new(vec![2, 2], vec![0.0f32, 0.0, 1.0, 1.0]).unwrap();
    let y = Tensor::new(vec![1, 2], vec![0.5f32, 0.5]).unwrap();
    let d = dense(l, y).unwrap();
    assert_eq!(d[0].as_slice::<f32>().unwrap(), &[2.0f32.ln(), 2.0f32.ln()]);
    assert_eq!(d[1].as_slice::<f32>().unwrap(), &[0.0; 4]);
    let e =
        dense(Tensor::zeros(DataType::Float, vec![2, 3]).unwrap(), Tensor::zeros(DataType::Float, vec![3, 3]).unwrap());
    assert!(e.unwrap_err().message.contains("broadcastable"));
    let e = dense(Tensor::zeros(DataType::Float, vec![3]).unwrap(), Tensor::zeros(DataType::Float, vec![3]).unwrap());
    assert!(e.unwrap_err().message.contains("2-dimensional"));
}

#[test]
fn sparse_label_out_of_range() {
    let l = Tensor::zeros(DataType::Float, vec![2, 3]).unwrap();
    let e = sparse(l.clone(), Tensor::vec(vec![0i64, 5])).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("label value of 5 which is outside the valid range of [0, 3)"), "{e}");
    let e = sparse(l.clone(), Tensor::vec(vec![-1i32, 0])).unwrap_err();
    assert!(e.message.contains("label value of -1"), "{e}");
    let e = sparse(l, Tensor::vec(vec![0i32])).unwrap_err();
    assert!(e.message.contains("same first dimension"), "{e}");
}
