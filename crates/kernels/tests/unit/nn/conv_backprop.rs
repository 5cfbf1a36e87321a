use ferroflow_core::{Code, DataType, Tensor};

use ferroflow_kernels::nn::conv::ConvAttrs;
use ferroflow_kernels::testutil::{conv_node, run_kernel};

use crate::common::{conv_reference, data, CASES};

/// Checks both gradients against the reference forward conv through the adjoint
/// identities `<conv(x, w), dy> = <x, dx> = <w, dw>`.
#[test]
fn gradients_are_adjoints_of_the_reference() {
    // Beyond CASES: stride-1 shapes for the input gradient's turned-filter path, with even
    // and non-square filters (SAME pads one more after than before) and few output
    // channels (the turned convolution's direct kernel).
    let more = [
        (4, 14, 14, 8, 5, 5, 16, 1, "SAME"),
        (2, 6, 7, 3, 2, 4, 8, 1, "SAME"),
        (2, 9, 8, 16, 4, 3, 8, 1, "SAME"),
        (1, 6, 6, 8, 3, 3, 16, 1, "VALID"),
        (1, 3, 3, 4, 5, 5, 8, 1, "SAME"),
        // A filter of 2^18 elements or more: patch gradients scattered back.
        (1, 5, 4, 256, 3, 3, 128, 1, "SAME"),
        (1, 4, 6, 96, 4, 2, 96, 1, "VALID"),
        // Large enough to run on several threads: the turned product in row blocks, and
        // the filter gradient of few output pixels as one product split over the weights.
        (2, 12, 12, 32, 3, 3, 32, 1, "SAME"),
        (8, 4, 4, 64, 3, 3, 64, 1, "SAME"),
        // 1×1 filters over many pixels: the filter gradient split over the pixels, one
        // partial sum per thread (an odd pixel count splits unevenly).
        (4, 20, 20, 16, 1, 1, 96, 1, "SAME"),
        (3, 7, 9, 40, 1, 1, 64, 1, "VALID"),
    ];
    for (n, h, w, c, kh, kw, oc, s, p) in CASES.into_iter().chain(more) {
        let x = data(n * h * w * c, 3);
        let f = data(kh * kw * c * oc, 4);
        let nd = conv_node("Conv2DBackpropInput", DataType::Double, &[1, s, s, 1], p);
        let (g, _) = ConvAttrs::parse(&nd).unwrap().geom(&nd, "", &[n, h, w, c], &[kh, kw, c, oc]).unwrap();
        let dy = data(g.rows() * oc, 5);
        let fwd = conv_reference(&g, &x, &f);
        let lhs: f64 = fwd.iter().zip(&dy).map(|(a, b)| a * b).sum();
        let dy_t = Tensor::new(vec![n, g.y.output, g.x.output, oc], dy).unwrap();
        let dims = |d: &[usize]| Tensor::vec(d.iter().map(|&v| v as i32).collect::<Vec<_>>());
        let dx = run_kernel(
            nd,
            vec![dims(&[n, h, w, c]), Tensor::new(vec![kh, kw, c, oc], f.clone()).unwrap(), dy_t.clone()],
            1,
        )
        .unwrap()
        .remove(0);
        assert_eq!(dx.dims(), &[n, h, w, c]);
        let r: f64 = dx.as_slice::<f64>().unwrap().iter().zip(&x).map(|(a, b)| a * b).sum();
        assert!((lhs - r).abs() < 1e-8 * lhs.abs().max(1.0), "input grad {:?}: {lhs} vs {r}", (n, h, w, c, kh, s, p));
        let nd = conv_node("Conv2DBackpropFilter", DataType::Double, &[1, s, s, 1], p);
        let dw = run_kernel(nd, vec![Tensor::new(vec![n, h, w, c], x).unwrap(), dims(&[kh, kw, c, oc]), dy_t], 1)
            .unwrap()
            .remove(0);
        assert_eq!(dw.dims(), &[kh, kw, c, oc]);
        let r: f64 = dw.as_slice::<f64>().unwrap().iter().zip(&f).map(|(a, b)| a * b).sum();
        assert!((lhs - r).abs() < 1e-8 * lhs.abs().max(1.0), "filter grad {:?}: {lhs} vs {r}", (n, h, w, c, kh, s, p));
    }
}

/// The float32 input gradient (turned-filter path at stride 1: gemm for many channels,
/// the direct kernel for few) equals the float64 one.
#[test]
fn float32_input_gradient_matches_float64() {
    for (n, h, w, c, k, oc) in [
        (2, 9, 10, 24, 3, 64),
        (2, 8, 8, 32, 3, 8),
        (1, 7, 5, 16, 5, 16),
        (2, 4, 4, 128, 3, 128),
        (1, 4, 4, 256, 3, 128),
    ] {
        let f = data(k * k * c * oc, 7);
        let dy = data(n * h * w * oc, 8);
        let run = |dt: DataType, f: Tensor, dy: Tensor| {
            let nd = conv_node("Conv2DBackpropInput", dt, &[1, 1, 1, 1], "SAME");
            let sizes = Tensor::vec(vec![n as i32, h as i32, w as i32, c as i32]);
            run_kernel(nd, vec![sizes, f, dy], 1).unwrap().remove(0)
        };
        let want = run(
            DataType::Double,
            Tensor::new(vec![k, k, c, oc], f.clone()).unwrap(),
            Tensor::new(vec![n, h, w, oc], dy.clone()).unwrap(),
        );
        let narrow = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
        let got = run(
            DataType::Float,
            Tensor::new(vec![k, k, c, oc], narrow(&f)).unwrap(),
            Tensor::new(vec![n, h, w, oc], narrow(&dy)).unwrap(),
        );
        let (want, got) = (want.as_slice::<f64>().unwrap(), got.as_slice::<f32>().unwrap());
        let scale = want.iter().fold(0f64, |a, &b| a.max(b.abs()));
        let err = want.iter().zip(got).fold(0f64, |a, (&x, &y)| a.max((x - y as f64).abs()));
        assert!(err <= 1e-5 * scale, "{:?}: error {err:e} of {scale:e}", (n, h, w, c, k, oc));
    }
}

#[test]
fn shape_errors() {
    let nd = conv_node("Conv2DBackpropInput", DataType::Float, &[1, 1, 1, 1], "SAME");
    let f = Tensor::zeros(DataType::Float, vec![3, 3, 2, 4]).unwrap();
    let dy = Tensor::zeros(DataType::Float, vec![1, 5, 5, 4]).unwrap();
    let e = run_kernel(nd.clone(), vec![Tensor::vec(vec![1i32, 6, 6, 2]), f.clone(), dy.clone()], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Size of out_backprop doesn't match computed: actual = 5, computed = 6"), "{e}");
    let e = run_kernel(nd.clone(), vec![Tensor::vec(vec![1i32, 5, 5]), f.clone(), dy.clone()], 1).unwrap_err();
    assert!(e.message.contains("4 values or 2 values"), "{e}");
    let e = run_kernel(nd.clone(), vec![Tensor::vec(vec![2i32, 5, 5, 2]), f.clone(), dy.clone()], 1).unwrap_err();
    assert!(e.message.contains("same batch size"), "{e}");
    let e = run_kernel(nd, vec![Tensor::vec(vec![1i32, -5, 5, 2]), f.clone(), dy.clone()], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    let ok = run_kernel(
        conv_node("Conv2DBackpropInput", DataType::Float, &[1, 1, 1, 1], "SAME"),
        vec![Tensor::vec(vec![5i32, 5]), f, dy],
        1,
    )
    .unwrap();
    assert_eq!(ok[0].dims(), &[1, 5, 5, 2]);
    let nd = conv_node("Conv2DBackpropFilter", DataType::Float, &[1, 1, 1, 1], "SAME");
    let x = Tensor::zeros(DataType::Float, vec![1, 5, 5, 2]).unwrap();
    let dy = Tensor::zeros(DataType::Float, vec![1, 5, 5, 3]).unwrap();
    let e = run_kernel(nd, vec![x, Tensor::vec(vec![3i32, 3, 2, 4]), dy], 1).unwrap_err();
    assert!(e.message.contains("same out_depth"), "{e}");
}
