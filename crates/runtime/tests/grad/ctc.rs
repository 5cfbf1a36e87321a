//! Numeric check of the CTC loss gradient: the loss kernel's fused gradient with respect to
//! the logits, scaled by the incoming gradient of each entry's loss, against central
//! differences of the loss, with TensorFlow's default options and with repeats neither
//! collapsed nor merged.

use crate::util::*;
use ferroflow_core::{attr, Tensor};
use ferroflow_graph::{ops, Output, Scope};

/// The sparse labels [[0, 1, 1], [2], [1, 0]] of a batch of 3.
fn labels(s: &Scope) -> (Output, Output) {
    let idx = Tensor::new(vec![6, 2], vec![0i64, 0, 0, 1, 0, 2, 1, 0, 2, 0, 2, 1]).unwrap();
    (ops::constant(s, idx), i32s(s, &[0, 1, 1, 2, 1, 0]))
}

/// Checks the gradient of the loss of logits `[steps, 3, 4]` (seeded) with sequence lengths
/// `seq`; repeats merged (TensorFlow's default, through the Rust builder) or not.
fn check_ctc(what: &str, steps: usize, seed: u64, seq: [i32; 3], merge: bool) {
    assert_grad(
        what,
        |s, xs| {
            let (idx, val) = labels(s);
            if merge {
                return ops::ctc_loss(s, x(xs, 0), idx, val, i32s(s, &seq)).0;
            }
            s.op("CTCLoss")
                .input(x(xs, 0))
                .input(idx)
                .input(val)
                .input(i32s(s, &seq))
                .attr("ctc_merge_repeated", attr::bool(false))
                .build()
                .output(0)
        },
        &[rand(&[steps, 3, 4], seed)],
        &[0],
    );
}

#[test]
fn ctc_loss_default_options() {
    check_ctc("CTCLoss", 7, 41, [7, 5, 6], true);
}

#[test]
fn ctc_loss_without_merging_repeats() {
    check_ctc("CTCLoss (no merge)", 6, 43, [6, 6, 4], false);
}
