use ferroflow_kernels::isa::{choose, current, Isa};

#[test]
fn names_round_trip_and_order() {
    for i in Isa::ALL {
        assert_eq!(Isa::parse(i.name()), Some(i));
    }
    assert_eq!(Isa::parse(" AVX2 "), Some(Isa::Avx2));
    assert_eq!(Isa::parse("sse"), None);
    assert!(Isa::Portable < Isa::Avx2 && Isa::Avx2 < Isa::Avx512);
    assert!(!Isa::Portable.has_avx2_fma() && Isa::Avx2.has_avx2_fma() && Isa::Avx512.has_avx2_fma());
}

#[test]
fn requests_only_lower_the_path() {
    assert_eq!(choose(None, Isa::Avx512), (Isa::Avx512, None));
    assert_eq!(choose(Some(""), Isa::Avx2), (Isa::Avx2, None));
    assert_eq!(choose(Some("avx2"), Isa::Avx512), (Isa::Avx2, None));
    assert_eq!(choose(Some("portable"), Isa::Avx2), (Isa::Portable, None));
    assert_eq!(choose(Some("avx2"), Isa::Avx2), (Isa::Avx2, None));
    let (isa, w) = choose(Some("avx512"), Isa::Avx2);
    assert_eq!(isa, Isa::Avx2);
    assert!(w.unwrap().contains("no avx512 path"));
    let (isa, w) = choose(Some("neon"), Isa::Portable);
    assert_eq!(isa, Isa::Portable);
    assert!(w.unwrap().contains("unknown"));
}

#[test]
fn available_paths_end_at_the_detected_one() {
    let a = Isa::available();
    assert_eq!(a.first(), Some(&Isa::Portable));
    assert_eq!(a.last(), Some(&Isa::detect()));
    assert!(current() <= Isa::detect());
}
