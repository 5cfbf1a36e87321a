use ferroflow_core::half::{bf16, f16};
use ferroflow_core::{QInt8, C128, C64};

use ferroflow_kernels::math::cast_wide::{FromVal, ToVal, Val};

fn cast<S: ToVal, D: FromVal>(x: S) -> D {
    D::from_val(x.to_val(), false)
}

#[test]
fn out_of_range_float_to_unsigned() {
    // TensorFlow 2.21's outputs (vectorized loop) for these float32 inputs.
    let xs = [f32::NAN, 1e10, -1e10, 2.7, -2.7, 300., -1., 70000., 3e9, -129.];
    let u32s: Vec<u32> = xs.iter().map(|&x| cast(x)).collect();
    let want = [2147483648, 2147483648, 2147483648, 2, 4294967294, 300, 4294967295, 70000, 3000000000, 4294967167];
    assert_eq!(u32s, want);
    let u64s: Vec<u64> = xs[..8].iter().map(|&x| cast(x)).collect();
    let want = [1 << 63, 10000000000, 18446744063709551616, 2, 18446744073709551614, 300, u64::MAX, 70000];
    assert_eq!(u64s, want);
    assert_eq!(cast::<f32, u64>(1e19), 9999999980506447872);
}

#[test]
fn bfloat16_to_narrow_integers_saturates() {
    // TensorFlow 2.21's outputs for these bfloat16 values.
    let xs: Vec<bf16> =
        [f32::NAN, 1e10, -1e10, 2.7, -2.7, 300., -1., 70000., -129., f32::INFINITY, 128.].map(bf16::from_f32).into();
    let i8s: Vec<i8> = xs.iter().map(|&x| cast(x)).collect();
    assert_eq!(i8s, [-128, -128, -128, 2, -2, 127, -1, 127, -128, -128, 127]);
    let u8s: Vec<u8> = xs.iter().map(|&x| cast(x)).collect();
    assert_eq!(u8s, [0, 0, 0, 2, 0, 255, 0, 255, 0, 0, 128]);
    let i16s: Vec<i16> = xs.iter().map(|&x| cast(x)).collect();
    assert_eq!(i16s, [-32768, -32768, -32768, 2, -2, 300, -1, 32767, -129, -32768, 128]);
    let u16s: Vec<u16> = xs.iter().map(|&x| cast(x)).collect();
    assert_eq!(u16s, [0, 0, 0, 2, 0, 300, 0, 65535, 0, 0, 128]);
}

#[test]
fn rounding_through_float_and_truncation() {
    // Double rounding, as TensorFlow: 1 + 2⁻¹¹ + 2⁻⁴⁰ → float 1 + 2⁻¹¹ → half 1 (tie to even).
    assert_eq!(cast::<f64, f16>(1.0 + 2f64.powi(-11) + 2f64.powi(-40)), f16::ONE);
    assert_eq!(cast::<i64, f16>(65519), f16::MAX);
    assert_eq!(cast::<i64, bf16>(65519).to_f32(), 65536.0);
    assert_eq!(f16::from_val(Val::F32(1.0 + 2f32.powi(-11) + 2f32.powi(-20)), true), f16::ONE);
    assert_eq!(bf16::from_val(Val::F32(1.005), true), bf16::ONE);
    assert_eq!(bf16::from_val(Val::F32(1.005), false).to_f32(), 1.0078125);
    assert_eq!(f16::from_val(Val::F32(-1e6), true), f16::MIN);
}

#[test]
fn complex_and_bool() {
    assert!(!cast::<C64, bool>(C64::new(0.0, 1.0)));
    assert!(cast::<C64, bool>(C64::new(f32::NAN, 0.0)));
    assert_eq!(cast::<C128, i32>(C128::new(-2.5, 7.0)), -2);
    assert_eq!(cast::<C64, C128>(C64::new(1.5, -0.25)), C128::new(1.5, -0.25));
    assert_eq!(cast::<u64, i8>(u64::MAX), -1);
    assert_eq!(cast::<f32, QInt8>(-3.7), QInt8(-3));
    assert_eq!(cast::<bool, C64>(true), C64::new(1.0, 0.0));
}
