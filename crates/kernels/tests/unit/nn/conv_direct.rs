use ferroflow_kernels::nn::common::{Padding, Window};
use ferroflow_kernels::nn::conv_direct::{direct_applies, DirectScalar};
use ferroflow_kernels::nn::im2col::ConvGeom;

use crate::common::{conv_reference, DIRECT_CASES};

#[test]
fn matches_reference() {
    let more = [(4, 1, 3, 40, 1, Padding::Same), (3, 2, 3, 16, 1, Padding::Valid)];
    for (h, c, k, oc, s, p) in DIRECT_CASES.into_iter().chain(more) {
        let g = ConvGeom { n: 2, c, oc, y: Window::new(h, k, s, p).unwrap(), x: Window::new(h + 1, k, s, p).unwrap() };
        assert!(direct_applies(&g));
        let x: Vec<f64> = (0..g.n * g.image_len()).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
        let w: Vec<f64> = (0..g.k() * oc).map(|i| ((i * 5) % 11) as f64 - 5.0).collect();
        let mut out = vec![0.0; g.rows() * oc];
        DirectScalar::conv2d_direct(&g, &x, &w, &mut out);
        let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let wf: Vec<f32> = w.iter().map(|&v| v as f32).collect();
        let mut outf = vec![0.0f32; g.rows() * oc];
        DirectScalar::conv2d_direct(&g, &xf, &wf, &mut outf);
        assert_eq!(outf.iter().map(|&v| v as f64).collect::<Vec<_>>(), out);
        assert_eq!(out, conv_reference(&g, &x, &w), "{:?}", (h, c, k, oc, s, p));
    }
}
