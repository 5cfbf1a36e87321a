//! The filter transform of the Winograd convolutions (`winograd.rs`): `U = G·g·Gᵀ` for every
//! pair of channels, computed in f64 and rounded once to f32.

use rayon::prelude::*;

/// `U`, `[N·N][c][k]`, for the filter transform `gm` (`N` rows of `R`, a
/// [`super::winograd_tile::Tile`]'s `G`): `w(tap, ci, co)` is the `R × R` filter's weight at
/// tap `ky·R + kx` from input channel `ci` to output channel `co`. The `N` rows of planes
/// `U[i·N..(i+1)·N]` are computed in parallel.
pub fn transform_filter(gm: &[&[f64]], c: usize, k: usize, w: impl Fn(usize, usize, usize) -> f32 + Sync) -> Vec<f32> {
    let (n, r) = (gm.len(), gm.first().map_or(0, |row| row.len()));
    let mut u = vec![0f32; n * n * c * k];
    if u.is_empty() {
        return u;
    }
    u.par_chunks_mut(n * c * k).enumerate().for_each(|(i, ui)| {
        let gi = gm[i];
        let mut t = vec![0f64; r * k];
        let mut acc = vec![0f64; k];
        for ci in 0..c {
            crate::isa::vectorized(|| {
                // t[kx] = Σ_ky G[i][ky] · g[ky][kx]
                for kx in 0..r {
                    let out = &mut t[kx * k..(kx + 1) * k];
                    out.fill(0.0);
                    for (ky, &gv) in gi.iter().enumerate() {
                        for (co, o) in out.iter_mut().enumerate() {
                            *o += gv * w(ky * r + kx, ci, co) as f64;
                        }
                    }
                }
                // u[i][j] = Σ_kx t[kx] · G[j][kx]
                for (j, gj) in gm.iter().enumerate() {
                    acc.fill(0.0);
                    for (kx, &gv) in gj.iter().enumerate() {
                        for (a, &x) in acc.iter_mut().zip(&t[kx * k..(kx + 1) * k]) {
                            *a += x * gv;
                        }
                    }
                    for (o, &a) in ui[(j * c + ci) * k..(j * c + ci + 1) * k].iter_mut().zip(&acc) {
                        *o = a as f32;
                    }
                }
            });
        }
    });
    u
}
