//! Input validation of the image kernels: malformed shapes, sizes, boxes and attrs are
//! errors with TensorFlow's codes, never panics; outputs sized from inputs respect the
//! memory budget.

use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn resize_attrs(t: DataType) -> Vec<(&'static str, ferroflow_core::proto::AttrValue)> {
    vec![("T", attr::ty(t)), ("align_corners", attr::bool(false)), ("half_pixel_centers", attr::bool(false))]
}

fn code(op: &str, attrs: &[(&str, ferroflow_core::proto::AttrValue)], inputs: Vec<Tensor>, n: usize) -> Code {
    match run_kernel(node(op, attrs), inputs, n) {
        Ok(_) => Code::Ok,
        Err(e) => {
            if e.code == Code::InvalidArgument {
                assert!(e.message.contains("test"), "{op}: error does not name the node: {e}");
            }
            e.code
        }
    }
}

fn img(dims: &[usize]) -> Tensor {
    Tensor::new(dims.to_vec(), vec![0.5f32; dims.iter().product()]).unwrap()
}

#[test]
fn resize_rejects_bad_inputs() {
    let a = resize_attrs(DataType::Float);
    for op in ["ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic"] {
        let cases = [
            (img(&[2, 3, 3]), Tensor::vec(vec![2i32, 2])),
            (img(&[1, 3, 3, 1]), Tensor::vec(vec![2i32])),
            (img(&[1, 3, 3, 1]), Tensor::vec(vec![0i32, 2])),
            (img(&[1, 3, 3, 1]), Tensor::vec(vec![-4i32, 2])),
            (img(&[1, 0, 3, 1]), Tensor::vec(vec![2i32, 2])),
            (img(&[1, 3, 3, 0]), Tensor::vec(vec![2i32, 2])),
        ];
        for (x, s) in cases {
            let what = format!("{op} {} {:?}", x.shape(), s);
            assert_eq!(code(op, &a, vec![x, s], 1), Code::InvalidArgument, "{what}");
        }
        // An output larger than the memory budget.
        let big = Tensor::vec(vec![i32::MAX, i32::MAX]);
        assert_eq!(code(op, &a, vec![img(&[1, 2, 2, 1]), big], 1), Code::ResourceExhausted, "{op}");
    }
    let both = [
        ("T", attr::ty(DataType::Float)),
        ("align_corners", attr::bool(true)),
        ("half_pixel_centers", attr::bool(true)),
    ];
    assert!(run_kernel(node("ResizeBilinear", &both), vec![img(&[1, 2, 2, 1]), Tensor::vec(vec![3i32, 3])], 1).is_err());
}

#[test]
fn resize_grads_reject_bad_inputs() {
    let a = resize_attrs(DataType::Float);
    for op in ["ResizeBilinearGrad", "ResizeBicubicGrad"] {
        assert_eq!(code(op, &a, vec![img(&[1, 2, 2, 1]), img(&[2, 3, 3, 1])], 1), Code::InvalidArgument);
        assert_eq!(code(op, &a, vec![img(&[1, 2, 2]), img(&[1, 3, 3, 1])], 1), Code::InvalidArgument);
        assert_eq!(code(op, &a, vec![img(&[1, 0, 2, 1]), img(&[1, 3, 3, 1])], 1), Code::InvalidArgument);
    }
    let s = Tensor::vec(vec![-1i32, 3]);
    assert_eq!(code("ResizeNearestNeighborGrad", &a, vec![img(&[1, 2, 2, 1]), s], 1), Code::InvalidArgument);
    let s = Tensor::vec(vec![i32::MAX, i32::MAX]);
    assert_eq!(code("ResizeNearestNeighborGrad", &a, vec![img(&[1, 2, 2, 1]), s], 1), Code::ResourceExhausted);
}

fn crop_attrs() -> Vec<(&'static str, ferroflow_core::proto::AttrValue)> {
    vec![
        ("T", attr::ty(DataType::Float)),
        ("method", attr::string("bilinear")),
        ("extrapolation_value", attr::float(0.0)),
    ]
}

#[test]
fn crop_and_resize_rejects_bad_inputs() {
    let a = crop_attrs();
    let boxes = Tensor::new(vec![1, 4], vec![0.0f32, 0.0, 1.0, 1.0]).unwrap();
    let run = |b: Tensor, i: Tensor, c: Tensor| code("CropAndResize", &a, vec![img(&[2, 3, 3, 1]), b, i, c], 1);
    let c2 = Tensor::vec(vec![2i32, 2]);
    assert_eq!(run(boxes.clone(), Tensor::vec(vec![2i32]), c2.clone()), Code::InvalidArgument);
    assert_eq!(run(boxes.clone(), Tensor::vec(vec![-1i32]), c2.clone()), Code::InvalidArgument);
    assert_eq!(run(boxes.clone(), Tensor::vec(vec![0i32, 1]), c2.clone()), Code::InvalidArgument);
    assert_eq!(
        run(Tensor::new(vec![1, 3], vec![0f32; 3]).unwrap(), Tensor::vec(vec![0i32]), c2.clone()),
        Code::InvalidArgument
    );
    assert_eq!(run(boxes.clone(), Tensor::vec(vec![0i32]), Tensor::vec(vec![0i32, 2])), Code::InvalidArgument);
    assert_eq!(
        run(boxes.clone(), Tensor::vec(vec![0i32]), Tensor::vec(vec![i32::MAX, i32::MAX])),
        Code::ResourceExhausted
    );
    // Non-finite boxes sample nothing (extrapolation value), without panicking.
    let nan = Tensor::new(vec![1, 4], vec![f32::NAN, 0.0, f32::INFINITY, 1.0]).unwrap();
    assert_eq!(run(nan, Tensor::vec(vec![0i32]), c2.clone()), Code::Ok);
    let ga = [("T", attr::ty(DataType::Float)), ("method", attr::string("bilinear"))];
    let g = img(&[1, 2, 2, 1]);
    let size = Tensor::vec(vec![i32::MAX, i32::MAX, i32::MAX, 1]);
    assert_eq!(
        code("CropAndResizeGradImage", &ga, vec![g.clone(), boxes.clone(), Tensor::vec(vec![0i32]), size], 1),
        Code::ResourceExhausted
    );
    let size = Tensor::vec(vec![2i32, 3, 3, 2]);
    assert_eq!(
        code("CropAndResizeGradImage", &ga, vec![g, boxes, Tensor::vec(vec![0i32]), size], 1),
        Code::InvalidArgument
    );
}

#[test]
fn nms_rejects_bad_inputs() {
    let a = [("T", attr::ty(DataType::Float)), ("T_threshold", attr::ty(DataType::Float))];
    let boxes = Tensor::new(vec![2, 4], vec![0f32, 0.0, 1.0, 1.0, 0.0, 0.0, 0.5, 0.5]).unwrap();
    let scores = Tensor::vec(vec![0.9f32, 0.8]);
    let run = |b: &Tensor, s: &Tensor, m: i32, iou: f32| {
        let ins = vec![b.clone(), s.clone(), Tensor::scalar(m), Tensor::scalar(iou), Tensor::scalar(0.0f32)];
        code("NonMaxSuppressionV3", &a, ins, 1)
    };
    assert_eq!(run(&boxes, &scores, 2, 0.5), Code::Ok);
    assert_eq!(run(&boxes, &scores, 2, 1.5), Code::InvalidArgument);
    assert_eq!(run(&boxes, &scores, -1, 0.5), Code::InvalidArgument);
    assert_eq!(run(&boxes, &Tensor::vec(vec![0.9f32]), 2, 0.5), Code::InvalidArgument);
    assert_eq!(run(&Tensor::new(vec![2, 2], vec![0f32; 4]).unwrap(), &scores, 2, 0.5), Code::InvalidArgument);
    // Padding to max_output_size: zeros after the selected indices, and the valid count.
    let v4 = [
        ("T", attr::ty(DataType::Float)),
        ("T_threshold", attr::ty(DataType::Float)),
        ("pad_to_max_output_size", attr::bool(true)),
    ];
    let ins = vec![boxes, scores, Tensor::scalar(4i32), Tensor::scalar(0.2f32), Tensor::scalar(0.0f32)];
    let out = run_kernel(node("NonMaxSuppressionV4", &v4), ins, 2).unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), &[0, 0, 0, 0]);
    assert_eq!(out[1].scalar_value::<i32>().unwrap(), 1);
}

#[test]
fn transform_rejects_bad_inputs() {
    let a = [
        ("dtype", attr::ty(DataType::Float)),
        ("interpolation", attr::string("BILINEAR")),
        ("fill_mode", attr::string("REFLECT")),
    ];
    let t = Tensor::new(vec![1, 8], vec![1f32, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]).unwrap();
    let run = |x: Tensor, t: Tensor, s: Tensor| {
        code("ImageProjectiveTransformV3", &a, vec![x, t, s, Tensor::scalar(0f32)], 1)
    };
    assert_eq!(run(img(&[1, 2, 2, 1]), t.clone(), Tensor::vec(vec![2i32, 2])), Code::Ok);
    assert_eq!(
        run(img(&[1, 2, 2, 1]), Tensor::new(vec![1, 7], vec![0f32; 7]).unwrap(), Tensor::vec(vec![2i32, 2])),
        Code::InvalidArgument
    );
    assert_eq!(run(img(&[2, 2, 2]), t.clone(), Tensor::vec(vec![2i32, 2])), Code::InvalidArgument);
    assert_eq!(run(img(&[1, 2, 2, 1]), t.clone(), Tensor::vec(vec![0i32, 2])), Code::InvalidArgument);
    assert_eq!(run(img(&[1, 2, 2, 1]), t.clone(), Tensor::vec(vec![i32::MAX, i32::MAX])), Code::ResourceExhausted);
    // Huge and non-finite transforms take the fill value.
    let wild = Tensor::new(vec![1, 8], vec![f32::MAX, f32::NAN, f32::INFINITY, 1e30, -1e30, 0.0, 1e-30, 0.0]).unwrap();
    for mode in ["REFLECT", "WRAP", "CONSTANT", "NEAREST"] {
        let a = [
            ("dtype", attr::ty(DataType::Float)),
            ("interpolation", attr::string("NEAREST")),
            ("fill_mode", attr::string(mode)),
        ];
        let ins = vec![img(&[1, 3, 3, 1]), wild.clone(), Tensor::vec(vec![4i32, 4]), Tensor::scalar(0f32)];
        assert_eq!(code("ImageProjectiveTransformV3", &a, ins, 1), Code::Ok, "{mode}");
    }
    let bad = [
        ("dtype", attr::ty(DataType::Float)),
        ("interpolation", attr::string("CUBIC")),
        ("fill_mode", attr::string("REFLECT")),
    ];
    assert!(ferroflow_kernels::create_kernel(&node("ImageProjectiveTransformV3", &bad)).is_err());
}

#[test]
fn color_ops_reject_bad_inputs() {
    assert_eq!(code("RGBToHSV", &[("T", attr::ty(DataType::Float))], vec![img(&[2, 4])], 1), Code::InvalidArgument);
    assert_eq!(
        code("AdjustHue", &[("T", attr::ty(DataType::Float))], vec![img(&[2, 3]), Tensor::scalar(0.1f32)], 1),
        Code::InvalidArgument
    );
    assert_eq!(
        code(
            "AdjustSaturation",
            &[("T", attr::ty(DataType::Float))],
            vec![img(&[1, 2, 3]), Tensor::vec(vec![0.1f32])],
            1
        ),
        Code::InvalidArgument
    );
    // A huge hue delta terminates.
    let out = run_kernel(
        node("AdjustHue", &[("T", attr::ty(DataType::Float))]),
        vec![img(&[1, 1, 3]), Tensor::scalar(1e30f32)],
        1,
    );
    assert!(out.is_ok());
}

#[test]
fn patches_reject_bad_attrs_and_sizes() {
    let a = |k: &[i64], p: &str| {
        vec![
            ("T", attr::ty(DataType::Float)),
            ("ksizes", attr::list_int(k)),
            ("strides", attr::list_int(&[1, 1, 1, 1])),
            ("rates", attr::list_int(&[1, 1, 1, 1])),
            ("padding", attr::string(p)),
        ]
    };
    assert!(ferroflow_kernels::create_kernel(&node("ExtractImagePatches", &a(&[2, 2, 2, 1], "SAME"))).is_err());
    assert_eq!(
        code("ExtractImagePatches", &a(&[1, 5, 5, 1], "VALID"), vec![img(&[1, 3, 3, 1])], 1),
        Code::InvalidArgument
    );
    let huge = a(&[1, 4000, 4000, 1], "SAME");
    assert_eq!(code("ExtractImagePatches", &huge, vec![img(&[1, 64, 64, 4])], 1), Code::ResourceExhausted);
}

#[test]
fn resize_bilinear_values() {
    // 2×2 → 3×3 with align_corners: the centre is the mean.
    let a = [
        ("T", attr::ty(DataType::Float)),
        ("align_corners", attr::bool(true)),
        ("half_pixel_centers", attr::bool(false)),
    ];
    let x = Tensor::new(vec![1, 2, 2, 1], vec![0f32, 1.0, 2.0, 3.0]).unwrap();
    let out = run_kernel(node("ResizeBilinear", &a), vec![x, Tensor::vec(vec![3i32, 3])], 1).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[0.0, 0.5, 1.0, 1.0, 1.5, 2.0, 2.0, 2.5, 3.0]);
}
