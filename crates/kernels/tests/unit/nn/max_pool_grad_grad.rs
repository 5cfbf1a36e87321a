use ferroflow_core::{Code, DataType, Tensor};

use ferroflow_kernels::testutil::{pool_node, run_kernel};

#[test]
fn picks_grad_at_each_window_maximum() {
    // 3x3 image, 2x2 windows stride 2 SAME: maxima 5 (index 1), 9 (5), 8 (7), 6 (8).
    let x = Tensor::new(vec![1, 3, 3, 1], vec![1.0f32, 5., 2., 4., 3., 9., 7., 8., 6.]).unwrap();
    let y = Tensor::new(vec![1, 2, 2, 1], vec![5.0f32, 9., 8., 6.]).unwrap();
    let gr = Tensor::new(vec![1, 3, 3, 1], (0..9).map(|v| v as f32 * 10.).collect::<Vec<_>>()).unwrap();
    let out =
        run_kernel(pool_node("MaxPoolGradGrad", DataType::Float, 2, 2, "SAME"), vec![x, y, gr], 1).unwrap().remove(0);
    assert_eq!(out.dims(), &[1, 2, 2, 1]);
    assert_eq!(out.as_slice::<f32>().unwrap(), &[10., 50., 70., 80.]);
}

#[test]
fn ties_pick_the_first_maximum_per_channel() {
    // 2 channels; channel 0 all equal (first position wins), channel 1 max at the end.
    let x = Tensor::new(vec![1, 2, 2, 2], vec![1.0f32, 0., 1., 1., 1., 2., 1., 3.]).unwrap();
    let y = Tensor::new(vec![1, 1, 1, 2], vec![1.0f32, 3.]).unwrap();
    let gr = Tensor::new(vec![1, 2, 2, 2], vec![1.0f32, 2., 3., 4., 5., 6., 7., 8.]).unwrap();
    let out =
        run_kernel(pool_node("MaxPoolGradGrad", DataType::Float, 2, 2, "VALID"), vec![x, y, gr], 1).unwrap().remove(0);
    assert_eq!(out.as_slice::<f32>().unwrap(), &[1., 8.]);
}

#[test]
fn shape_errors_name_the_inputs() {
    let x = Tensor::zeros(DataType::Float, vec![1, 4, 4, 1]).unwrap();
    let y = Tensor::zeros(DataType::Float, vec![1, 2, 2, 1]).unwrap();
    let bad = Tensor::zeros(DataType::Float, vec![1, 2, 2, 1]).unwrap();
    let e = run_kernel(pool_node("MaxPoolGradGrad", DataType::Float, 2, 2, "VALID"), vec![x.clone(), y, bad], 1)
        .unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("grad must have the shape of orig_input"), "{e}");
    let y3 = Tensor::zeros(DataType::Float, vec![1, 3, 3, 1]).unwrap();
    let e = run_kernel(pool_node("MaxPoolGradGrad", DataType::Float, 2, 2, "VALID"), vec![x.clone(), y3, x], 1)
        .unwrap_err();
    assert!(e.message.contains("orig_output shape"), "{e}");
}
