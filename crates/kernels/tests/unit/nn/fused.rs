use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn fused_mm(a: Tensor, b: Tensor, bias: Tensor, ops: &[&str]) -> Result<Tensor, Status> {
    let n = node(
        "_FusedMatMul",
        &[
            ("T", attr::ty(a.dtype())),
            ("transpose_a", attr::bool(false)),
            ("transpose_b", attr::bool(false)),
            ("fused_ops", attr::list_string(ops)),
            ("num_args", attr::int(1)),
            ("epsilon", attr::float(0.0)),
        ],
    );
    run_kernel(n, vec![a, b, bias], 1).map(|mut v| v.remove(0))
}

#[test]
fn matmul_bias_relu_equals_the_unfused_ops() {
    let a = Tensor::new(vec![2, 3], vec![1.0f32, -2., 3., -4., 5., -6.]).unwrap();
    let b = Tensor::new(vec![3, 2], vec![0.5f32, -1., 2., 0.25, -3., 1.5]).unwrap();
    let bias = Tensor::vec(vec![1.0f32, -20.0]);
    // a·b = [[-12.5, 3], [26, -3.75]]; + bias = [[-11.5, -17], [27, -23.75]].
    let y = fused_mm(a.clone(), b.clone(), bias.clone(), &["BiasAdd"]).unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), &[-11.5, -17.0, 27.0, -23.75]);
    let y = fused_mm(a, b, bias, &["BiasAdd", "Relu"]).unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), &[0.0, 0.0, 27.0, 0.0]);
}

#[test]
fn conv_bias_relu_equals_the_unfused_ops() {
    // 1x3x3x1 input, 2x2x1x2 filter, VALID: out 1x2x2x2.
    let x = Tensor::new(vec![1, 3, 3, 1], (1..=9).map(|v| v as f32).collect::<Vec<_>>()).unwrap();
    let f = Tensor::new(vec![2, 2, 1, 2], vec![1.0f32, -1., 0., 1., 0., -1., 1., 0.]).unwrap();
    let bias = Tensor::vec(vec![0.5f32, 2.0]);
    let n = node(
        "_FusedConv2D",
        &[
            ("T", attr::ty(DataType::Float)),
            ("strides", attr::list_int(&[1, 1, 1, 1])),
            ("padding", attr::string("VALID")),
            ("fused_ops", attr::list_string(&["BiasAdd", "Relu"])),
            ("num_args", attr::int(1)),
        ],
    );
    let y = run_kernel(n, vec![x.clone(), f.clone(), bias.clone()], 1).unwrap().remove(0);
    let conv = node(
        "Conv2D",
        &[
            ("T", attr::ty(DataType::Float)),
            ("strides", attr::list_int(&[1, 1, 1, 1])),
            ("padding", attr::string("VALID")),
        ],
    );
    let c = run_kernel(conv, vec![x, f], 1).unwrap().remove(0);
    let want: Vec<f32> = c
        .as_slice::<f32>()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, v)| (v + bias.as_slice::<f32>().unwrap()[i % 2]).max(0.0))
        .collect();
    assert_eq!(y.dims(), &[1, 2, 2, 2]);
    assert_eq!(y.as_slice::<f32>().unwrap(), want.as_slice());
}

#[test]
fn a_bias_of_the_wrong_size_and_unknown_fusions_are_refused() {
    let a = Tensor::new(vec![1, 2], vec![1.0f32, 2.]).unwrap();
    let b = Tensor::new(vec![2, 2], vec![1.0f32, 0., 0., 1.]).unwrap();
    let e = fused_mm(a.clone(), b.clone(), Tensor::vec(vec![1.0f32; 3]), &["BiasAdd"]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("biases"), "{}", e.message);
    let e = fused_mm(a, b, Tensor::vec(vec![1.0f32; 2]), &["BiasAdd", "Elu"]).unwrap_err();
    assert_eq!(e.code, Code::Unimplemented);
}
