use ferroflow_kernels::random::distributions::{fill, fill_range, NormalF32, TruncatedF32, UniformF64};
use ferroflow_kernels::random::philox::Philox;

#[test]
fn parallel_fill_equals_sequential() {
    let n = 100_003;
    let base = Philox::new(7, 9);
    let mut par = vec![0f32; n];
    fill(&TruncatedF32, base, &mut par);
    let mut seq = vec![0f32; n];
    fill_range(&TruncatedF32, base, 0, &mut seq);
    assert_eq!(par, seq);
    let mut par = vec![0f64; n];
    fill(&UniformF64, base, &mut par);
    let mut seq = vec![0f64; n];
    fill_range(&UniformF64, base, 0, &mut seq);
    assert_eq!(par, seq);
}

#[test]
fn partial_group_is_a_prefix() {
    let base = Philox::new(3, 4);
    let mut a = vec![0f32; 7];
    fill(&NormalF32, base, &mut a);
    let mut b = vec![0f32; 8];
    fill(&NormalF32, base, &mut b);
    assert_eq!(a[..], b[..7]);
}
