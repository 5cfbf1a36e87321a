use ferroflow_kernels::nn::in_top_k::in_top_k;

#[test]
fn ties_are_in_and_bad_rows_are_out() {
    let p = [0.1f32, 0.5, 0.5, 0.2, /**/ 1.0, f32::NAN, 0.0, 0.0, /**/ 0.3, 0.2, 0.1, 0.0];
    assert_eq!(in_top_k(&p, 4, &[2, 0, 3], 1), [true, false, false]);
    assert_eq!(in_top_k(&p, 4, &[3, 0, 4], 3), [true, false, false]);
    assert_eq!(in_top_k(&p, 4, &[0, 0, 3], 4), [true, false, true]);
}
