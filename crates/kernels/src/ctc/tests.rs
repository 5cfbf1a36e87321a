use ferroflow_core::{attr, Code, DataType, Tensor};

use crate::testutil::{node, run_kernel};

fn t3(dims: [usize; 3], v: Vec<f32>) -> Tensor {
    Tensor::new(dims.to_vec(), v).unwrap()
}

fn i32v(v: &[i32]) -> Tensor {
    Tensor::new(vec![v.len()], v.to_vec()).unwrap()
}

fn idx(rows: &[[i64; 2]]) -> Tensor {
    Tensor::new(vec![rows.len(), 2], rows.iter().flatten().copied().collect::<Vec<_>>()).unwrap()
}

fn loss(inputs: Vec<Tensor>) -> Result<Vec<Tensor>, ferroflow_core::Status> {
    run_kernel(node("CTCLoss", &[("T", attr::ty(DataType::Float))]), inputs, 2)
}

#[test]
fn uniform_logits_count_the_alignments() {
    // Two classes (0 and the blank), two steps, label "0": the alignments 00, 0-, -0 each
    // have probability 1/4, so p = 3/4; the posterior of class 0 is 2/3 at each step.
    let out = loss(vec![t3([2, 1, 2], vec![0.0; 4]), idx(&[[0, 0]]), i32v(&[0]), i32v(&[2])]).unwrap();
    let l = out[0].as_slice::<f32>().unwrap()[0];
    assert!((l - -(0.75f32.ln())).abs() < 1e-6, "{l}");
    let g = out[1].as_slice::<f32>().unwrap();
    for t in 0..2 {
        assert!((g[2 * t] - (0.5 - 2.0 / 3.0)).abs() < 1e-6, "{g:?}");
        assert!((g[2 * t + 1] - (0.5 - 1.0 / 3.0)).abs() < 1e-6, "{g:?}");
    }
}

#[test]
fn entries_longer_than_their_sequence_are_skipped_when_asked() {
    let n =
        node("CTCLoss", &[("T", attr::ty(DataType::Float)), ("ignore_longer_outputs_than_inputs", attr::bool(true))]);
    let x = t3([2, 2, 3], vec![0.5, -1.0, 0.25, 2.0, 0.0, 1.0, -0.5, 0.75, 0.0, 1.5, -2.0, 0.5]);
    let out =
        run_kernel(n, vec![x, idx(&[[0, 0], [0, 1], [0, 2], [1, 0]]), i32v(&[0, 1, 0, 1]), i32v(&[2, 0])], 2).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[0.0, 0.0]);
    assert!(out[1].as_slice::<f32>().unwrap().iter().all(|&v| v == 0.0));
}

#[test]
fn bad_inputs_are_tensorflows_error_classes() {
    let x = || Tensor::zeros(DataType::Float, vec![4, 2, 3]).unwrap();
    let two = || idx(&[[0, 0], [1, 0]]);
    let cases = vec![
        (
            vec![Tensor::zeros(DataType::Float, vec![4, 3]).unwrap(), two(), i32v(&[0, 1]), i32v(&[4, 4])],
            "inputs is not a 3-Tensor",
        ),
        (vec![x(), two(), i32v(&[0, 1]), i32v(&[4])], "len(sequence_length) != batch_size"),
        (vec![x(), two(), i32v(&[0]), i32v(&[4, 4])], "must contain the same number of rows"),
        (vec![x(), two(), i32v(&[0, 1]), i32v(&[5, 4])], "sequence_length(0) <= 4"),
        (vec![x(), idx(&[[0, 0]]), i32v(&[0]), i32v(&[4, 4])], "Labels length is zero in batch 1"),
        (vec![x(), two(), i32v(&[-1, 0]), i32v(&[4, 4])], "All labels must be nonnegative integers"),
        (vec![x(), idx(&[[1, 0], [0, 0]]), i32v(&[0, 1]), i32v(&[4, 4])], "is out of order"),
        (vec![x(), idx(&[[0, 0], [0, 1], [1, 0]]), i32v(&[2, 0, 1]), i32v(&[4, 4])], "Saw a non-null label"),
        (vec![x(), idx(&[[0, 0], [0, 1], [1, 0]]), i32v(&[0, 1, 1]), i32v(&[1, 4])], "Not enough time"),
    ];
    for (inputs, want) in cases {
        let e = loss(inputs).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument, "{e}");
        assert!(e.message.contains(want), "{e} (want {want})");
    }
}

#[test]
fn decoders_check_their_inputs_as_tensorflow() {
    let greedy = |x: Tensor, s: Tensor, blank: i64| {
        run_kernel(node("CTCGreedyDecoder", &[("blank_index", attr::int(blank))]), vec![x, s], 4)
    };
    let x = || Tensor::zeros(DataType::Float, vec![4, 2, 3]).unwrap();
    let e = greedy(Tensor::zeros(DataType::Float, vec![0, 2, 3]).unwrap(), i32v(&[0, 0]), -1).unwrap_err();
    assert_eq!((e.code, e.message.contains("inputs must not be empty")), (Code::InvalidArgument, true));
    let e = greedy(x(), i32v(&[5, 1]), -1).unwrap_err();
    assert_eq!((e.code, e.message.contains("sequence_length(0) <= 4")), (Code::FailedPrecondition, true));
    let e = greedy(x(), i32v(&[1]), -1).unwrap_err();
    assert_eq!(e.code, Code::FailedPrecondition, "{e}");
    let e = greedy(x(), i32v(&[1, 1]), 3).unwrap_err();
    assert!(e.message.contains("blank_index expected to be between -3 and 2 but was 3"), "{e}");
    let beam = node("CTCBeamSearchDecoder", &[("beam_width", attr::int(2)), ("top_paths", attr::int(3))]);
    let e = run_kernel(beam, vec![x(), i32v(&[4, 4])], 10).unwrap_err();
    assert_eq!(
        (e.code, e.message.contains("requested more paths than the beam width.")),
        (Code::InvalidArgument, true)
    );
}

#[test]
fn greedy_and_wide_beam_agree_on_a_peaked_input() {
    // One class dominates each step: best path and beam search decode the same labels.
    let steps = [0usize, 0, 3, 1, 1, 3, 2];
    let mut v = vec![-4.0f32; steps.len() * 4];
    for (t, &k) in steps.iter().enumerate() {
        v[t * 4 + k] = 4.0;
    }
    let x = t3([7, 1, 4], v);
    let g =
        run_kernel(node("CTCGreedyDecoder", &[("merge_repeated", attr::bool(true))]), vec![x.clone(), i32v(&[7])], 4)
            .unwrap();
    assert_eq!(g[1].as_slice::<i64>().unwrap(), &[0, 1, 2]);
    assert_eq!(g[2].as_slice::<i64>().unwrap(), &[1, 3]);
    let b = run_kernel(
        node("CTCBeamSearchDecoder", &[("beam_width", attr::int(8)), ("top_paths", attr::int(2))]),
        vec![x, i32v(&[7])],
        7,
    )
    .unwrap();
    assert_eq!(b[2].as_slice::<i64>().unwrap(), &[0, 1, 2]);
    let lp = b[6].as_slice::<f32>().unwrap();
    assert!(lp[0] > lp[1] && lp[0] < 0.0, "{lp:?}");
}
