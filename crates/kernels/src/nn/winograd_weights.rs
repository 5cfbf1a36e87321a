//! The filter transform of the Winograd convolutions (`winograd.rs`): `U = G·g·Gᵀ` for every
//! pair of channels, computed in f64 and rounded once to f32.

/// `U`, `[N·N][c][k]`, for the filter transform `gm` (`N × 5`, a [`super::winograd_tile::Tile`]'s
/// `G`): `w(tap, ci, co)` is the filter's weight at tap `ky·5 + kx` from input channel `ci`
/// to output channel `co`.
pub fn transform_filter<const N: usize>(
    gm: &[[f64; 5]; N],
    c: usize,
    k: usize,
    w: impl Fn(usize, usize, usize) -> f32,
) -> Vec<f32> {
    let mut u = vec![0f32; N * N * c * k];
    let mut g = vec![0f64; 25 * k];
    let mut t = vec![0f64; N * 5 * k];
    for ci in 0..c {
        for tap in 0..25 {
            for (co, v) in g[tap * k..(tap + 1) * k].iter_mut().enumerate() {
                *v = w(tap, ci, co) as f64;
            }
        }
        crate::isa::vectorized(|| {
            // t[i][kx] = Σ_ky G[i][ky] · g[ky][kx]
            for (i, gi) in gm.iter().enumerate() {
                for kx in 0..5 {
                    let out = &mut t[(i * 5 + kx) * k..(i * 5 + kx + 1) * k];
                    out.fill(0.0);
                    for (ky, &gv) in gi.iter().enumerate() {
                        let row = &g[(ky * 5 + kx) * k..(ky * 5 + kx + 1) * k];
                        for (o, &x) in out.iter_mut().zip(row) {
                            *o += gv * x;
                        }
                    }
                }
            }
            // u[i][j] = Σ_kx t[i][kx] · G[j][kx]
            for i in 0..N {
                for (j, gj) in gm.iter().enumerate() {
                    let p = i * N + j;
                    let out = &mut u[(p * c + ci) * k..(p * c + ci + 1) * k];
                    for (co, o) in out.iter_mut().enumerate() {
                        let mut s = 0f64;
                        for (kx, &gv) in gj.iter().enumerate() {
                            s += t[(i * 5 + kx) * k + co] * gv;
                        }
                        *o = s as f32;
                    }
                }
            }
        });
    }
    u
}
