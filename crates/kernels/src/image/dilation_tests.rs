//! Values from TensorFlow 2.21 (the same calls through `tf.raw_ops`).

use ferroflow_core::{attr, Code, DataType, Tensor};

use crate::testutil::{node, run_kernel};

fn dil(op: &str, t: DataType, strides: [i64; 4], rates: [i64; 4], padding: &str) -> ferroflow_core::proto::NodeDef {
    let attrs = [
        ("T", attr::ty(t)),
        ("strides", attr::list_int(&strides)),
        ("rates", attr::list_int(&rates)),
        ("padding", attr::string(padding)),
    ];
    node(op, &attrs)
}

/// [1, 3, 4, 1]: (0..12) % 5, and a 2×2 filter.
fn x_and_filter() -> (Tensor, Tensor) {
    let x: Vec<f32> = (0..12).map(|i| (i % 5) as f32).collect();
    (Tensor::new(vec![1, 3, 4, 1], x).unwrap(), Tensor::new(vec![2, 2, 1], vec![0f32, 1.0, 2.0, -1.0]).unwrap())
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.as_slice::<f32>().unwrap().to_vec()
}

#[test]
fn forward_and_backprops_valid_and_same() {
    let (x, f) = x_and_filter();
    for (padding, out_dims, y, dx, df) in [
        (
            "VALID",
            vec![1, 2, 3, 1],
            vec![6.0, 3.0, 4.0, 5.0, 6.0, 3.0],
            [0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0],
            [0.0, 3.0, 3.0, 0.0],
        ),
        (
            "SAME",
            vec![1, 3, 4, 1],
            vec![6.0, 3.0, 4.0, 4.0, 5.0, 6.0, 3.0, 3.0, 5.0, 4.0, 2.0, 1.0],
            [0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 2.0, 1.0, 3.0, 0.0, 3.0],
            [2.0, 5.0, 5.0, 0.0],
        ),
    ] {
        let one = |o: &str| dil(o, DataType::Float, [1, 1, 1, 1], [1, 1, 1, 1], padding);
        let out = run_kernel(one("Dilation2D"), vec![x.clone(), f.clone()], 1).unwrap();
        assert_eq!(out[0].dims(), &out_dims[..]);
        assert_eq!(f32s(&out[0]), y);
        let dy = Tensor::new(out_dims.clone(), vec![1f32; y.len()]).unwrap();
        let g = run_kernel(one("Dilation2DBackpropInput"), vec![x.clone(), f.clone(), dy.clone()], 1).unwrap();
        assert_eq!(f32s(&g[0]), dx, "{padding}");
        let g = run_kernel(one("Dilation2DBackpropFilter"), vec![x.clone(), f.clone(), dy], 1).unwrap();
        assert_eq!(f32s(&g[0]), df, "{padding}");
    }
}

#[test]
fn strides_rates_and_windows_outside_the_image() {
    let (x, f) = x_and_filter();
    let out =
        run_kernel(dil("Dilation2D", DataType::Float, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), vec![x, f], 1).unwrap();
    assert_eq!(f32s(&out[0]), [6.0, 3.0, 4.0, 1.0]);
    // A 1×1 image under a 2×2 filter at rate 3: the one window misses the pixel: lowest(),
    // and its gradient still lands on the clamped origin.
    let one = Tensor::new(vec![1, 1, 1, 1], vec![1f32]).unwrap();
    let zero = Tensor::new(vec![2, 2, 1], vec![0f32; 4]).unwrap();
    let n = |op: &str| dil(op, DataType::Float, [1, 1, 1, 1], [1, 3, 3, 1], "SAME");
    let out = run_kernel(n("Dilation2D"), vec![one.clone(), zero.clone()], 1).unwrap();
    assert_eq!(f32s(&out[0]), [f32::MIN]);
    let dy = Tensor::new(vec![1, 1, 1, 1], vec![2f32]).unwrap();
    let g = run_kernel(n("Dilation2DBackpropInput"), vec![one, zero, dy], 1).unwrap();
    assert_eq!(f32s(&g[0]), [2.0]);
}

#[test]
fn integers_and_doubles() {
    let x = Tensor::new(vec![1, 2, 2, 1], vec![1i32, 2, 3, 4]).unwrap();
    let f = Tensor::new(vec![2, 2, 1], vec![0i32, 1, 1, 0]).unwrap();
    let out = run_kernel(dil("Dilation2D", DataType::Int32, [1; 4], [1; 4], "SAME"), vec![x, f], 1).unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), [4, 5, 5, 4]);
    let x = Tensor::new(vec![1, 1, 3, 1], vec![0.5f64, -1.0, 0.25]).unwrap();
    let f = Tensor::new(vec![1, 2, 1], vec![0.125f64, 1.0]).unwrap();
    let out = run_kernel(dil("Dilation2D", DataType::Double, [1; 4], [1; 4], "VALID"), vec![x, f], 1).unwrap();
    assert_eq!(out[0].as_slice::<f64>().unwrap(), [0.625, 1.25]);
}

#[test]
fn bad_attrs_and_shapes_are_tensorflows_errors() {
    let (x, f) = x_and_filter();
    let e = crate::create_kernel(&dil("Dilation2D", DataType::Float, [1, 1, 1, 2], [1; 4], "VALID")).err().unwrap();
    assert_eq!(e.code, Code::Unimplemented);
    assert!(e.message.contains("Stride is only supported across spatial dimensions."), "{e}");
    let e = crate::create_kernel(&dil("Dilation2D", DataType::Float, [1; 4], [2, 1, 1, 1], "VALID")).err().unwrap();
    assert!(e.message.contains("Rate is only supported across spatial dimensions."), "{e}");
    let big = Tensor::new(vec![7, 2, 1], vec![0f32; 14]).unwrap();
    let valid = || dil("Dilation2D", DataType::Float, [1; 4], [1; 4], "VALID");
    let e = run_kernel(valid(), vec![x.clone(), big], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(
        e.message.contains(
            "Computed output size would be negative: -3 [input_size: 3, effective_filter_size: 7, stride: 1]"
        ),
        "{e}"
    );
    let deep = Tensor::new(vec![2, 2, 2], vec![0f32; 8]).unwrap();
    let e = run_kernel(valid(), vec![x.clone(), deep], 1).unwrap_err();
    assert!(e.message.contains("input and filter must have the same depth: 1 vs 2"), "{e}");
    let dy = Tensor::new(vec![1, 3, 4, 1], vec![0f32; 12]).unwrap();
    let n = dil("Dilation2DBackpropFilter", DataType::Float, [1; 4], [1; 4], "VALID");
    let e = run_kernel(n, vec![x, f, dy], 1).unwrap_err();
    assert!(e.message.contains("out_backprop has incompatible size."), "{e}");
}
