//! The argmax poolings beyond the golden cases: an argmax outside its image is an
//! InvalidArgument (never a write elsewhere), and the second-order op, which TensorFlow has
//! no CPU kernel for, picks the gradient at each maximum.

use ferroflow_core::{attr, Code, DataType, Tensor};
use ferroflow_kernels::testutil::{node, run_kernel};

fn argmax_node(op: &str, batch: bool) -> ferroflow_core::proto::NodeDef {
    node(
        op,
        &[
            ("T", attr::ty(DataType::Float)),
            ("Targmax", attr::ty(DataType::Int64)),
            ("ksize", attr::list_int(&[1, 2, 2, 1])),
            ("strides", attr::list_int(&[1, 2, 2, 1])),
            ("padding", attr::string("VALID")),
            ("include_batch_in_index", attr::bool(batch)),
        ],
    )
}

#[test]
fn argmax_outside_the_image_is_refused() {
    let x = Tensor::new(vec![2, 2, 2, 1], vec![1.0f32, 5., 3., 2., 0., 0., 9., 0.]).unwrap();
    let fwd = run_kernel(argmax_node("MaxPoolWithArgmax", false), vec![x.clone()], 2).unwrap();
    assert_eq!(fwd[0].as_slice::<f32>().unwrap(), &[5., 9.]);
    assert_eq!(fwd[1].as_slice::<i64>().unwrap(), &[1, 2]);
    let with_batch = run_kernel(argmax_node("MaxPoolWithArgmax", true), vec![x.clone()], 2).unwrap();
    assert_eq!(with_batch[1].as_slice::<i64>().unwrap(), &[1, 6]);
    let g = Tensor::new(vec![2, 1, 1, 1], vec![10.0f32, 20.]).unwrap();
    for (batch, bad) in [(false, 4i64), (false, -1), (true, 2)] {
        // In batch mode, index 2 of the second image lies in the first.
        let arg = Tensor::new(vec![2, 1, 1, 1], vec![if batch { 1 } else { 0 }, bad]).unwrap();
        let e =
            run_kernel(argmax_node("MaxPoolGradWithArgmax", batch), vec![x.clone(), g.clone(), arg], 1).unwrap_err();
        assert!(e.code == Code::InvalidArgument && e.message.contains("Invalid output gradient index"), "{e}");
    }
    let dx = run_kernel(argmax_node("MaxPoolGradWithArgmax", false), vec![x.clone(), g, fwd[1].clone()], 1).unwrap();
    assert_eq!(dx[0].as_slice::<f32>().unwrap(), &[0., 10., 0., 0., 0., 0., 20., 0.]);
    let gg = Tensor::new(vec![2, 2, 2, 1], vec![1.0f32, 2., 3., 4., 5., 6., 7., 8.]).unwrap();
    let out = run_kernel(argmax_node("MaxPoolGradGradWithArgmax", false), vec![x, gg, fwd[1].clone()], 1).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[2., 7.]);
}
