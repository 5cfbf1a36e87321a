use ferroflow_kernels::nn::common::{Padding, Window};
use ferroflow_kernels::nn::conv_direct_filter::backprop_filter_direct_f32;
use ferroflow_kernels::nn::im2col::ConvGeom;

use crate::common::DIRECT_CASES;

#[test]
fn matches_the_definition() {
    for (h, c, k, oc, s, p) in DIRECT_CASES.into_iter().chain([
        (6, 1, 5, 16, 2, Padding::Same),
        (28, 1, 5, 40, 1, Padding::Same),
        (10, 3, 2, 48, 1, Padding::Same),
        (5, 1, 5, 8, 1, Padding::Valid),
    ]) {
        // One image of the first shape is split across the threads by rows.
        let n = if h == 28 { 1 } else { 3 };
        let g = ConvGeom { n, c, oc, y: Window::new(h, k, s, p).unwrap(), x: Window::new(h + 1, k, s, p).unwrap() };
        let x: Vec<f32> = (0..g.n * g.image_len()).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
        let dy: Vec<f32> = (0..g.rows() * oc).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
        let Some(got) = backprop_filter_direct_f32(&g, &x, &dy) else { return };
        let mut want = vec![0.0f32; g.k() * oc];
        for r in 0..g.rows() {
            let per = g.rows_per_image();
            let (b, oy, ox) = (r / per, (r % per) / g.x.output, r % g.x.output);
            for ky in 0..k {
                for kx in 0..k {
                    let iy = (oy * s + ky) as isize - g.y.pad as isize;
                    let ix = (ox * s + kx) as isize - g.x.pad as isize;
                    if iy < 0 || ix < 0 || iy >= g.y.input as isize || ix >= g.x.input as isize {
                        continue;
                    }
                    for ci in 0..c {
                        let xv = x[((b * g.y.input + iy as usize) * g.x.input + ix as usize) * c + ci];
                        for o in 0..oc {
                            want[((ky * k + kx) * c + ci) * oc + o] += xv * dy[r * oc + o];
                        }
                    }
                }
            }
        }
        assert_eq!(got, want, "{:?}", (h, c, k, oc, s, p));
    }
}
