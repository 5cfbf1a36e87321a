use ferroflow_core::{attr, Code, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run(op: &str, c: Tensor, t: Tensor, e: Tensor) -> Result<Tensor, Status> {
    run_kernel(node(op, &[("T", attr::ty(t.dtype()))]), vec![c, t, e], 1).map(|mut v| v.remove(0))
}

fn m(shape: &[usize], v: Vec<f32>) -> Tensor {
    Tensor::new(shape, v).unwrap()
}

#[test]
fn select_v1_modes() {
    let c = Tensor::vec(vec![true, false]);
    let out = run("Select", c.clone(), m(&[2, 2], vec![1., 2., 3., 4.]), m(&[2, 2], vec![5., 6., 7., 8.])).unwrap();
    assert_eq!(out.as_slice::<f32>().unwrap(), &[1., 2., 7., 8.]);
    let out = run("Select", c.clone(), m(&[2], vec![1., 2.]), m(&[2], vec![5., 6.])).unwrap();
    assert_eq!(out.as_slice::<f32>().unwrap(), &[1., 6.]);
    let out = run("Select", Tensor::scalar(false), m(&[2], vec![1., 2.]), m(&[2], vec![5., 6.])).unwrap();
    assert_eq!(out.as_slice::<f32>().unwrap(), &[5., 6.]);
    let s = |v: &[&str]| Tensor::vec(v.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>());
    let out = run("Select", c, s(&["a", "b"]), s(&["c", "d"])).unwrap();
    assert_eq!(out, s(&["a", "d"]));
}

#[test]
fn select_v1_errors() {
    let e = run("Select", Tensor::vec(vec![true; 3]), m(&[2, 2], vec![0.; 4]), m(&[2, 2], vec![0.; 4])).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("must match size of 'cond', but saw: 2 vs. 3"), "{e}");
    let c = Tensor::new(vec![1usize, 2], vec![true, false]).unwrap();
    let e = run("Select", c, m(&[2, 2], vec![0.; 4]), m(&[2, 2], vec![0.; 4])).unwrap_err();
    assert!(e.message.contains("Input 0: [1,2] != input 1: [2,2]"), "{e}");
    let e = run("Select", Tensor::vec(vec![true, false]), m(&[2, 2], vec![0.; 4]), m(&[2, 3], vec![0.; 6]));
    assert!(e.unwrap_err().message.contains("'then' and 'else' must have the same size"));
}

#[test]
fn select_v2_broadcasts() {
    let c = Tensor::new(vec![2usize, 1], vec![true, false]).unwrap();
    let out = run("SelectV2", c, m(&[3], vec![1., 2., 3.]), m(&[], vec![0.])).unwrap();
    assert_eq!(out.dims(), &[2, 3]);
    assert_eq!(out.as_slice::<f32>().unwrap(), &[1., 2., 3., 0., 0., 0.]);
    let e = run("SelectV2", Tensor::vec(vec![true; 3]), m(&[2, 2], vec![0.; 4]), m(&[2, 2], vec![0.; 4]));
    let e = e.unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("condition [3], then [2,2], and else [2,2] must be broadcastable"), "{e}");
}
