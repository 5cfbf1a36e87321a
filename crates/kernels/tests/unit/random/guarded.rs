use ferroflow_kernels::random::guarded::{GuardedPhilox, SAMPLES_PER_OUTPUT};
use ferroflow_kernels::random::philox::Philox;

#[test]
fn reserve_advances() {
    let g = GuardedPhilox::new(1, 2);
    let a = g.reserve_outputs(3, SAMPLES_PER_OUTPUT);
    let b = g.reserve128(0);
    let mut a2 = a;
    a2.skip(3 * 256);
    assert_eq!(a2, b);
    assert_eq!(a, Philox::new(1, 2));
    assert_ne!(GuardedPhilox::new(0, 0).reserve128(0), GuardedPhilox::new(0, 0).reserve128(0));
}
