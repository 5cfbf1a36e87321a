use ferroflow_kernels::nn::common::{Padding, Window};
use ferroflow_kernels::nn::im2col::ConvGeom;
use ferroflow_kernels::nn::winograd::{applies, backprop_input, conv, forward, Shape};
#[cfg(target_arch = "x86_64")]
use ferroflow_kernels::nn::winograd_simd as simd;
use ferroflow_kernels::nn::winograd_tile::{Tile, F2, F4};
use ferroflow_kernels::nn::winograd_tile3::{F2R3, F4R3};
use ferroflow_kernels::nn::winograd_weights::transform_filter;

use crate::common::conv_reference;

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

/// The error of the tile `T`'s convolution `s` of `x` with the HWIO filter `f` against `want`.
fn tile_error<T: Tile<M, N>, const M: usize, const N: usize>(s: &Shape, x: &[f32], f: &[f32], want: &[f64]) -> f64 {
    let (c, k) = (s.c, s.k);
    let mut out = vec![f32::NAN; want.len()];
    assert!(conv::<T, M, N>(s, x, &transform_filter(T::G, c, k, |tap, ci, co| f[(tap * c + ci) * k + co]), &mut out));
    error(&out, want)
}

#[test]
fn forward_matches_the_direct_sum() {
    if !applies(16, 16) {
        return; // no AVX2 on this CPU: the callers never take this path
    }
    // (n, h, w, c, k, padding): odd sizes leave partial tiles at the edges; VALID pads nothing.
    for r in [3, 5] {
        for (n, h, w, c, k, p) in [
            (2, 14, 14, 32, 64, Padding::Same),
            (3, 7, 9, 16, 48, Padding::Same),
            (1, 11, 6, 48, 16, Padding::Valid),
            (2, 5, 5, 16, 32, Padding::Valid),
        ] {
            let g = ConvGeom { n, c, oc: k, y: Window::new(h, r, 1, p).unwrap(), x: Window::new(w, r, 1, p).unwrap() };
            let (x, f) = (values(n * h * w * c, 1), values(r * r * c * k, 2));
            let want = conv_reference(
                &g,
                &x.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                &f.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            );
            let (oh, ow, pad_y, pad_x) = (g.y.output, g.x.output, g.y.pad, g.x.pad);
            let s = Shape { n, ih: h, iw: w, c, oh, ow, k, pad_y, pad_x, r };
            // Both tile sizes, whichever `Shape::tile` would pick.
            let (e2, e4) = if r == 3 {
                (tile_error::<F2R3, 2, 4>(&s, &x, &f, &want), tile_error::<F4R3, 4, 6>(&s, &x, &f, &want))
            } else {
                (tile_error::<F2, 2, 6>(&s, &x, &f, &want), tile_error::<F4, 4, 8>(&s, &x, &f, &want))
            };
            assert!(e2 < 2e-6, "F(2x2) {s:?}: error {e2:e}");
            assert!(e4 < 6e-6, "F(4x4) {s:?}: error {e4:e}");
        }
    }
}

#[test]
fn the_tile_with_fewer_products_is_chosen() {
    let s = |oh, ow| Shape { n: 1, ih: oh, iw: ow, c: 16, oh, ow, k: 16, pad_y: 2, pad_x: 2, r: 5 };
    // 14 × 14: 16 tiles of 64 products against 49 of 36.
    assert_eq!(s(14, 14).tile(), 4);
    assert_eq!(s(5, 3).tile(), 4);
    // 2 × 2: one 4×4 tile (64) against one 2×2 tile (36); 2 × 6: 2 × 64 against 3 × 36.
    assert_eq!(s(2, 2).tile(), 2);
    assert_eq!(s(2, 6).tile(), 2);
    // 3×3 filters: 16 tiles of 36 products against 49 of 16; one of 36 against one of 16.
    let s3 = |oh, ow| Shape { r: 3, pad_y: 1, pad_x: 1, ..s(oh, ow) };
    assert_eq!(s3(14, 14).tile(), 4);
    assert_eq!(s3(4, 4).tile(), 4);
    assert_eq!(s3(2, 2).tile(), 2);
    assert_eq!(s3(2, 6).tile(), 2);
}

/// The output of every path the CPU has, for the tile `T`, on a 9 × 9 convolution whose
/// second image is computed in two bands (of `split` tile rows and the rest).
fn outputs_per_path<T: Tile<M, N>, const M: usize, const N: usize>(split: usize) -> Vec<Vec<f32>> {
    let r = T::G[0].len();
    let s = Shape { n: 2, ih: 9, iw: 9, c: 32, oh: 9, ow: 9, k: 32, pad_y: r / 2, pad_x: r / 2, r };
    // The same image twice, the second computed in two bands.
    let (x, f) = (values(81 * 32, 3).repeat(2), values(r * r * 32 * 32, 4));
    let u = transform_filter(T::G, 32, 32, |tap, ci, co| f[(tap * 32 + ci) * 32 + co]);
    let tile_rows = s.oh.div_ceil(M);
    let mut outs = Vec::new();
    #[cfg(target_arch = "x86_64")]
    for isa in ferroflow_kernels::isa::Isa::available().into_iter().filter(|i| i.has_avx2_fma()) {
        let mut out = vec![0f32; 2 * 81 * 32];
        let (n, ol) = (s.n, s.oh * s.ow * s.k);
        let mut sc = simd::Scratch::new::<T, M, N>(&s);
        for b in 0..n {
            let xi = &x[b * 81 * 32..(b + 1) * 81 * 32];
            let o = &mut out[b * ol..(b + 1) * ol];
            let (top, bottom) = o.split_at_mut(M * split * 9 * 32);
            let bands =
                if b == 0 { vec![(o, 0..tile_rows)] } else { vec![(top, 0..split), (bottom, split..tile_rows)] };
            for band in bands {
                // SAFETY: the CPU has each path `available` lists.
                unsafe {
                    match isa {
                        ferroflow_kernels::isa::Isa::Avx512 => simd::image512::<T, M, N>(&s, xi, &u, band, &mut sc),
                        _ => simd::image256::<T, M, N>(&s, xi, &u, band, &mut sc),
                    }
                }
            }
        }
        outs.push(out);
    }
    outs
}

#[test]
fn every_path_agrees() {
    // The AVX-512 and AVX2 products sum in the same order: both give the same bits, and
    // an image computed in bands the same as in one piece.
    for outs in [
        outputs_per_path::<F2, 2, 6>(2),
        outputs_per_path::<F4, 4, 8>(1),
        outputs_per_path::<F2R3, 2, 4>(2),
        outputs_per_path::<F4R3, 4, 6>(1),
    ] {
        assert!(outs.iter().all(|o| o.iter().any(|&v| v != 0.0)));
        for o in outs.iter().skip(1) {
            assert_eq!(o, &outs[0]);
        }
        for o in &outs {
            assert_eq!(o[..81 * 32], o[81 * 32..]);
        }
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
    // Batches with at least MIN_TILES output tiles (5×5: 7 × 7 and 3 × 4 per image).
    for (r, n, h, w, c, k, p) in [
        (5, 8, 14, 14, 32, 64, Padding::Same),
        (5, 32, 9, 12, 16, 32, Padding::Valid),
        (3, 8, 14, 14, 32, 64, Padding::Same),
        (3, 8, 8, 8, 64, 32, Padding::Same),
        (3, 16, 9, 12, 16, 32, Padding::Valid),
    ] {
        let g = ConvGeom { n, c, oc: k, y: Window::new(h, r, 1, p).unwrap(), x: Window::new(w, r, 1, p).unwrap() };
        let (f, dy) = (values(r * r * c * k, 5), values(g.rows() * k, 6));
        let wide = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
        let mut want = vec![0f64; n * h * w * c];
        ferroflow_kernels::nn::conv_backprop::conv2d_backprop_input(&g, &wide(&f), &wide(&dy), &mut want);
        let mut got = vec![f32::NAN; want.len()];
        assert!(backprop_input(&g, &f, &dy, &mut got));
        // 4×4 tiles, which round about four times as much as 2×2 ones (F(4×4, 3×3) on
        // 14 × 14 with 64 channels: 7.2e-6).
        let e = error(&got, &want);
        assert!(e < 1e-5, "{:?}: error {e:e}", (r, n, h, w, c, k, p));
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
    // 3×3: 16 of the 64 that pay for it.
    let g3 = ConvGeom { x: Window::new(8, 3, 1, Padding::Same).unwrap(), ..g(3, 1) };
    assert!(!forward(&g3, &x, &f[..9 * 32 * 32], &mut out));
}
