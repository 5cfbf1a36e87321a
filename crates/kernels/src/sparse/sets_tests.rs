//! The `tf.sets` kernels' errors with TensorFlow 2.21's codes and messages (printed by
//! scripts/golden/sets.py), and the walk order of unsorted sparse groups.

use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use crate::testutil::{expect_node_error, node, run_kernel};

fn m(rows: usize, v: &[i64]) -> Tensor {
    Tensor::new(vec![rows, v.len() / rows.max(1)], v.to_vec()).unwrap()
}

fn v64(v: &[i64]) -> Tensor {
    Tensor::new(vec![v.len()], v.to_vec()).unwrap()
}

fn v32(v: &[i32]) -> Tensor {
    Tensor::new(vec![v.len()], v.to_vec()).unwrap()
}

fn run(op: &str, set_op: Option<&str>, validate: bool, inputs: Vec<Tensor>) -> Result<Vec<Tensor>, Status> {
    let mut attrs = vec![("validate_indices", attr::bool(validate)), ("T", attr::ty(DataType::Int32))];
    if let Some(s) = set_op {
        attrs.push(("set_operation", attr::string(s)));
    }
    let outs = if op == "SetSize" { 1 } else { 3 };
    run_kernel(node(op, &attrs), inputs, outs)
}

#[test]
fn set_size_errors() {
    let inv = Code::InvalidArgument;
    let size = |ix: Tensor, vals: &[i32], shape: &[i64], validate: bool| {
        run("SetSize", None, validate, vec![ix, v32(vals), v64(shape)])
    };
    expect_node_error(
        size(m(3, &[0, 1, 0, 0, 1, 2]), &[1, 2, 3], &[2, 3], true),
        inv,
        "indices[1] = [0,0] is out of order",
    );
    expect_node_error(size(m(1, &[0]), &[1], &[3], true), inv, "Invalid rank 1.");
    expect_node_error(size(m(2, &[0, 0, 0, 0]), &[1, 1], &[2, 3], true), inv, "indices[1] = [0,0] is repeated");
    expect_node_error(
        size(m(1, &[0, 3]), &[1], &[2, 3], true),
        inv,
        "indices[0] = [0,3] is out of bounds: need 0 <= index < [2,3]",
    );
    expect_node_error(size(m(1, &[0, 3]), &[1], &[2, 3], false), Code::Internal, "indices[0, 1] expected < 3, got 3.");
    expect_node_error(size(m(1, &[2, 0]), &[1], &[2, 3], false), Code::Internal, "indices[0, 0] expected < 2, got 2.");
    expect_node_error(size(m(1, &[0, 0]), &[1], &[2, 0], false), Code::Internal, "Invalid dim_size[1] = 0.");
    expect_node_error(size(m(1, &[-1, 0]), &[1], &[2, 3], false), inv, "is negative");
    expect_node_error(size(m(1, &[0, 0]), &[1, 2], &[2, 3], true), inv, "(indices = 1, values = 2)");
    expect_node_error(size(m(1, &[0, 0, 0]), &[1], &[2, 3], true), inv, "Order length must be SparseTensor rank.");
    expect_node_error(
        size(m(0, &[]), &[], &[2, -3], true),
        inv,
        "Expected shape dimensions to be non-negative, got -3",
    );
    // Unsorted without validation: runs in entry order ([0, 1], [0, 0] are one group).
    let out = size(m(3, &[0, 1, 0, 0, 1, 2]), &[1, 2, 3], &[2, 3], false).unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[2, 1]);
}

#[test]
fn set_operation_errors_and_walk_order() {
    let inv = Code::InvalidArgument;
    let dense = |a: Tensor, b: Tensor, op: &str| run("DenseToDenseSetOperation", Some(op), true, vec![a, b]);
    let d2 = |rows: usize, v: &[i32]| Tensor::new(vec![rows, v.len() / rows], v.to_vec()).unwrap();
    expect_node_error(dense(v32(&[1, 2]), v32(&[1, 2]), "union"), inv, "Shape [2] has rank 1 < 2");
    expect_node_error(dense(d2(1, &[1, 2]), d2(2, &[1, 2, 3, 4]), "union"), inv, "Mismatched shapes [1] vs [2]");
    let e = run_kernel(
        node("DenseToDenseSetOperation", &[("set_operation", attr::string("XOR")), ("T", attr::ty(DataType::Int32))]),
        vec![d2(1, &[1]), d2(1, &[1])],
        3,
    );
    expect_node_error(e, inv, "Invalid set_operation xor.");
    // Upper case names are accepted.
    let out = dense(d2(1, &[1, 2]), d2(1, &[2, 3]), "A-B").unwrap();
    assert_eq!(out[1].as_slice::<i32>().unwrap(), &[1]);
    // Sparse groups taken in walk order: unsorted a gives [1] before [0] again.
    let ss = run(
        "SparseToSparseSetOperation",
        Some("union"),
        false,
        vec![m(2, &[1, 0, 0, 0]), v32(&[1, 2]), v64(&[2, 2]), m(1, &[0, 0]), v32(&[5]), v64(&[2, 2])],
    )
    .unwrap();
    assert_eq!(ss[0].as_slice::<i64>().unwrap(), &[0, 0, 1, 0, 0, 0]);
    assert_eq!(ss[1].as_slice::<i32>().unwrap(), &[5, 1, 2]);
    assert_eq!(ss[2].as_slice::<i64>().unwrap(), &[2, 1]);
    // Dense to sparse: a run behind the walk is never taken.
    let ds = run(
        "DenseToSparseSetOperation",
        Some("union"),
        false,
        vec![d2(2, &[1, 2, 3, 4]), m(2, &[1, 0, 0, 0]), v32(&[7, 8]), v64(&[2, 2])],
    )
    .unwrap();
    assert_eq!(ds[1].as_slice::<i32>().unwrap(), &[1, 2, 3, 4, 7]);
    assert_eq!(ds[2].as_slice::<i64>().unwrap(), &[2, 3]);
    let e = run(
        "DenseToSparseSetOperation",
        Some("union"),
        false,
        vec![d2(2, &[1, 2, 3, 4]), m(1, &[0, 5]), v32(&[7]), v64(&[2, 2])],
    );
    expect_node_error(e, Code::Internal, "indices[0, 1] expected < 2, got 5.");
}
