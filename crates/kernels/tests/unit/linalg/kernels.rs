//! Unit tests of the linear-algebra kernels, through the kernel registry.

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run(op: &str, extra: &[(&str, AttrValue)], inputs: Vec<Tensor>, outs: usize) -> Result<Vec<Tensor>, Status> {
    let mut a = vec![("T", attr::ty(inputs[0].dtype()))];
    a.extend(extra.iter().cloned());
    run_kernel(node(op, &a), inputs, outs)
}

fn f64s(t: &Tensor) -> Vec<f64> {
    t.as_slice::<f64>().unwrap().to_vec()
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-9, "{a:?} vs {b:?}");
    }
}

fn m() -> Tensor {
    // [[4, 2], [1, 3]]: det 10.
    Tensor::new(vec![2usize, 2], vec![4.0f64, 2., 1., 3.]).unwrap()
}

#[test]
fn determinant_inverse_solve() {
    close(&f64s(&run("MatrixDeterminant", &[], vec![m()], 1).unwrap()[0]), &[10.]);
    let p = Tensor::new(vec![2usize, 2, 2], vec![0.0f64, 1., 1., 0., 2., 0., 0., -3.]).unwrap();
    close(&f64s(&run("MatrixDeterminant", &[], vec![p.clone()], 1).unwrap()[0]), &[-1., -6.]);
    let o = run("LogMatrixDeterminant", &[], vec![p], 2).unwrap();
    close(&f64s(&o[0]), &[-1., -1.]);
    close(&f64s(&o[1]), &[0., 6f64.ln()]);
    let inv = run("MatrixInverse", &[("adjoint", attr::bool(false))], vec![m()], 1).unwrap();
    close(&f64s(&inv[0]), &[0.3, -0.2, -0.1, 0.4]);
    let inv_t = run("MatrixInverse", &[("adjoint", attr::bool(true))], vec![m()], 1).unwrap();
    close(&f64s(&inv_t[0]), &[0.3, -0.1, -0.2, 0.4]);
    let b = Tensor::new(vec![2usize, 1], vec![10.0f64, 5.]).unwrap();
    let x = run("MatrixSolve", &[("adjoint", attr::bool(false))], vec![m(), b], 1).unwrap();
    close(&f64s(&x[0]), &[2., 1.]);
    let sing = Tensor::new(vec![2usize, 2], vec![1.0f64, 2., 2., 4.]).unwrap();
    let e = run("MatrixInverse", &[("adjoint", attr::bool(false))], vec![sing.clone()], 1).unwrap_err();
    assert!(e.message.contains("Input is not invertible."), "{e}");
    close(&f64s(&run("MatrixDeterminant", &[], vec![sing], 1).unwrap()[0]), &[0.]);
    let e = run("MatrixDeterminant", &[], vec![Tensor::new(vec![2usize, 3], vec![0.0f64; 6]).unwrap()], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}

#[test]
fn cholesky_and_triangular() {
    let a = Tensor::new(vec![2usize, 2], vec![4.0f64, 2., 2., 5.]).unwrap();
    let l = run("Cholesky", &[], vec![a], 1).unwrap();
    close(&f64s(&l[0]), &[2., 0., 1., 2.]);
    let bad = Tensor::new(vec![2usize, 2], vec![1.0f64, 2., 2., 1.]).unwrap();
    assert!(run("Cholesky", &[], vec![bad], 1)
        .unwrap_err()
        .message
        .contains("Cholesky decomposition was not successful"));
    let lo = Tensor::new(vec![2usize, 2], vec![2.0f64, 0., 1., 2.]).unwrap();
    let b = Tensor::new(vec![2usize, 1], vec![4.0f64, 6.]).unwrap();
    let opts = |lower: bool, adj: bool| vec![("lower", attr::bool(lower)), ("adjoint", attr::bool(adj))];
    close(
        &f64s(&run("MatrixTriangularSolve", &opts(true, false), vec![lo.clone(), b.clone()], 1).unwrap()[0]),
        &[2., 2.],
    );
    // Lᵀ x = b: [[2,1],[0,2]] x = [4,6] → x = [0.5, 3].
    close(
        &f64s(&run("MatrixTriangularSolve", &opts(true, true), vec![lo.clone(), b.clone()], 1).unwrap()[0]),
        &[0.5, 3.],
    );
    let up = Tensor::new(vec![2usize, 2], vec![2.0f64, 1., 0., 2.]).unwrap();
    close(&f64s(&run("MatrixTriangularSolve", &opts(false, false), vec![up, b.clone()], 1).unwrap()[0]), &[0.5, 3.]);
    // Broadcast: one matrix, a batch of two right-hand sides.
    let bb = Tensor::new(vec![2usize, 2, 1], vec![4.0f64, 6., 2., 1.]).unwrap();
    let o = run("MatrixTriangularSolve", &opts(true, false), vec![lo, bb], 1).unwrap();
    assert_eq!(o[0].dims(), &[2, 2, 1]);
    close(&f64s(&o[0]), &[2., 2., 1., 0.]);
    let f = Tensor::new(vec![1usize, 1], vec![1.0f32]).unwrap();
    assert_eq!(run("Cholesky", &[], vec![f], 1).unwrap()[0].dtype(), DataType::Float);
}
