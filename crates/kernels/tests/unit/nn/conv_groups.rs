use ferroflow_core::{DataType, Tensor};

use ferroflow_kernels::nn::conv::ConvAttrs;
use ferroflow_kernels::nn::conv_groups::{gather_channels, scatter_channels};
use ferroflow_kernels::testutil::{conv_node, run_kernel};

use crate::common::{data, grouped_conv_reference};

#[test]
fn gather_then_scatter_round_trips() {
    let src: Vec<i32> = (0..24).collect();
    let g = gather_channels(&src, 6, 2, 3);
    assert_eq!(g, vec![2, 3, 4, 8, 9, 10, 14, 15, 16, 20, 21, 22]);
    let mut dst = vec![-1; 24];
    scatter_channels(&mut dst, 6, 2, &g, 3);
    for (i, v) in dst.iter().enumerate() {
        assert_eq!(*v, if (2..5).contains(&(i % 6)) { i as i32 } else { -1 });
    }
}

/// (n, h, w, c, kh, kw, filter depth, oc, stride, padding): gathered groups, one channel
/// per group (the depthwise path, with and without a multiplier), 1×1 groups.
type Case = (usize, usize, usize, usize, usize, usize, usize, usize, i64, &'static str);
const CASES: [Case; 6] = [
    (2, 7, 6, 6, 3, 3, 2, 9, 1, "SAME"),
    (1, 9, 9, 8, 3, 3, 4, 4, 2, "VALID"),
    (2, 6, 5, 4, 3, 3, 1, 4, 1, "SAME"),
    (1, 7, 7, 3, 5, 5, 1, 6, 2, "SAME"),
    (2, 4, 4, 6, 1, 1, 3, 4, 1, "VALID"),
    (1, 5, 6, 4, 2, 3, 2, 2, 1, "SAME"),
];

/// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter on grouped shapes: the forward
/// equals the definition; both gradients satisfy `<conv(x, w), dy> = <x, dx> = <w, dw>`.
#[test]
fn grouped_forward_and_gradients_match_the_definition() {
    for (n, h, w, c, kh, kw, fc, oc, s, p) in CASES {
        let case = (n, h, w, c, kh, kw, fc, oc, s, p);
        let x = data(n * h * w * c, 1);
        let f = data(kh * kw * fc * oc, 2);
        let nd = conv_node("Conv2D", DataType::Double, &[1, s, s, 1], p);
        let (g, groups) = ConvAttrs::parse(&nd).unwrap().geom(&nd, "", &[n, h, w, c], &[kh, kw, fc, oc]).unwrap();
        assert_eq!(groups, c / fc);
        let want = grouped_conv_reference(&g, groups, &x, &f);
        let xt = Tensor::new(vec![n, h, w, c], x.clone()).unwrap();
        let ft = Tensor::new(vec![kh, kw, fc, oc], f.clone()).unwrap();
        let got = run_kernel(nd, vec![xt.clone(), ft.clone()], 1).unwrap().remove(0);
        assert_eq!(got.dims(), &[n, g.y.output, g.x.output, oc], "{case:?}");
        for (a, b) in got.as_slice::<f64>().unwrap().iter().zip(&want) {
            assert!((a - b).abs() < 1e-9, "{case:?}: {a} vs {b}");
        }
        // float32 takes the fast paths (Winograd, direct kernels) per group.
        let nd32 = conv_node("Conv2D", DataType::Float, &[1, s, s, 1], p);
        let to32 = |d: Vec<usize>, v: &[f64]| Tensor::new(d, v.iter().map(|&a| a as f32).collect()).unwrap();
        let (x32, f32t) = (to32(vec![n, h, w, c], &x), to32(vec![kh, kw, fc, oc], &f));
        let got32 = run_kernel(nd32, vec![x32, f32t], 1).unwrap().remove(0);
        for (a, b) in got32.as_slice::<f32>().unwrap().iter().zip(&want) {
            assert!((*a as f64 - b).abs() < 1e-4 * b.abs().max(1.0), "{case:?} f32: {a} vs {b}");
        }

        let dy = data(want.len(), 3);
        let lhs: f64 = want.iter().zip(&dy).map(|(a, b)| a * b).sum();
        let dyt = Tensor::new(vec![n, g.y.output, g.x.output, oc], dy).unwrap();
        let dims = |d: &[usize]| Tensor::vec(d.iter().map(|&v| v as i32).collect::<Vec<_>>());
        let nd = conv_node("Conv2DBackpropInput", DataType::Double, &[1, s, s, 1], p);
        let dx = run_kernel(nd, vec![dims(&[n, h, w, c]), ft, dyt.clone()], 1).unwrap().remove(0);
        assert_eq!(dx.dims(), &[n, h, w, c]);
        let r: f64 = dx.as_slice::<f64>().unwrap().iter().zip(&x).map(|(a, b)| a * b).sum();
        assert!((lhs - r).abs() < 1e-8 * lhs.abs().max(1.0), "input grad {case:?}: {lhs} vs {r}");
        let nd = conv_node("Conv2DBackpropFilter", DataType::Double, &[1, s, s, 1], p);
        let dw = run_kernel(nd, vec![xt, dims(&[kh, kw, fc, oc]), dyt], 1).unwrap().remove(0);
        assert_eq!(dw.dims(), &[kh, kw, fc, oc]);
        let r: f64 = dw.as_slice::<f64>().unwrap().iter().zip(&f).map(|(a, b)| a * b).sum();
        assert!((lhs - r).abs() < 1e-8 * lhs.abs().max(1.0), "filter grad {case:?}: {lhs} vs {r}");
    }
}
