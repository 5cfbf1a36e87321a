use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::nn::conv::ConvAttrs;
use ferroflow_kernels::testutil::{conv_node, run_kernel};

use crate::common::{conv_reference, data, CASES};

#[test]
fn matches_reference_over_shapes() {
    for (n, h, w, c, kh, kw, oc, s, p) in CASES.into_iter().chain([(2, 28, 28, 1, 5, 5, 8, 1, "SAME")]) {
        let x = data(n * h * w * c, 1);
        let f = data(kh * kw * c * oc, 2);
        let nd = conv_node("Conv2D", DataType::Double, &[1, s, s, 1], p);
        let attrs = ConvAttrs::parse(&nd).unwrap();
        let (g, groups) = attrs.geom(&nd, "", &[n, h, w, c], &[kh, kw, c, oc]).unwrap();
        assert_eq!(groups, 1);
        let want = conv_reference(&g, &x, &f);
        let xt = Tensor::new(vec![n, h, w, c], x).unwrap();
        let ft = Tensor::new(vec![kh, kw, c, oc], f).unwrap();
        let got = run_kernel(nd, vec![xt, ft], 1).unwrap().remove(0);
        assert_eq!(got.dims(), &[n, g.y.output, g.x.output, oc]);
        let got = got.as_slice::<f64>().unwrap();
        for (a, b) in got.iter().zip(&want) {
            assert!((a - b).abs() < 1e-9, "case {:?}: {a} vs {b}", (n, h, w, c, kh, kw, oc, s, p));
        }
    }
}

#[test]
fn errors() {
    let run = |x: Vec<usize>, f: Vec<usize>, strides: &[i64], p: &str| {
        let nd = conv_node("Conv2D", DataType::Float, strides, p);
        let xt = Tensor::zeros(DataType::Float, x).unwrap();
        let ft = Tensor::zeros(DataType::Float, f).unwrap();
        run_kernel(nd, vec![xt, ft], 1).unwrap_err()
    };
    let e = run(vec![1, 4, 4, 2], vec![2, 2, 3, 1], &[1, 1, 1, 1], "SAME");
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("evenly divisible by filter depth: 2 vs 3"), "{e}");
    let e = run(vec![1, 4, 4, 2], vec![2, 2, 1, 1], &[1, 1, 1, 1], "SAME");
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("output depth must be evenly divisible by number of groups: 1 vs 2"), "{e}");
    let e = run(vec![1, 2, 2, 1], vec![5, 5, 1, 1], &[1, 1, 1, 1], "VALID");
    assert!(e.message.contains("negative"), "{e}");
    let e = run(vec![4, 4, 1], vec![1, 1, 1, 1], &[1, 1, 1, 1], "VALID");
    assert!(e.message.contains("4-dimensional"), "{e}");
    let e = run(vec![1, 4, 4, 1], vec![1, 1, 1, 1], &[2, 1, 1, 1], "VALID");
    assert_eq!(e.code, Code::Unimplemented);
    let e = run(vec![1, 4, 4, 1], vec![1, 1, 1, 1], &[1, 1, 1, 1], "EXPLICIT");
    assert_eq!(e.code, Code::Unimplemented);
    let mut nd = conv_node("Conv2D", DataType::Float, &[1, 1, 1, 1], "SAME");
    nd.attr.insert("dilations".into(), attr::list_int(&[1, 2, 2, 1]));
    assert_eq!(ferroflow_kernels::create_kernel(&nd).err().unwrap().code, Code::Unimplemented);
    nd.attr.insert("data_format".into(), attr::string("NCHW"));
    assert_eq!(ferroflow_kernels::create_kernel(&nd).err().unwrap().code, Code::Unimplemented);
}
