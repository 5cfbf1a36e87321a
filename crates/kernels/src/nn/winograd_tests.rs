use super::*;
use crate::nn::common::{Padding, Window};
use crate::nn::conv::conv_reference;
use crate::nn::im2col::ConvGeom;

/// Seeded values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut r = ferroflow_core::SplitMix64::new(seed);
    (0..n).map(|_| (r.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0).collect()
}

/// The largest difference from the f64 reference, relative to the largest output.
fn error(got: &[f32], want: &[f64]) -> f64 {
    let big = want.iter().fold(0f64, |m, v| m.max(v.abs()));
    got.iter().zip(want).fold(0f64, |m, (&a, &b)| m.max((a as f64 - b).abs())) / big
}

#[test]
fn forward_matches_the_direct_sum() {
    if !applies(16, 16) {
        return; // no AVX2 on this CPU: the callers never take this path
    }
    // (n, h, w, c, k, padding): odd sizes leave partial tiles at the edges; VALID pads nothing.
    for (n, h, w, c, k, p) in [
        (2, 14, 14, 32, 64, Padding::Same),
        (3, 7, 9, 16, 48, Padding::Same),
        (1, 11, 6, 48, 16, Padding::Valid),
        (2, 5, 5, 16, 32, Padding::Valid),
    ] {
        let g = ConvGeom { n, c, oc: k, y: Window::new(h, 5, 1, p).unwrap(), x: Window::new(w, 5, 1, p).unwrap() };
        let (x, f) = (values(n * h * w * c, 1), values(25 * c * k, 2));
        let want = conv_reference(
            &g,
            &x.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            &f.iter().map(|&v| v as f64).collect::<Vec<_>>(),
        );
        let s = Shape { n, ih: h, iw: w, c, oh: g.y.output, ow: g.x.output, k, pad_y: g.y.pad, pad_x: g.x.pad };
        let u = transform_filter(c, k, |tap, ci, co| f[(tap * c + ci) * k + co]);
        let mut out = vec![f32::NAN; want.len()];
        assert!(conv(&s, &x, &u, &mut out));
        let e = error(&out, &want);
        assert!(e < 2e-6, "{s:?}: error {e:e}");
    }
}

#[test]
fn every_path_agrees() {
    // The AVX-512 and AVX2 products sum in the same order: both give the same bits.
    let s = Shape { n: 2, ih: 9, iw: 9, c: 32, oh: 9, ow: 9, k: 32, pad_y: 2, pad_x: 2 };
    let (x, f) = (values(2 * 81 * 32, 3), values(25 * 32 * 32, 4));
    let u = transform_filter(32, 32, |tap, ci, co| f[(tap * 32 + ci) * 32 + co]);
    let mut outs = Vec::new();
    #[cfg(target_arch = "x86_64")]
    for isa in crate::isa::Isa::available().into_iter().filter(|i| i.has_avx2_fma()) {
        let mut out = vec![0f32; 2 * 81 * 32];
        let (n, ol) = (s.n, s.oh * s.ow * s.k);
        let mut sc = (vec![0f32; 36 * plane(TILES, s.c)], vec![0f32; 36 * plane(TILES, s.k)]);
        for b in 0..n {
            let xi = &x[b * 81 * 32..(b + 1) * 81 * 32];
            let o = &mut out[b * ol..(b + 1) * ol];
            // Image 0 in one band of its 5 tile rows, image 1 in bands of 2 and 3.
            let (top, bottom) = o.split_at_mut(4 * 9 * 32);
            let bands = if b == 0 { vec![(o, 0..5)] } else { vec![(top, 0..2), (bottom, 2..5)] };
            for band in bands {
                // SAFETY: the CPU has each path `available` lists.
                unsafe {
                    match isa {
                        crate::isa::Isa::Avx512 => simd::image512(&s, xi, &u, band, &mut sc),
                        _ => simd::image256(&s, xi, &u, band, &mut sc),
                    }
                }
            }
        }
        outs.push(out);
    }
    assert!(outs.iter().all(|o| o.iter().any(|&v| v != 0.0)));
    for o in outs.iter().skip(1) {
        assert_eq!(o, &outs[0]);
    }
}

#[test]
fn needs_groups_of_16_channels_and_avx2() {
    assert!(!applies(8, 64));
    assert!(!applies(32, 24));
    assert!(!applies(0, 0));
}

#[test]
fn input_gradient_matches_the_gemm_path() {
    if !applies(16, 16) {
        return;
    }
    // Batches with at least MIN_TILES output tiles (7 × 7 and 3 × 4 per image).
    for (n, h, w, c, k, p) in [(8, 14, 14, 32, 64, Padding::Same), (32, 9, 12, 16, 32, Padding::Valid)] {
        let g = ConvGeom { n, c, oc: k, y: Window::new(h, 5, 1, p).unwrap(), x: Window::new(w, 5, 1, p).unwrap() };
        let (f, dy) = (values(25 * c * k, 5), values(g.rows() * k, 6));
        let wide = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
        let mut want = vec![0f64; n * h * w * c];
        crate::nn::conv_backprop::conv2d_backprop_input(&g, &wide(&f), &wide(&dy), &mut want);
        let mut got = vec![f32::NAN; want.len()];
        assert!(backprop_input(&g, &f, &dy, &mut got));
        let e = error(&got, &want);
        assert!(e < 2e-6, "{:?}: error {e:e}", (n, h, w, c, k, p));
    }
}

#[test]
fn other_shapes_are_left_to_the_other_paths() {
    let g = |kh, s| ConvGeom {
        n: 1,
        c: 32,
        oc: 32,
        y: Window::new(8, kh, s, Padding::Same).unwrap(),
        x: Window::new(8, 5, s, Padding::Same).unwrap(),
    };
    let (x, f) = (vec![0f32; 64 * 32], vec![0f32; 25 * 32 * 32]);
    let mut out = vec![0f32; 64 * 32];
    assert!(!forward(&g(3, 1), &x, &f[..15 * 32 * 32], &mut out));
    assert!(!forward(&g(5, 2), &x, &f, &mut out[..16 * 32]));
    // Too few tiles (16 of the 384 that pay for the filter transform).
    assert!(!forward(&g(5, 1), &x, &f, &mut out));
}
