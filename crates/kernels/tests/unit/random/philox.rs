use ferroflow_kernels::random::philox::{box_muller_f32, u32_to_f32, u64_to_f64, Philox};

#[test]
fn known_answer_vectors() {
    // Known-answer tests of the Random123 reference implementation (philox4x32, 10 rounds).
    let mut g = Philox::from_parts([0; 4], [0; 2]);
    assert_eq!(g.next4(), [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
    let mut g = Philox::from_parts([u32::MAX; 4], [u32::MAX; 2]);
    assert_eq!(g.next4(), [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]);
    let mut g = Philox::from_parts([0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344], [0xa409_3822, 0x299f_31d0]);
    assert_eq!(g.next4(), [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]);
}

#[test]
fn skip_carries() {
    let mut g = Philox::from_parts([u32::MAX, u32::MAX, 7, 0], [1, 2]);
    g.skip(1);
    assert_eq!(g.counter(), [0, 0, 8, 0]);
    let mut g = Philox::from_parts([5, 0, 0, 0], [0, 0]);
    g.skip((3u64 << 32) | 10);
    assert_eq!(g.counter(), [15, 3, 0, 0]);
    let mut a = Philox::new(1, 2);
    let mut b = a;
    a.next4();
    a.next4();
    b.skip(2);
    assert_eq!(a, b);
    let mut c = Philox::from_parts([u32::MAX, u32::MAX, 7, 0], [3, 4]);
    let mut d = c;
    let (x, y) = c.next4x2();
    assert_eq!((x, y), (d.next4(), d.next4()));
    assert_eq!(c, d);
}

#[test]
fn conversions() {
    assert_eq!(u32_to_f32(0), 0.0);
    assert_eq!(u32_to_f32(0x7f_ffff), 1.0 - f32::EPSILON);
    assert_eq!(u32_to_f32(0xff80_0000), 0.0);
    assert_eq!(u64_to_f64(0, 0), 0.0);
    assert_eq!(u64_to_f64(0xfff0_0000, 0), 0.0);
    assert_eq!(u64_to_f64(0xf_ffff, u32::MAX), 1.0 - f64::EPSILON);
    let (a, b) = box_muller_f32(0, 0);
    assert!((a - 0.0).abs() < 1e-6 && (b - (-2.0f32 * 1e-7f32.ln()).sqrt()).abs() < 1e-5);
}
