//! The 3-D pooling kernels against direct definitions.

use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn pool_node(op: &str, k: [i64; 3], s: [i64; 3], padding: &str) -> ferroflow_core::proto::NodeDef {
    node(
        op,
        &[
            ("T", attr::ty(DataType::Double)),
            ("ksize", attr::list_int(&[1, k[0], k[1], k[2], 1])),
            ("strides", attr::list_int(&[1, s[0], s[1], s[2], 1])),
            ("padding", attr::string(padding)),
            ("data_format", attr::string("NDHWC")),
        ],
    )
}

fn t(dims: &[usize], v: Vec<f64>) -> Tensor {
    Tensor::new(dims.to_vec(), v).unwrap()
}

#[test]
fn max_and_avg_pool_one_window() {
    // One 2x2x2 image of 1 channel, a 2x2x2 VALID window: one output.
    let x = t(&[1, 2, 2, 2, 1], vec![1.0, 5.0, 3.0, 5.0, -2.0, 0.0, 4.0, 2.0]);
    let y = run_kernel(pool_node("MaxPool3D", [2, 2, 2], [1, 1, 1], "VALID"), vec![x.clone()], 1).unwrap().remove(0);
    assert_eq!((y.dims(), y.as_slice::<f64>().unwrap()), (&[1usize, 1, 1, 1, 1][..], &[5.0][..]));
    let a = run_kernel(pool_node("AvgPool3D", [2, 2, 2], [1, 1, 1], "VALID"), vec![x.clone()], 1).unwrap().remove(0);
    assert_eq!(a.as_slice::<f64>().unwrap(), &[18.0 / 8.0]);
    // The gradient goes to both cells equal to the maximum (TensorFlow's 3-D semantics).
    let dy = t(&[1, 1, 1, 1, 1], vec![10.0]);
    let dx = run_kernel(pool_node("MaxPool3DGrad", [2, 2, 2], [1, 1, 1], "VALID"), vec![x.clone(), y.clone(), dy], 1)
        .unwrap()
        .remove(0);
    assert_eq!(dx.as_slice::<f64>().unwrap(), &[0.0, 10.0, 0.0, 10.0, 0.0, 0.0, 0.0, 0.0]);
    // The grad-grad takes the first maximal cell's value.
    let gg = t(&[1, 2, 2, 2, 1], vec![0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5]);
    let out =
        run_kernel(pool_node("MaxPool3DGradGrad", [2, 2, 2], [1, 1, 1], "VALID"), vec![x, y, gg], 1).unwrap().remove(0);
    assert_eq!(out.as_slice::<f64>().unwrap(), &[1.5]);
}

#[test]
fn same_padding_counts_only_input_cells() {
    // [1, 3, 1, 1, 2]: planes 0..3, windows of 2 planes, stride 2, SAME: outputs 2 planes,
    // the last window covers plane 2 only.
    let x = t(&[1, 3, 1, 1, 2], vec![1.0, -1.0, 3.0, -3.0, 5.0, -5.0]);
    let nd = pool_node("AvgPool3D", [2, 1, 1], [2, 1, 1], "SAME");
    let y = run_kernel(nd, vec![x.clone()], 1).unwrap().remove(0);
    assert_eq!(y.dims(), &[1, 2, 1, 1, 2]);
    assert_eq!(y.as_slice::<f64>().unwrap(), &[2.0, -2.0, 5.0, -5.0]);
    let m = run_kernel(pool_node("MaxPool3D", [2, 1, 1], [2, 1, 1], "SAME"), vec![x], 1).unwrap().remove(0);
    assert_eq!(m.as_slice::<f64>().unwrap(), &[3.0, -1.0, 5.0, -5.0]);
    // AvgPool3DGrad is AvgPool3D's adjoint: <avg(x), dy> = <x, grad(dy)>.
    let dy = vec![1.0, 2.0, 3.0, 4.0];
    let nd = pool_node("AvgPool3DGrad", [2, 1, 1], [2, 1, 1], "SAME");
    let dx = run_kernel(nd, vec![Tensor::vec(vec![1i32, 3, 1, 1, 2]), t(&[1, 2, 1, 1, 2], dy)], 1).unwrap().remove(0);
    assert_eq!(dx.as_slice::<f64>().unwrap(), &[0.5, 1.0, 0.5, 1.0, 3.0, 4.0]);
}

#[test]
fn avg_pool_grad_is_the_adjoint_over_shapes() {
    for (dims, k, s, p) in [
        ([2, 5, 4, 6, 3], [2, 3, 2], [2, 1, 2], "SAME"),
        ([1, 6, 6, 5, 2], [3, 3, 3], [2, 2, 1], "VALID"),
        ([2, 4, 5, 3, 1], [3, 2, 3], [1, 2, 2], "SAME"),
    ] {
        let n: usize = dims.iter().product();
        let x: Vec<f64> = (0..n).map(|i| ((i * 37 % 101) as f64 - 50.0) / 25.0).collect();
        let y = run_kernel(pool_node("AvgPool3D", k, s, p), vec![t(&dims, x.clone())], 1).unwrap().remove(0);
        let dy: Vec<f64> = (0..y.num_elements()).map(|i| ((i * 13 % 29) as f64 - 14.0) / 7.0).collect();
        let lhs: f64 = y.as_slice::<f64>().unwrap().iter().zip(&dy).map(|(a, b)| a * b).sum();
        let shape = Tensor::vec(dims.iter().map(|&v| v as i32).collect::<Vec<_>>());
        let dx = run_kernel(pool_node("AvgPool3DGrad", k, s, p), vec![shape, t(y.dims(), dy)], 1).unwrap().remove(0);
        let rhs: f64 = dx.as_slice::<f64>().unwrap().iter().zip(&x).map(|(a, b)| a * b).sum();
        assert!((lhs - rhs).abs() < 1e-9 * lhs.abs().max(1.0), "{dims:?}: {lhs} vs {rhs}");
        // Max pooling of distinct values: the gradient of the sum routes each window's
        // gradient to its maximum, so <dx, 1> = <dy, 1>.
        let m = run_kernel(pool_node("MaxPool3D", k, s, p), vec![t(&dims, x.clone())], 1).unwrap().remove(0);
        let ones = t(m.dims(), vec![1.0; m.num_elements()]);
        let dx = run_kernel(pool_node("MaxPool3DGrad", k, s, p), vec![t(&dims, x.clone()), m.clone(), ones], 1)
            .unwrap()
            .remove(0);
        let total: f64 = dx.as_slice::<f64>().unwrap().iter().sum();
        assert!((total - m.num_elements() as f64).abs() < 1e-9, "{dims:?}: {total}");
    }
}

#[test]
fn pool3d_errors() {
    let x = t(&[1, 2, 2, 2, 1], vec![0.0; 8]);
    let mut nd = pool_node("MaxPool3D", [1, 1, 1], [1, 1, 1], "VALID");
    nd.attr.insert("ksize".into(), attr::list_int(&[2, 1, 1, 1, 1]));
    assert_eq!(ferroflow_kernels::create_kernel(&nd).err().unwrap().code, Code::Unimplemented);
    let e = run_kernel(pool_node("MaxPool3D", [4, 1, 1], [1, 1, 1], "VALID"), vec![x.clone()], 1).unwrap_err();
    assert!(e.message.contains("negative"), "{e}");
    let e = run_kernel(pool_node("MaxPool3D", [1, 1, 1], [1, 1, 1], "VALID"), vec![t(&[2, 2], vec![0.0; 4])], 1)
        .unwrap_err();
    assert!(e.message.contains("5-dimensional"), "{e}");
    let bad = t(&[1, 1, 1, 1, 1], vec![0.0]);
    let nd = pool_node("MaxPool3DGrad", [1, 1, 1], [1, 1, 1], "VALID");
    let e = run_kernel(nd, vec![x.clone(), bad.clone(), bad], 1).unwrap_err();
    assert!(e.message.contains("orig_output must have shape"), "{e}");
}
