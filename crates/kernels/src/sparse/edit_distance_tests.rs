//! `EditDistance`'s errors with TensorFlow 2.21's codes and messages (printed by
//! scripts/golden/edit_distance.py) and its Levenshtein distance.

use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use super::levenshtein;
use crate::testutil::{expect_node_error, node, run_kernel};

type Sp = (Tensor, Tensor, Tensor);

fn sp(rows: usize, ix: &[i64], vals: &[i32], shape: &[i64]) -> Sp {
    (
        Tensor::new(vec![rows, ix.len().checked_div(rows).unwrap_or(shape.len())], ix.to_vec()).unwrap(),
        Tensor::new(vec![vals.len()], vals.to_vec()).unwrap(),
        Tensor::new(vec![shape.len()], shape.to_vec()).unwrap(),
    )
}

fn run(h: Sp, t: Sp) -> Result<Vec<Tensor>, Status> {
    run_kernel(
        node("EditDistance", &[("normalize", attr::bool(true)), ("T", attr::ty(DataType::Int32))]),
        vec![h.0, h.1, h.2, t.0, t.1, t.2],
        1,
    )
}

#[test]
fn levenshtein_counts_edits() {
    assert_eq!(levenshtein(b"kitten", b"sitting"), 3);
    assert_eq!(levenshtein(b"", b"abc"), 3);
    assert_eq!(levenshtein(b"abc", b"abc"), 0);
    assert_eq!(levenshtein(&[f32::NAN], &[f32::NAN]), 1);
}

#[test]
fn tensorflows_errors() {
    let inv = Code::InvalidArgument;
    let h = || sp(3, &[0, 0, 0, 1, 1, 0], &[1, 2, 3], &[2, 3]);
    expect_node_error(
        run(sp(1, &[0], &[1], &[1]), sp(1, &[0], &[1], &[1])),
        inv,
        "must have rank at least 2, but truth_shape rank is: 1",
    );
    expect_node_error(
        run(h(), sp(1, &[0, 0, 0], &[1], &[1, 1, 2])),
        inv,
        "Expected truth and hypothesis to have matching ranks, but their shapes are: [3] and [2]",
    );
    expect_node_error(
        run(sp(0, &[], &[], &[0, 2]), sp(0, &[], &[], &[0, 2])),
        inv,
        "Got output shape [0] which has 0 elements",
    );
    expect_node_error(
        run(sp(1, &[5, 0], &[1], &[1, 2]), sp(1, &[0, 0], &[1], &[2, 2])),
        Code::Internal,
        "Got an inner product 5 which would require writing to outside of the buffer for the output tensor (max \
         elements 2)",
    );
    expect_node_error(run(sp(3, &[0, 0, 0, 1, 1, 0], &[1, 2, 3], &[2, -3]), h()), inv, "Dimension -3 must be >= 0");
    expect_node_error(
        run(sp(3, &[0, 0, 0, 1, 1, 0], &[1, 2], &[2, 3]), h()),
        inv,
        "Expected hypothesis_values.NumElements == #rows(hypothesis_indices), their shapes are: [2] and [3,2]",
    );
    let vector = (Tensor::new(vec![2], vec![0i64, 0]).unwrap(), h().1, h().2);
    expect_node_error(run(vector, h()), inv, "hypothesis_indices should be a matrix, but got shape: [2]");
    expect_node_error(
        run(h(), sp(1, &[0, 0, 0], &[1], &[2, 3])),
        inv,
        "Expected truth_shape.NumElements == #cols(truth_indices), their shapes are: [2] and [1,3]",
    );
    // A hostile shape whose element count overflows is refused before allocating.
    let huge = sp(1, &[0, 0], &[1], &[1 << 40, 1 << 40]);
    expect_node_error(run(huge, sp(1, &[0, 0], &[1], &[1, 2])), inv, "would have more than 2**63 - 1 elements");
}
