//! Error classes of fractional pooling (TensorFlow 2.21's, printed by
//! scripts/golden/fractional_pool.py) and the non-deterministic contract; values are the
//! golden cases'.

use ferroflow_core::{attr, Code, DataType, Tensor};

use crate::testutil::{expect_node_error, node, run_kernel};

fn pool_node(op: &str, ratio: &[f32], deterministic: bool, seed: i64) -> ferroflow_core::proto::NodeDef {
    node(
        op,
        &[
            ("T", attr::ty(DataType::Float)),
            ("pooling_ratio", attr::list_float(ratio)),
            ("pseudo_random", attr::bool(false)),
            ("overlapping", attr::bool(false)),
            ("deterministic", attr::bool(deterministic)),
            ("seed", attr::int(seed)),
            ("seed2", attr::int(0)),
        ],
    )
}

fn input(dims: &[usize]) -> Tensor {
    let n = dims.iter().product::<usize>();
    Tensor::new(dims.to_vec(), (0..n).map(|i| ((i * 37) % 101) as f32).collect()).unwrap()
}

#[test]
fn bad_attrs_and_inputs_give_tensorflows_error_classes() {
    let x = || vec![input(&[2, 7, 9, 2])];
    let r = run_kernel(pool_node("FractionalMaxPool", &[1.0, 8.0, 1.5, 1.0], false, 0), x(), 3);
    expect_node_error(r, Code::InvalidArgument, "Pooling ratio is higher than input dimension size for dimension 1");
    let r = run_kernel(pool_node("FractionalAvgPool", &[2.0, 1.5, 1.5, 1.0], false, 0), x(), 3);
    expect_node_error(r, Code::Unimplemented, "Fractional average pooling is not yet supported");
    let r = run_kernel(pool_node("FractionalAvgPool", &[1.0, 0.5, 1.5, 1.0], false, 0), x(), 3);
    expect_node_error(r, Code::InvalidArgument, "pooling_ratio cannot be smaller than 1");
    let r = run_kernel(pool_node("FractionalMaxPool", &[1.0, 1.5, 1.5, 1.0], false, 3), x(), 3);
    expect_node_error(r, Code::InvalidArgument, "Both seed and seed2 should be 0");
    let r = run_kernel(pool_node("FractionalMaxPool", &[1.0, 1.5, 1.5, 1.0], false, 0), vec![input(&[7, 9, 2])], 3);
    expect_node_error(r, Code::InvalidArgument, "tensor_in must be 4-dimensional");
}

fn grad_node(op: &str) -> ferroflow_core::proto::NodeDef {
    node(op, &[("T", attr::ty(DataType::Float)), ("overlapping", attr::bool(false))])
}

#[test]
fn bad_sequences_are_invalid_arguments_naming_the_input() {
    let dy = Tensor::new(vec![2, 4, 6, 2], vec![1.0f32; 96]).unwrap();
    let cols = Tensor::new(vec![7], vec![0i64, 2, 3, 5, 6, 8, 9]).unwrap();
    let shape = Tensor::new(vec![4], vec![2i64, 7, 9, 2]).unwrap();
    let short = Tensor::new(vec![3], vec![0i64, 2, 4]).unwrap();
    let r = run_kernel(grad_node("FractionalAvgPoolGrad"), vec![shape, dy.clone(), short, cols.clone()], 1);
    expect_node_error(r, Code::InvalidArgument, "row_pooling_sequence must have 5 elements");
    let past = Tensor::new(vec![5], vec![0i64, 2, 4, 9, 12]).unwrap();
    let r = run_kernel(grad_node("FractionalMaxPoolGrad"), vec![input(&[2, 7, 9, 2]), dy.clone(), dy, past, cols], 1);
    expect_node_error(r, Code::InvalidArgument, "row_pooling_sequence must increase from 0 within the input size 7");
}

#[test]
fn max_grad_checks_orig_output() {
    let x = input(&[1, 4, 4, 1]);
    let seq = Tensor::new(vec![3], vec![0i64, 2, 4]).unwrap();
    let y = Tensor::new(vec![1, 2, 2, 1], vec![0.0f32; 4]).unwrap();
    let r = run_kernel(grad_node("FractionalMaxPoolGrad"), vec![x, y.clone(), y, seq.clone(), seq], 1);
    expect_node_error(r, Code::InvalidArgument, "orig_output is not the fractional max pooling");
}

#[test]
fn unseeded_runs_draw_sequences_that_keep_the_contract() {
    for _ in 0..20 {
        let out = run_kernel(
            pool_node("FractionalMaxPool", &[1.0, 1.4, 1.7, 1.0], false, 0),
            vec![input(&[1, 10, 13, 1])],
            3,
        )
        .unwrap();
        for (seq, n, m) in [(&out[1], 10i64, 7usize), (&out[2], 13, 7)] {
            let s = seq.as_slice::<i64>().unwrap();
            assert_eq!(s.len(), m + 1);
            assert_eq!((s[0], s[m]), (0, n));
            assert!(s.windows(2).all(|w| w[1] - w[0] == n / m as i64 || w[1] - w[0] == n / m as i64 + 1), "{s:?}");
        }
    }
}
