use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn reverses_each_prefix() {
    let n = node(
        "ReverseSequence",
        &[("T", attr::ty(DataType::Int32)), ("seq_dim", attr::int(1)), ("batch_dim", attr::int(0))],
    );
    let x = Tensor::new(vec![2, 4], (0..8i32).collect::<Vec<_>>()).unwrap();
    let o = run_kernel(n.clone(), vec![x.clone(), Tensor::vec(vec![3i64, 0])], 1).unwrap();
    assert_eq!(o[0], Tensor::new(vec![2, 4], vec![2i32, 1, 0, 3, 4, 5, 6, 7]).unwrap());
    let e = run_kernel(n, vec![x, Tensor::vec(vec![5i64, 0])], 1).unwrap_err();
    assert!(e.message.contains("seq_lengths(0) > input.dims(1)"), "{e}");
}
