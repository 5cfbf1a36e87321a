//! Golden tests: every case of `tests/golden/*.json` (values produced once by TensorFlow
//! 2.21) on this process's ISA path; `isa_paths.rs` re-runs them under the other paths.

mod golden_check;

#[test]
fn golden_values_match_tensorflow() {
    let count = golden_check::check_all().unwrap_or_else(|e| panic!("{e}"));
    assert!(count > 0, "no golden cases found");
}

#[test]
fn golden_sequences_of_stateful_ops_match_tensorflow() {
    let steps = golden_check::stateful::check_all().unwrap_or_else(|e| panic!("{e}"));
    assert!(steps > 0, "no golden sequences found");
}
