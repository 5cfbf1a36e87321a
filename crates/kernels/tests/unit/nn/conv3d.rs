//! Conv3D and its gradients against the definition: the forward equals direct loops; both
//! gradients satisfy `<conv(x, w), dy> = <x, dx> = <w, dw>`.

use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

use crate::common::data;

fn conv3_node(op: &str, dtype: DataType, s: [i64; 3], padding: &str) -> ferroflow_core::proto::NodeDef {
    node(
        op,
        &[
            ("T", attr::ty(dtype)),
            ("strides", attr::list_int(&[1, s[0], s[1], s[2], 1])),
            ("padding", attr::string(padding)),
            ("data_format", attr::string("NDHWC")),
            ("dilations", attr::list_int(&[1, 1, 1, 1, 1])),
        ],
    )
}

/// TensorFlow's SAME/VALID output size and padding before.
fn window(i: usize, k: usize, s: usize, same: bool) -> (usize, usize) {
    if same {
        let o = i.div_ceil(s);
        (o, ((o - 1) * s + k).saturating_sub(i) / 2)
    } else {
        ((i - k) / s + 1, 0)
    }
}

/// Direct loops over `x` [n, d, h, w, c] and `f` [kd, kh, kw, c, oc].
fn reference(
    x: &[f64],
    xd: [usize; 5],
    f: &[f64],
    fd: [usize; 5],
    s: [usize; 3],
    same: bool,
) -> (Vec<f64>, [usize; 5]) {
    let [n, _, _, _, c] = xd;
    let oc = fd[4];
    let w: Vec<(usize, usize)> = (0..3).map(|i| window(xd[1 + i], fd[i], s[i], same)).collect();
    let od = [n, w[0].0, w[1].0, w[2].0, oc];
    let mut out = vec![0.0; od.iter().product()];
    for b in 0..n {
        for (o0, o1, o2) in
            (0..od[1]).flat_map(|a| (0..od[2]).flat_map(move |b2| (0..od[3]).map(move |c2| (a, b2, c2))))
        {
            for (k0, k1, k2) in
                (0..fd[0]).flat_map(|a| (0..fd[1]).flat_map(move |b2| (0..fd[2]).map(move |c2| (a, b2, c2))))
            {
                let i = [o0 * s[0] + k0, o1 * s[1] + k1, o2 * s[2] + k2];
                let p = [i[0].checked_sub(w[0].1), i[1].checked_sub(w[1].1), i[2].checked_sub(w[2].1)];
                let [Some(i0), Some(i1), Some(i2)] = p else { continue };
                if i0 >= xd[1] || i1 >= xd[2] || i2 >= xd[3] {
                    continue;
                }
                for ci in 0..c {
                    let xv = x[(((b * xd[1] + i0) * xd[2] + i1) * xd[3] + i2) * c + ci];
                    for o in 0..oc {
                        out[(((b * od[1] + o0) * od[2] + o1) * od[3] + o2) * oc + o] +=
                            xv * f[(((k0 * fd[1] + k1) * fd[2] + k2) * c + ci) * oc + o];
                    }
                }
            }
        }
    }
    (out, od)
}

type Case = ([usize; 5], [usize; 5], [usize; 3], bool);

const CASES: [Case; 5] = [
    ([2, 4, 5, 5, 3], [3, 3, 3, 3, 4], [1, 1, 1], true),
    ([1, 6, 7, 5, 2], [2, 3, 2, 2, 3], [2, 2, 1], false),
    ([3, 5, 4, 6, 2], [3, 2, 3, 2, 2], [2, 1, 2], true),
    ([2, 3, 3, 3, 4], [1, 1, 1, 4, 5], [1, 1, 1], false),
    ([1, 5, 6, 6, 1], [3, 5, 5, 1, 4], [1, 2, 2], true),
];

#[test]
fn conv3d_forward_and_gradients_match_the_definition() {
    for (xd, fd, s, same) in CASES {
        let case = (xd, fd, s, same);
        let pad = if same { "SAME" } else { "VALID" };
        let si = s.map(|v| v as i64);
        let (x, f) = (data(xd.iter().product(), 1), data(fd.iter().product(), 2));
        let (want, od) = reference(&x, xd, &f, fd, s, same);
        let xt = Tensor::new(xd.to_vec(), x.clone()).unwrap();
        let ft = Tensor::new(fd.to_vec(), f.clone()).unwrap();
        let got = run_kernel(conv3_node("Conv3D", DataType::Double, si, pad), vec![xt.clone(), ft.clone()], 1)
            .unwrap()
            .remove(0);
        assert_eq!(got.dims(), &od, "{case:?}");
        for (a, b) in got.as_slice::<f64>().unwrap().iter().zip(&want) {
            assert!((a - b).abs() < 1e-9, "{case:?}: {a} vs {b}");
        }
        let to32 = |d: &[usize], v: &[f64]| Tensor::new(d.to_vec(), v.iter().map(|&a| a as f32).collect()).unwrap();
        let got32 = run_kernel(conv3_node("Conv3D", DataType::Float, si, pad), vec![to32(&xd, &x), to32(&fd, &f)], 1)
            .unwrap()
            .remove(0);
        for (a, b) in got32.as_slice::<f32>().unwrap().iter().zip(&want) {
            assert!((*a as f64 - b).abs() < 1e-4 * b.abs().max(1.0), "{case:?} f32: {a} vs {b}");
        }

        let dy = data(want.len(), 3);
        let lhs: f64 = want.iter().zip(&dy).map(|(a, b)| a * b).sum();
        let dyt = Tensor::new(od.to_vec(), dy).unwrap();
        let shape = |d: &[usize]| Tensor::vec(d.iter().map(|&v| v as i32).collect::<Vec<_>>());
        let nd = conv3_node("Conv3DBackpropInputV2", DataType::Double, si, pad);
        let dx = run_kernel(nd, vec![shape(&xd), ft, dyt.clone()], 1).unwrap().remove(0);
        assert_eq!(dx.dims(), &xd);
        let r: f64 = dx.as_slice::<f64>().unwrap().iter().zip(&x).map(|(a, b)| a * b).sum();
        assert!((lhs - r).abs() < 1e-8 * lhs.abs().max(1.0), "input grad {case:?}: {lhs} vs {r}");
        let nd = conv3_node("Conv3DBackpropFilterV2", DataType::Double, si, pad);
        let df = run_kernel(nd, vec![xt, shape(&fd), dyt], 1).unwrap().remove(0);
        assert_eq!(df.dims(), &fd);
        let r: f64 = df.as_slice::<f64>().unwrap().iter().zip(&f).map(|(a, b)| a * b).sum();
        assert!((lhs - r).abs() < 1e-8 * lhs.abs().max(1.0), "filter grad {case:?}: {lhs} vs {r}");
    }
}

#[test]
fn conv3d_errors() {
    let run = |x: Vec<usize>, f: Vec<usize>, strides: [i64; 3]| {
        let xt = Tensor::zeros(DataType::Float, x).unwrap();
        let ft = Tensor::zeros(DataType::Float, f).unwrap();
        run_kernel(conv3_node("Conv3D", DataType::Float, strides, "VALID"), vec![xt, ft], 1).unwrap_err()
    };
    let e = run(vec![1, 3, 3, 3, 2], vec![1, 1, 1, 3, 1], [1, 1, 1]);
    assert!(e.message.contains("input depth must be equal to filter depth: 2 vs 3"), "{e}");
    let e = run(vec![1, 3, 3, 3], vec![1, 1, 1, 3, 1], [1, 1, 1]);
    assert!(e.message.contains("5-dimensional"), "{e}");
    let e = run(vec![1, 2, 3, 3, 1], vec![4, 1, 1, 1, 1], [1, 1, 1]);
    assert!(e.message.contains("negative"), "{e}");
    let e = run(vec![1, 2, 3, 3, 1], vec![1, 1, 1, 1, 1], [0, 1, 1]);
    assert_eq!(e.code, Code::InvalidArgument);
    let mut nd = conv3_node("Conv3D", DataType::Float, [1, 1, 1], "SAME");
    nd.attr.insert("data_format".into(), attr::string("NCDHW"));
    assert_eq!(ferroflow_kernels::create_kernel(&nd).err().unwrap().code, Code::Unimplemented);
    let nd = conv3_node("Conv3DBackpropInputV2", DataType::Float, [1, 1, 1], "VALID");
    let dy = Tensor::zeros(DataType::Float, vec![1, 2, 2, 2, 1]).unwrap();
    let f = Tensor::zeros(DataType::Float, vec![1, 1, 1, 1, 1]).unwrap();
    let e = run_kernel(nd, vec![Tensor::vec(vec![1i32, 3, 3, 3, 1]), f, dy], 1).unwrap_err();
    assert!(e.message.contains("out_backprop has shape"), "{e}");
}
