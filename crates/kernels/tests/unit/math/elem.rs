use ferroflow_kernels::math::elem::{Float, Int, Num};

#[test]
fn semantics() {
    assert_eq!(i32::MIN.div(-1), i32::MIN);
    assert_eq!(i32::MIN.rem(-1), 0);
    assert_eq!(200u8.add(100), 44);
    assert_eq!(2i32.ipow(31), i32::MIN);
    assert_eq!(3i32.ipow(40), 689956897);
    assert_eq!((-2i32).ipow(3), -8);
    assert_eq!(0i32.ipow(0), 1);
    assert!(f32::NAN.tf_max(1.0).is_nan());
    assert!(1.0f32.tf_min(f32::NAN).is_nan());
    assert_eq!(2.5f32.round_even(), 2.0);
    assert_eq!(i32::MIN.wabs(), i32::MIN);
    assert_eq!((-5i64).signum(), -1);
    assert_eq!(f32::LOWEST, -f32::MAX);
}
