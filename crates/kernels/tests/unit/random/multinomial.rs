//! `Multinomial` and `StatelessMultinomial` beyond the golden cases: determinism by seed,
//! rows drawn in parallel equal rows drawn alone, frequencies, and errors.

use ferroflow_core::{attr, Code, DataType, Tensor};
use ferroflow_kernels::testutil::{node, run_kernel, seeded_node};

fn stateless(logits: Tensor, samples: i32, seed: [i64; 2]) -> Result<Tensor, ferroflow_core::Status> {
    let n = node(
        "StatelessMultinomial",
        &[
            ("T", attr::ty(DataType::Float)),
            ("Tseed", attr::ty(DataType::Int64)),
            ("output_dtype", attr::ty(DataType::Int64)),
        ],
    );
    Ok(run_kernel(n, vec![logits, Tensor::scalar(samples), Tensor::vec(seed.to_vec())], 1)?.remove(0))
}

/// A `[rows, 3]` logits matrix whose rows differ.
fn logits(rows: usize) -> Tensor {
    Tensor::new(vec![rows, 3], (0..rows * 3).map(|i| ((i * 7) % 5) as f32 * 0.3).collect::<Vec<f32>>()).unwrap()
}

#[test]
fn rows_drawn_in_parallel_equal_rows_drawn_alone() {
    // 9000 rows x 4 samples takes the parallel path; each row's stream starts where it
    // would in one sequential pass, so the first rows equal a 3-row call with the same seed.
    let big = stateless(logits(9000), 4, [5, 6]).unwrap();
    let small = stateless(logits(3), 4, [5, 6]).unwrap();
    assert_eq!(&big.as_slice::<i64>().unwrap()[..12], small.as_slice::<i64>().unwrap());
    assert_eq!(big.dims(), &[9000, 4]);
    // Same seed, same numbers; another seed, others.
    assert_eq!(stateless(logits(3), 4, [5, 6]).unwrap().as_slice::<i64>().unwrap(), small.as_slice::<i64>().unwrap());
    assert_ne!(stateless(logits(3), 4, [5, 7]).unwrap().as_slice::<i64>().unwrap(), small.as_slice::<i64>().unwrap());
}

#[test]
fn frequencies_follow_the_softmax() {
    // Logits 0 and ln 3: class 1 has probability 3/4; -inf never drawn.
    let l = Tensor::new(vec![1, 3], vec![0.0f32, 3f32.ln(), f32::NEG_INFINITY]).unwrap();
    let out = stateless(l, 40_000, [1, 2]).unwrap();
    let v = out.as_slice::<i64>().unwrap();
    let ones = v.iter().filter(|&&c| c == 1).count() as f64 / v.len() as f64;
    assert!((ones - 0.75).abs() < 0.01, "class 1 drawn {ones}");
    assert!(v.iter().all(|&c| c == 0 || c == 1));
}

#[test]
fn stateful_runs_continue_the_stream() {
    let n = seeded_node("Multinomial", &[("T", DataType::Float), ("output_dtype", DataType::Int32)], 3, 4);
    let [a, b] = crate::common::run_twice(&n, &[logits(2), Tensor::scalar(16i32)]);
    assert_ne!(a.as_slice::<i32>().unwrap(), b.as_slice::<i32>().unwrap(), "a second run draws new numbers");
}

#[test]
fn errors_name_what_is_wrong() {
    let e = stateless(Tensor::vec(vec![1.0f32, 2.0]), 2, [1, 1]).unwrap_err();
    assert!(e.code == Code::InvalidArgument && e.message.contains("logits should be a matrix"), "{e}");
    let e = stateless(logits(2), -1, [1, 1]).unwrap_err();
    assert!(e.message.contains("num_samples should be non-negative, got -1"), "{e}");
    let e = stateless(Tensor::new(vec![2, 0], Vec::<f32>::new()).unwrap(), 2, [1, 1]).unwrap_err();
    assert!(e.message.contains("num_classes should be positive"), "{e}");
    // Zero samples: an empty [rows, 0] result.
    assert_eq!(stateless(logits(2), 0, [1, 1]).unwrap().dims(), &[2, 0]);
}
