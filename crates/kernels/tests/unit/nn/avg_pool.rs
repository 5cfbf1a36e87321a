use ferroflow_core::{DataType, Tensor};

use ferroflow_kernels::testutil::{pool_node, run_kernel};

#[test]
fn same_padding_counts_only_covered_pixels() {
    let x = Tensor::new(vec![1, 3, 3, 1], vec![1.0f32, 5., 2., 4., 3., 9., 7., 8., 6.]).unwrap();
    let y = run_kernel(pool_node("AvgPool", DataType::Float, 2, 2, "SAME"), vec![x], 1).unwrap().remove(0);
    assert_eq!(y.as_slice::<f32>().unwrap(), &[13. / 4., 11. / 2., 15. / 2., 6.]);
    let gr = Tensor::new(vec![1, 2, 2, 1], vec![4.0f32, 2., 2., 1.]).unwrap();
    let dx = run_kernel(
        pool_node("AvgPoolGrad", DataType::Float, 2, 2, "SAME"),
        vec![Tensor::vec(vec![1i32, 3, 3, 1]), gr],
        1,
    )
    .unwrap()
    .remove(0);
    assert_eq!(dx.as_slice::<f32>().unwrap(), &[1., 1., 1., 1., 1., 1., 1., 1., 1.]);
}

#[test]
fn grad_shape_errors() {
    let gr = Tensor::zeros(DataType::Float, vec![1, 2, 2, 1]).unwrap();
    let e = run_kernel(
        pool_node("AvgPoolGrad", DataType::Float, 2, 2, "SAME"),
        vec![Tensor::vec(vec![1i32, 3, 3]), gr.clone()],
        1,
    );
    assert!(e.unwrap_err().message.contains("4 elements"));
    let e = run_kernel(
        pool_node("AvgPoolGrad", DataType::Float, 2, 2, "VALID"),
        vec![Tensor::vec(vec![1i32, 3, 3, 1]), gr],
        1,
    );
    assert!(e.unwrap_err().message.contains("Expected grad shape"));
}
