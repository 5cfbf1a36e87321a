//! The filter transform of Winograd's F(2×2, 5×5) (`winograd.rs`): `U = G·g·Gᵀ` for every
//! pair of channels, computed in f64 and rounded once to f32.

/// G: the filter transform (in f64).
const G: [[f64; 5]; 6] = [
    [1.0, 0.0, 0.0, 0.0, 0.0],
    [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
    [-1.0 / 3.0, 1.0 / 3.0, -1.0 / 3.0, 1.0 / 3.0, -1.0 / 3.0],
    [-16.0 / 15.0, -8.0 / 15.0, -4.0 / 15.0, -2.0 / 15.0, -1.0 / 15.0],
    [1.0 / 15.0, -2.0 / 15.0, 4.0 / 15.0, -8.0 / 15.0, 16.0 / 15.0],
    [0.0, 0.0, 0.0, 0.0, 1.0],
];

/// `U`, `[36][c][k]`: `w(tap, ci, co)` is the filter's weight at tap `ky·5 + kx` from
/// input channel `ci` to output channel `co`.
pub(crate) fn transform_filter(c: usize, k: usize, w: impl Fn(usize, usize, usize) -> f32) -> Vec<f32> {
    let mut u = vec![0f32; 36 * c * k];
    let mut g = vec![0f64; 25 * k];
    let mut t = vec![0f64; 30 * k];
    for ci in 0..c {
        for tap in 0..25 {
            for (co, v) in g[tap * k..(tap + 1) * k].iter_mut().enumerate() {
                *v = w(tap, ci, co) as f64;
            }
        }
        crate::isa::vectorized(|| {
            // t[i][kx] = Σ_ky G[i][ky] · g[ky][kx]
            for i in 0..6 {
                for kx in 0..5 {
                    let out = &mut t[(i * 5 + kx) * k..(i * 5 + kx + 1) * k];
                    out.fill(0.0);
                    for (ky, &gv) in G[i].iter().enumerate() {
                        let row = &g[(ky * 5 + kx) * k..(ky * 5 + kx + 1) * k];
                        for (o, &x) in out.iter_mut().zip(row) {
                            *o += gv * x;
                        }
                    }
                }
            }
            // u[i][j] = Σ_kx t[i][kx] · G[j][kx]
            for i in 0..6 {
                for (j, gj) in G.iter().enumerate() {
                    let p = i * 6 + j;
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
