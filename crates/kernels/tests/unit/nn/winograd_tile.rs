use ferroflow_kernels::nn::simd::{F32Vec, Y};
use ferroflow_kernels::nn::winograd_tile::{Tile, F2, F4};
use ferroflow_kernels::nn::winograd_tile3::{F2R3, F4R3};

/// The 1-D identities of a tile, in f64 over f32 lanes: the forward correlation of an
/// `N`-vector with an `R`-tap filter, and the filter gradient's of it with an `M`-vector.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
unsafe fn errors<T: Tile<M, N>, const M: usize, const N: usize, const R: usize>(
    d: [f32; N],
    g: [f32; R],
    e: [f32; M],
) -> (f64, f64) {
    // SAFETY: the caller guarantees the instructions.
    unsafe {
        let lane = |v: Y| {
            let mut out = [0f32; 8];
            v.store(out.as_mut_ptr());
            out[0] as f64
        };
        let bd = T::input_1d(d.map(|x| Y::splat(x))).map(lane);
        let u: Vec<f64> = T::G.iter().map(|r| r.iter().zip(&g).map(|(a, &b)| a * b as f64).sum()).collect();
        let m: [Y; N] = std::array::from_fn(|i| Y::splat((u[i] * bd[i]) as f32));
        let y = T::output_1d(m).map(lane);
        let mut fwd = 0f64;
        for (i, yi) in y.iter().enumerate() {
            let want: f64 = (0..R).map(|k| d[i + k] as f64 * g[k] as f64).sum();
            fwd = fwd.max((yi - want).abs());
        }
        let he = T::grad_1d(e.map(|x| Y::splat(x))).map(lane);
        let mut back = 0f64;
        for (j, row) in T::ATR.iter().enumerate() {
            let got: f64 = row.iter().enumerate().map(|(i, a)| a * he[i] * bd[i]).sum();
            let want: f64 = (0..M).map(|i| d[i + j] as f64 * e[i] as f64).sum();
            back = back.max((got - want).abs());
        }
        (fwd, back)
    }
}

#[test]
fn every_tile_computes_the_correlations() {
    if !ferroflow_kernels::isa::Isa::available().iter().any(|i| i.has_avx2_fma()) {
        return;
    }
    let mut r = ferroflow_core::SplitMix64::new(17);
    let mut v = || (r.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
    for _ in 0..20 {
        let (g, d6, d8) = (std::array::from_fn(|_| v()), std::array::from_fn(|_| v()), std::array::from_fn(|_| v()));
        let (e2, e4) = (std::array::from_fn(|_| v()), std::array::from_fn(|_| v()));
        let (g3, d4) = (std::array::from_fn(|_| v()), std::array::from_fn(|_| v()));
        // SAFETY: the CPU has AVX2 and FMA (checked above).
        let (a, b) = unsafe { errors::<F2, 2, 6, 5>(d6, g, e2) };
        let (c, d) = unsafe { errors::<F4, 4, 8, 5>(d8, g, e4) };
        assert!(a < 1e-5 && b < 1e-5, "F(2x2, 5x5): {a:e} {b:e}");
        assert!(c < 3e-5 && d < 3e-5, "F(4x4, 5x5): {c:e} {d:e}");
        let (a, b) = unsafe { errors::<F2R3, 2, 4, 3>(d4, g3, e2) };
        let (c, d) = unsafe { errors::<F4R3, 4, 6, 3>(d6, g3, e4) };
        assert!(a < 1e-6 && b < 1e-6, "F(2x2, 3x3): {a:e} {b:e}");
        assert!(c < 1e-5 && d < 1e-5, "F(4x4, 3x3): {c:e} {d:e}");
    }
}
