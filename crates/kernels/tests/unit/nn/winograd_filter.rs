use ferroflow_kernels::nn::common::{Padding, Window};
use ferroflow_kernels::nn::im2col::ConvGeom;
use ferroflow_kernels::nn::winograd_filter::backprop_filter;

#[test]
fn matches_the_direct_sum() {
    if !ferroflow_kernels::nn::winograd::applies(16, 16) {
        return;
    }
    // Batches with at least MIN_TILES output tiles (5×5: 7 × 7 and 3 × 2 per image).
    for (r, n, h, w, c, k, p) in [
        (5, 8, 14, 14, 32, 64, Padding::Same),
        (5, 64, 9, 7, 16, 32, Padding::Valid),
        (3, 8, 14, 14, 32, 64, Padding::Same),
        (3, 4, 8, 8, 64, 16, Padding::Same),
        (3, 16, 9, 7, 16, 32, Padding::Valid),
    ] {
        let g = ConvGeom { n, c, oc: k, y: Window::new(h, r, 1, p).unwrap(), x: Window::new(w, r, 1, p).unwrap() };
        let mut rng = ferroflow_core::SplitMix64::new(9);
        let mut vals = |len: usize| -> Vec<f32> {
            (0..len).map(|_| (rng.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0).collect()
        };
        let (x, dy) = (vals(n * h * w * c), vals(g.rows() * k));
        let got = backprop_filter(&g, &x, &dy).unwrap();
        let big = {
            let mut want = vec![0f64; r * r * c * k];
            for b in 0..n {
                for oy in 0..g.y.output {
                    for ox in 0..g.x.output {
                        for ky in 0..r {
                            for kx in 0..r {
                                let iy = (oy + ky) as isize - g.y.pad as isize;
                                let ix = (ox + kx) as isize - g.x.pad as isize;
                                if iy < 0 || ix < 0 || iy >= h as isize || ix >= w as isize {
                                    continue;
                                }
                                for ci in 0..c {
                                    let xv = x[((b * h + iy as usize) * w + ix as usize) * c + ci] as f64;
                                    for co in 0..k {
                                        want[((ky * r + kx) * c + ci) * k + co] +=
                                            xv * dy[((b * g.y.output + oy) * g.x.output + ox) * k + co] as f64;
                                    }
                                }
                            }
                        }
                    }
                }
            }
            want
        };
        let scale = big.iter().fold(0f64, |m, v| m.max(v.abs()));
        let e = got.iter().zip(&big).fold(0f64, |m, (&a, &b)| m.max((a as f64 - b).abs())) / scale;
        assert!(e < 5e-6, "{:?}: error {e:e}", (r, n, h, w, c, k, p));
    }
}
