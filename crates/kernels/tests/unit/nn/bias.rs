use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run(op: &str, fmt: &str, inputs: Vec<Tensor>) -> Result<Tensor, Status> {
    let n = node(op, &[("T", attr::ty(inputs[0].dtype())), ("data_format", attr::string(fmt))]);
    run_kernel(n, inputs, 1).map(|mut v| v.remove(0))
}

#[test]
fn adds_per_channel() {
    let x = Tensor::new(vec![2, 1, 3], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap();
    let b = Tensor::vec(vec![10.0f32, 20., 30.]);
    let y = run("BiasAdd", "NHWC", vec![x, b]).unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), &[11., 22., 33., 14., 25., 36.]);
    let x = Tensor::new(vec![1, 2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
    let y = run("BiasAdd", "NCHW", vec![x, Tensor::vec(vec![100i32, 200])]).unwrap();
    assert_eq!(y.as_slice::<i32>().unwrap(), &[101, 102, 103, 204, 205, 206]);
}

#[test]
fn large_input_matches_sequential() {
    let (rows, c) = (3000, 7);
    let x: Vec<f64> = (0..rows * c).map(|v| (v % 13) as f64).collect();
    let b: Vec<f64> = (0..c).map(|v| v as f64 * 0.5).collect();
    let y =
        run("BiasAdd", "NHWC", vec![Tensor::new(vec![rows, c], x.clone()).unwrap(), Tensor::vec(b.clone())]).unwrap();
    let want: Vec<f64> = x.iter().enumerate().map(|(i, v)| v + b[i % c]).collect();
    assert_eq!(y.as_slice::<f64>().unwrap(), &want[..]);
    let g = run("BiasAddGrad", "NHWC", vec![Tensor::new(vec![rows, c], x.clone()).unwrap()]).unwrap();
    let mut want = vec![0.0; c];
    x.iter().enumerate().for_each(|(i, v)| want[i % c] += v);
    assert_eq!(g.as_slice::<f64>().unwrap(), &want[..]);
}

#[test]
fn grad_sums_all_but_channels() {
    let g = Tensor::new(vec![2, 2, 2], vec![1.0f32, 2., 3., 4., 5., 6., 7., 8.]).unwrap();
    let r = run("BiasAddGrad", "NHWC", vec![g.clone()]).unwrap();
    assert_eq!(r.as_slice::<f32>().unwrap(), &[16., 20.]);
    let r = run("BiasAddGrad", "NCHW", vec![g]).unwrap();
    assert_eq!(r.as_slice::<f32>().unwrap(), &[14., 22.]);
}

#[test]
fn shape_errors() {
    let x = Tensor::zeros(DataType::Float, vec![2, 3]).unwrap();
    let e = run("BiasAdd", "NHWC", vec![x.clone(), Tensor::vec(vec![1.0f32; 4])]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("[4] vs. [2,3]"), "{e}");
    let e = run("BiasAdd", "NHWC", vec![Tensor::vec(vec![1.0f32; 3]), Tensor::vec(vec![1.0f32; 3])]).unwrap_err();
    assert!(e.message.contains("at least 2D"), "{e}");
    let e = run("BiasAdd", "NHWC", vec![x, Tensor::vec(vec![1.0f64; 3])]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}
