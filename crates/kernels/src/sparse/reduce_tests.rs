//! Errors of the sparse reductions with TensorFlow 2.21's messages, and the sparse-output
//! order and `keep_dims` layout.

use ferroflow_core::{attr, Code, Status, Tensor};

use crate::testutil::{expect_error, node, run_kernel};

fn run(op: &str, idx: Tensor, vals: Vec<f32>, shape: Tensor, axes: Tensor, keep: bool) -> Result<Vec<Tensor>, Status> {
    let n = vals.len();
    let outputs = if op.ends_with("Sparse") { 3 } else { 1 };
    run_kernel(
        node(op, &[("keep_dims", attr::bool(keep)), ("T", attr::ty(ferroflow_core::DataType::Float))]),
        vec![idx, Tensor::new(vec![n], vals).unwrap(), shape, axes],
        outputs,
    )
}

fn m(rows: usize, cols: usize, v: &[i64]) -> Tensor {
    Tensor::new(vec![rows, cols], v.to_vec()).unwrap()
}

fn v64(v: &[i64]) -> Tensor {
    Tensor::new(vec![v.len()], v.to_vec()).unwrap()
}

fn v32(v: &[i32]) -> Tensor {
    Tensor::new(vec![v.len()], v.to_vec()).unwrap()
}

fn err(r: Result<Vec<Tensor>, Status>, want: &str) {
    expect_error(r, Code::InvalidArgument, want);
}

#[test]
fn sparse_output_is_grouped_in_kept_order() {
    // Entries out of order; reducing axis 1 of [3, 4] groups rows 2, 0 (twice), 1.
    let idx = m(4, 2, &[2, 1, 0, 3, 1, 0, 0, 1]);
    let out =
        run("SparseReduceSumSparse", idx.clone(), vec![1.0, 2.0, 3.0, 4.0], v64(&[3, 4]), v32(&[1]), false).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), &[0, 1, 2]);
    assert_eq!(out[1].as_slice::<f32>().unwrap(), &[6.0, 3.0, 1.0]);
    assert_eq!(out[2].as_slice::<i64>().unwrap(), &[3]);
    let keep = run("SparseReduceMaxSparse", idx, vec![1.0, 2.0, 3.0, 4.0], v64(&[3, 4]), v32(&[-1]), true).unwrap();
    assert_eq!(keep[0].dims(), &[3, 2]);
    assert_eq!(keep[0].as_slice::<i64>().unwrap(), &[0, 0, 1, 0, 2, 0]);
    assert_eq!(keep[1].as_slice::<f32>().unwrap(), &[4.0, 3.0, 1.0]);
    assert_eq!(keep[2].as_slice::<i64>().unwrap(), &[3, 1]);
}

#[test]
fn tensorflows_errors() {
    let i2 = || m(2, 2, &[0, 0, 1, 2]);
    for op in ["SparseReduceSumSparse", "SparseReduceMaxSparse", "SparseReduceSum"] {
        err(
            run(op, i2(), vec![1.0, 2.0], v64(&[2, 3]), v32(&[2]), false),
            "Invalid reduction dimension 2, for input with 2 dimensions.",
        );
        err(
            run(op, i2(), vec![1.0, 2.0], v64(&[2, 3]), v32(&[-3]), false),
            "Invalid reduction dimension -3, for input with 2 dimensions.",
        );
        err(
            run(op, i2(), vec![1.0, 2.0], v64(&[2, 3]), Tensor::new(vec![1, 1], vec![1i32]).unwrap(), false),
            "Expected reduction_axes to be a scalar or a vector; got shape:",
        );
    }
    let sp = "SparseReduceSumSparse";
    err(
        run(sp, i2(), vec![1.0, 2.0], m(1, 2, &[2, 3]), v32(&[1]), false),
        "Expected input_shape to be a vector; got shape:",
    );
    err(
        run(sp, m(2, 3, &[0; 6]), vec![1.0, 2.0], v64(&[2, 3]), v32(&[1]), false),
        "Order length must be SparseTensor rank.",
    );
    err(
        run(sp, i2(), vec![1.0, 2.0], v64(&[2, -3]), v32(&[1]), false),
        "Expected shape dimensions to be non-negative, got -3",
    );
    assert!(run(sp, i2(), vec![1.0], v64(&[2, 3]), v32(&[1]), false).is_err());
}
