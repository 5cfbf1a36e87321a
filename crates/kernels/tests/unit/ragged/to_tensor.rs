//! `RaggedTensorToTensor` beyond the golden cases: malformed partitions and defaults are
//! errors naming the problem, and a first dimension far larger than the output is cut
//! without being allocated.

use ferroflow_core::{attr, Code, DataType, Status, Tensor};
use ferroflow_kernels::testutil::{node, run_kernel};

fn to_tensor(
    types: &[&str],
    shape: Tensor,
    values: Tensor,
    default: Tensor,
    parts: Vec<Tensor>,
) -> Result<Tensor, Status> {
    let n = node(
        "RaggedTensorToTensor",
        &[
            ("T", attr::ty(values.dtype())),
            ("Tindex", attr::ty(DataType::Int64)),
            ("Tshape", attr::ty(DataType::Int64)),
            ("num_row_partition_tensors", attr::int(types.len() as i64)),
            ("row_partition_types", attr::list_string(types)),
        ],
    );
    let mut inputs = vec![shape, values, default];
    inputs.extend(parts);
    Ok(run_kernel(n, inputs, 1)?.remove(0))
}

fn vals() -> Tensor {
    Tensor::vec(vec![1.0f32, 2., 3., 4.])
}

#[test]
fn malformed_partitions_are_invalid_arguments() {
    let unknown = || Tensor::scalar(-1i64);
    let zero = || Tensor::scalar(0.0f32);
    let cases: Vec<(Vec<&str>, Vec<Tensor>, &str)> = vec![
        (vec!["ROW_SPLITS"], vec![Tensor::vec(vec![1i64, 2, 4])], "row_splits must start at 0"),
        (vec!["ROW_SPLITS"], vec![Tensor::vec(vec![0i64, 3, 2, 4])], "non-decreasing"),
        (vec!["ROW_SPLITS"], vec![Tensor::vec(vec![0i64, 1, 3])], "describe 3 values but values has 4 rows"),
        (
            vec!["FIRST_DIM_SIZE", "VALUE_ROWIDS"],
            vec![Tensor::scalar(3i64), Tensor::vec(vec![0i64, 2, 1, 1])],
            "value_rowids must be non-decreasing",
        ),
        (
            vec!["FIRST_DIM_SIZE", "VALUE_ROWIDS"],
            vec![Tensor::scalar(2i64), Tensor::vec(vec![0i64, 0, 1, 2])],
            "in [0, 2), got 2",
        ),
    ];
    for (types, parts, want) in cases {
        let e = to_tensor(&types, unknown(), vals(), zero(), parts).unwrap_err();
        assert!(e.code == Code::InvalidArgument && e.message.contains(want), "{types:?}: {e}");
    }
    let e =
        to_tensor(&["VALUE_ROWIDS"], unknown(), vals(), zero(), vec![Tensor::vec(vec![0i64, 0, 1, 1])]).unwrap_err();
    assert!(e.message.contains("Cannot handle VALUE_ROWIDS in first dimension"), "{e}");
    // A default that does not fit one value, and a shape of the wrong rank.
    let m = Tensor::new(vec![4, 2], vec![0.0f32; 8]).unwrap();
    let e = to_tensor(&["ROW_SPLITS"], unknown(), m, Tensor::vec(vec![0.0f32; 3]), vec![Tensor::vec(vec![0i64, 4])])
        .unwrap_err();
    assert!(e.message.contains("are incompatible"), "{e}");
    let e = to_tensor(&["ROW_SPLITS"], Tensor::vec(vec![-1i64]), vals(), zero(), vec![Tensor::vec(vec![0i64, 4])])
        .unwrap_err();
    assert!(e.message.contains("rt_input.rank = 2 but shape.rank = 1"), "{e}");
}

#[test]
fn a_huge_first_dimension_cut_by_shape_is_not_allocated() {
    // 2^40 rows, of which the output keeps 2: only the rows that land are tracked.
    let out = to_tensor(
        &["FIRST_DIM_SIZE", "VALUE_ROWIDS"],
        Tensor::vec(vec![2i64, 3]),
        vals(),
        Tensor::scalar(-1.0f32),
        vec![Tensor::scalar(1i64 << 40), Tensor::vec(vec![0i64, 0, 1, (1 << 40) - 1])],
    )
    .unwrap();
    assert_eq!(out.dims(), &[2, 3]);
    assert_eq!(out.as_slice::<f32>().unwrap(), &[1., 2., -1., 3., -1., -1.]);
    // Without the cut the output itself is refused, not attempted.
    let e = to_tensor(
        &["FIRST_DIM_SIZE", "VALUE_ROWIDS"],
        Tensor::scalar(-1i64),
        vals(),
        Tensor::scalar(0.0f32),
        vec![Tensor::scalar(1i64 << 40), Tensor::vec(vec![0i64, 0, 1, 2])],
    )
    .unwrap_err();
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
}
