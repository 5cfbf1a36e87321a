//! Numeric checks of the RaggedTensorToTensor gradient (values and default, ROW_SPLITS and
//! FIRST_DIM_SIZE + VALUE_ROWIDS, shapes that pad and cut, two ragged dimensions, values
//! with inner dimensions and a broadcast default) and of the RaggedTensorToSparse gradient.

use crate::util::*;
use ferroflow_core::Tensor;
use ferroflow_graph::{ops, Output, Scope};

fn splits(s: &Scope, v: &[i64]) -> Output {
    ops::constant(s, Tensor::vec(v.to_vec()))
}

/// Checks the gradients of values (input 0) and default (input 1) of a to-tensor built with
/// `shape`, the partitions and their types.
fn check_case(what: &str, vals: [Tensor; 2], shape: &[i64], parts: &[Vec<i64>], types: &[&str]) {
    for mode in [Mode::Static, Mode::Dims] {
        let build = |s: &Scope, v: &[Output]| {
            let p: Vec<Output> =
                parts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        if types[i] == "FIRST_DIM_SIZE" {
                            ops::constant(s, Tensor::scalar(p[0]))
                        } else {
                            splits(s, p)
                        }
                    })
                    .collect();
            let shape = ops::constant(s, Tensor::vec(shape.to_vec()));
            ops::ragged_tensor_to_tensor(s, shape, x(v, 0), x(v, 1), p, types)
        };
        ok(&format!("RaggedTensorToTensor {what} {mode:?}"), check(build, &vals, &[0, 1], mode), TOL);
    }
}

#[test]
fn ragged_tensor_to_tensor() {
    let sp = || vec![0, 3, 3, 7, 8];
    let v8 = || uniform(&[8], 500);
    let scalar = || Tensor::scalar(0.5f64);
    check_case("pad", [v8(), scalar()], &[-1, -1], &[sp()], &["ROW_SPLITS"]);
    check_case("more rows", [v8(), scalar()], &[6, 5], &[sp()], &["ROW_SPLITS"]);
    check_case("cut", [v8(), scalar()], &[3, 2], &[sp()], &["ROW_SPLITS"]);
    check_case(
        "rowids",
        [v8(), scalar()],
        &[4, 3],
        &[vec![6], vec![0, 0, 0, 2, 2, 2, 2, 5]],
        &["FIRST_DIM_SIZE", "VALUE_ROWIDS"],
    );
    check_case(
        "two ragged",
        [uniform(&[6], 501), scalar()],
        &[-1, 2, -1],
        &[vec![0, 2, 2, 4], vec![0, 1, 4, 4, 6]],
        &["ROW_SPLITS", "ROW_SPLITS"],
    );
    check_case(
        "inner, broadcast default",
        [uniform(&[8, 2, 3], 502), uniform(&[2, 1], 503)],
        &[-1, 3, 2, 3],
        &[sp()],
        &["ROW_SPLITS"],
    );
    check_case(
        "inner, full default",
        [uniform(&[8, 2, 3], 504), uniform(&[2, 3], 505)],
        &[5, -1, 2, 3],
        &[sp()],
        &["ROW_SPLITS"],
    );
}

#[test]
fn ragged_tensor_to_sparse() {
    // Two ragged levels over values with an inner dim of 2: the values' gradient is the
    // sparse values' gradient in the values' shape.
    for mode in [Mode::Static, Mode::Dims] {
        let build = |s: &Scope, v: &[Output]| {
            s.op("RaggedTensorToSparse")
                .input_list(vec![splits(s, &[0, 2, 3]), splits(s, &[0, 1, 1, 4])])
                .input(x(v, 0))
                .build()
                .output(1)
        };
        ok(&format!("RaggedTensorToSparse {mode:?}"), check(build, &[uniform(&[4, 2], 520)], &[0], mode), TOL);
    }
}
