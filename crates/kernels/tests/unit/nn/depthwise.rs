// Tuples of index vectors are clearer here than one-use type aliases.
#![allow(clippy::type_complexity)]
use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn dw_node(op: &str, dtype: DataType, stride: i64, padding: &str, explicit: &[i64]) -> ferroflow_core::proto::NodeDef {
    node(
        op,
        &[
            ("T", attr::ty(dtype)),
            ("strides", attr::list_int(&[1, stride, stride, 1])),
            ("padding", attr::string(padding)),
            ("explicit_paddings", attr::list_int(explicit)),
            ("data_format", attr::string("NHWC")),
            ("dilations", attr::list_int(&[1, 1, 1, 1])),
        ],
    )
}

/// A plain reference: out[b, oy, ox, c*m+k] = Σ x[b, oy*s+ky-pt, ox*s+kx-pl, c] f[ky, kx, c, k].
fn reference(
    x: &[f64],
    xd: [usize; 4],
    f: &[f64],
    fd: [usize; 4],
    s: usize,
    pad: (usize, usize),
    od: [usize; 2],
) -> Vec<f64> {
    let [n, h, w, c] = xd;
    let [kh, kw, _, m] = fd;
    let mut out = vec![0.0; n * od[0] * od[1] * c * m];
    for b in 0..n {
        for oy in 0..od[0] {
            for ox in 0..od[1] {
                for ch in 0..c {
                    for k in 0..m {
                        let mut acc = 0.0;
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let iy = (oy * s + ky) as isize - pad.0 as isize;
                                let ix = (ox * s + kx) as isize - pad.1 as isize;
                                if iy < 0 || ix < 0 || iy >= h as isize || ix >= w as isize {
                                    continue;
                                }
                                acc += x[((b * h + iy as usize) * w + ix as usize) * c + ch]
                                    * f[((ky * kw + kx) * c + ch) * m + k];
                            }
                        }
                        out[((b * od[0] + oy) * od[1] + ox) * c * m + ch * m + k] = acc;
                    }
                }
            }
        }
    }
    out
}

fn seq(n: usize, k: f64) -> Vec<f64> {
    (0..n).map(|i| ((i * 7 % 11) as f64 - 5.0) * k).collect()
}

#[test]
fn forward_matches_reference_and_backprops_are_adjoint() {
    // (input dims, filter dims, stride, padding, explicit, (pad top, pad left), out rows/cols)
    let cases: [([usize; 4], [usize; 4], usize, &str, Vec<i64>, (usize, usize), [usize; 2]); 3] = [
        ([2, 5, 5, 3], [3, 3, 3, 2], 1, "SAME", vec![], (1, 1), [5, 5]),
        ([1, 7, 6, 4], [3, 2, 4, 1], 2, "VALID", vec![], (0, 0), [3, 3]),
        ([1, 4, 4, 2], [2, 2, 2, 3], 1, "EXPLICIT", vec![0, 0, 1, 2, 0, 1, 0, 0], (1, 0), [6, 4]),
    ];
    for (xd, fd, s, pad, explicit, p, od) in cases {
        let x = seq(xd.iter().product(), 0.25);
        let f = seq(fd.iter().product(), 0.5);
        let want = reference(&x, xd, &f, fd, s, p, od);
        let xt = Tensor::new(xd.to_vec(), x.clone()).unwrap();
        let ft = Tensor::new(fd.to_vec(), f.clone()).unwrap();
        let y = run_kernel(
            dw_node("DepthwiseConv2dNative", DataType::Double, s as i64, pad, &explicit),
            vec![xt.clone(), ft.clone()],
            1,
        )
        .unwrap()
        .remove(0);
        assert_eq!(y.dims(), &[xd[0], od[0], od[1], xd[3] * fd[3]]);
        assert_eq!(y.as_slice::<f64>().unwrap(), &want[..]);
        // <dy, conv(x, f)> == <backprop_input(dy), x> == <backprop_filter(dy), f>.
        let dy = seq(want.len(), 0.125);
        let dyt = Tensor::new(y.dims().to_vec(), dy.clone()).unwrap();
        let to_i32 = |d: [usize; 4]| Tensor::vec(d.iter().map(|&v| v as i32).collect::<Vec<_>>());
        let dx = run_kernel(
            dw_node("DepthwiseConv2dNativeBackpropInput", DataType::Double, s as i64, pad, &explicit),
            vec![to_i32(xd), ft, dyt.clone()],
            1,
        )
        .unwrap()
        .remove(0);
        let df = run_kernel(
            dw_node("DepthwiseConv2dNativeBackpropFilter", DataType::Double, s as i64, pad, &explicit),
            vec![xt, to_i32(fd), dyt],
            1,
        )
        .unwrap()
        .remove(0);
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
        let lhs = dot(&dy, &want);
        assert!((dot(dx.as_slice::<f64>().unwrap(), &x) - lhs).abs() < 1e-9, "{pad}");
        assert!((dot(df.as_slice::<f64>().unwrap(), &f) - lhs).abs() < 1e-9, "{pad}");
    }
}

#[test]
fn checks_attrs_and_shapes() {
    let x = Tensor::zeros(DataType::Float, vec![1, 5, 5, 2]).unwrap();
    let f = Tensor::zeros(DataType::Float, vec![3, 3, 1, 2]).unwrap();
    let e = run_kernel(dw_node("DepthwiseConv2dNative", DataType::Float, 1, "SAME", &[]), vec![x.clone(), f], 1)
        .unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("input and filter must have the same depth: 2 vs 1"), "{e}");
    let f = Tensor::zeros(DataType::Float, vec![3, 3, 2, 2]).unwrap();
    let mut n = dw_node("DepthwiseConv2dNative", DataType::Float, 1, "SAME", &[]);
    n.attr.insert("dilations".into(), attr::list_int(&[1, 2, 2, 1]));
    assert_eq!(run_kernel(n, vec![x.clone(), f.clone()], 1).unwrap_err().code, Code::Unimplemented);
    let dy = Tensor::zeros(DataType::Float, vec![1, 4, 5, 4]).unwrap();
    let e = run_kernel(
        dw_node("DepthwiseConv2dNativeBackpropInput", DataType::Float, 1, "SAME", &[]),
        vec![Tensor::vec(vec![1i32, 5, 5, 2]), f.clone(), dy.clone()],
        1,
    )
    .unwrap_err();
    assert!(
        e.message.contains("Number of rows of out_backprop doesn't match computed: actual = 4, computed = 5"),
        "{e}"
    );
    let e = run_kernel(
        dw_node("DepthwiseConv2dNativeBackpropInput", DataType::Float, 1, "SAME", &[]),
        vec![Tensor::vec(vec![1i32, -5, 5, 2]), f.clone(), dy.clone()],
        1,
    )
    .unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    let e = run_kernel(
        dw_node("DepthwiseConv2dNativeBackpropFilter", DataType::Float, 1, "SAME", &[]),
        vec![x, Tensor::vec(vec![3i32, 3, 2]), dy],
        1,
    )
    .unwrap_err();
    assert!(e.message.contains("filter_sizes must be 4-dimensional"), "{e}");
}

/// Runs `op` on the tensors converted to `dtype` and returns the output as f64.
fn run_as(op: &str, dtype: DataType, s: usize, pad: &str, explicit: &[i64], inputs: &[Tensor]) -> Vec<f64> {
    let conv = |t: &Tensor| match (t.dtype(), dtype) {
        (DataType::Double, DataType::Float) => {
            let v: Vec<f32> = t.as_slice::<f64>().unwrap().iter().map(|&v| v as f32).collect();
            Tensor::new(t.dims().to_vec(), v).unwrap()
        }
        _ => t.clone(),
    };
    let out = run_kernel(dw_node(op, dtype, s as i64, pad, explicit), inputs.iter().map(conv).collect(), 1)
        .unwrap()
        .remove(0);
    match dtype {
        DataType::Float => out.as_slice::<f32>().unwrap().iter().map(|&v| v as f64).collect(),
        _ => out.as_slice::<f64>().unwrap().to_vec(),
    }
}

/// float32 takes the vectorized kernels on AVX2/AVX-512 hosts (multiplier 1), float64 the
/// portable ones: on values whose sums are exact in float32 the two must agree bit for bit,
/// over channel counts that exercise every vector block width and the scalar tails, edge
/// pixels, strides 1, 2 and 3, 3- 5- and 2-column filters and a padding wider than the filter.
#[test]
fn float32_vector_paths_equal_the_portable_kernels() {
    // (input dims, filter rows, filter cols, multiplier, stride, padding, explicit paddings)
    let cases: [([usize; 4], usize, usize, usize, usize, &str, Vec<i64>); 15] = [
        ([2, 9, 13, 16], 3, 3, 1, 1, "SAME", vec![]),
        ([1, 8, 20, 40], 3, 3, 1, 1, "SAME", vec![]),
        ([2, 11, 11, 67], 3, 3, 1, 2, "SAME", vec![]),
        ([1, 7, 17, 96], 5, 5, 1, 1, "SAME", vec![]),
        ([1, 10, 10, 144], 3, 3, 1, 1, "VALID", vec![]),
        ([2, 9, 14, 8], 3, 3, 1, 2, "VALID", vec![]),
        ([1, 6, 30, 24], 3, 2, 1, 1, "SAME", vec![]),
        ([1, 5, 5, 32], 5, 5, 1, 1, "SAME", vec![]),
        ([1, 3, 2, 16], 3, 3, 1, 1, "SAME", vec![]),
        ([1, 6, 9, 24], 3, 3, 1, 1, "EXPLICIT", vec![0, 0, 3, 1, 1, 3, 0, 0]),
        ([1, 6, 7, 12], 3, 3, 2, 1, "SAME", vec![]),
        ([3, 12, 12, 200], 3, 3, 1, 1, "SAME", vec![]),
        // Strided input gradients (`depthwise_strided.rs`): MobileNetV2's padded stride-2
        // layers, a stride of 3 with a 5×5 window, explicit padding at stride 2.
        ([2, 9, 9, 96], 3, 3, 1, 2, "VALID", vec![]),
        ([1, 11, 10, 20], 5, 5, 1, 3, "SAME", vec![]),
        ([1, 8, 9, 40], 3, 3, 1, 2, "EXPLICIT", vec![0, 0, 1, 2, 2, 0, 0, 0]),
    ];
    for (xd, kh, kw, m, s, pad, explicit) in cases {
        let fd = [kh, kw, xd[3], m];
        let x = Tensor::new(xd.to_vec(), seq(xd.iter().product(), 0.25)).unwrap();
        let f = Tensor::new(fd.to_vec(), seq(fd.iter().product(), 0.5)).unwrap();
        let y64 = run_as("DepthwiseConv2dNative", DataType::Double, s, pad, &explicit, &[x.clone(), f.clone()]);
        let y32 = run_as("DepthwiseConv2dNative", DataType::Float, s, pad, &explicit, &[x.clone(), f.clone()]);
        let label = format!("{xd:?} {kh}x{kw} m{m} s{s} {pad}");
        assert_eq!(y32, y64, "forward {label}");
        let y = run_kernel(
            dw_node("DepthwiseConv2dNative", DataType::Double, s as i64, pad, &explicit),
            vec![x.clone(), f.clone()],
            1,
        )
        .unwrap()
        .remove(0);
        let dy = Tensor::new(y.dims().to_vec(), seq(y64.len(), 0.125)).unwrap();
        let sizes = |d: &[usize]| Tensor::vec(d.iter().map(|&v| v as i32).collect::<Vec<_>>());
        for (op, inputs) in [
            ("DepthwiseConv2dNativeBackpropInput", vec![sizes(&xd), f.clone(), dy.clone()]),
            ("DepthwiseConv2dNativeBackpropFilter", vec![x.clone(), sizes(&fd), dy.clone()]),
        ] {
            let want = run_as(op, DataType::Double, s, pad, &explicit, &inputs);
            assert!(want.iter().any(|&v| v != 0.0), "{op} {label}");
            assert_eq!(run_as(op, DataType::Float, s, pad, &explicit, &inputs), want, "{op} {label}");
        }
    }
}
