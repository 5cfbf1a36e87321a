use ferroflow_core::{attr, DataType, Status, Tensor};

use ferroflow_kernels::array::strided_slice::Masks;
use ferroflow_kernels::testutil::{node, run_kernel};

fn ss(x: &Tensor, b: Vec<i32>, e: Vec<i32>, s: Vec<i32>, m: Masks) -> Result<Tensor, Status> {
    let n = node(
        "StridedSlice",
        &[
            ("T", attr::ty(x.dtype())),
            ("Index", attr::ty(DataType::Int32)),
            ("begin_mask", attr::int(m.begin)),
            ("end_mask", attr::int(m.end)),
            ("ellipsis_mask", attr::int(m.ellipsis)),
            ("new_axis_mask", attr::int(m.new_axis)),
            ("shrink_axis_mask", attr::int(m.shrink_axis)),
        ],
    );
    Ok(run_kernel(n, vec![x.clone(), Tensor::vec(b), Tensor::vec(e), Tensor::vec(s)], 1)?.remove(0))
}

fn vals(t: &Tensor) -> (Vec<usize>, Vec<i32>) {
    (t.dims().to_vec(), t.as_slice::<i32>().unwrap().to_vec())
}

#[test]
fn common_forms() {
    let x = Tensor::new(vec![3, 4], (0..12).collect::<Vec<i32>>()).unwrap();
    let none = Masks::default();
    // x[1:3]
    assert_eq!(vals(&ss(&x, vec![1], vec![3], vec![1], none).unwrap()), (vec![2, 4], (4..12).collect()));
    // x[:, 0]
    let m = Masks { begin: 1, end: 1, shrink_axis: 2, ..none };
    assert_eq!(vals(&ss(&x, vec![0, 0], vec![0, 1], vec![1, 1], m).unwrap()), (vec![3], vec![0, 4, 8]));
    // x[..., 1]
    let m = Masks { ellipsis: 1, shrink_axis: 2, ..none };
    assert_eq!(vals(&ss(&x, vec![0, 1], vec![0, 2], vec![1, 1], m).unwrap()), (vec![3], vec![1, 5, 9]));
    // x[::-1]
    let m = Masks { begin: 1, end: 1, ..none };
    assert_eq!(
        vals(&ss(&x, vec![0], vec![0], vec![-1], m).unwrap()),
        (vec![3, 4], vec![8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3])
    );
    // x[None]
    let m = Masks { new_axis: 1, ..none };
    let y = ss(&x, vec![0], vec![0], vec![1], m).unwrap();
    assert_eq!(y.dims(), &[1, 3, 4]);
    assert!(y.shares_buffer(&x));
    // x[-1, ::-2]
    let m = Masks { begin: 2, end: 2, shrink_axis: 1, ..none };
    assert_eq!(vals(&ss(&x, vec![-1, 0], vec![0, 0], vec![1, -2], m).unwrap()), (vec![2], vec![11, 9]));
    // x[5:1] is empty
    assert_eq!(ss(&x, vec![5], vec![1], vec![1], none).unwrap().dims(), &[0, 4]);
}

#[test]
fn errors() {
    let x = Tensor::new(vec![2, 3], (0..6).collect::<Vec<i32>>()).unwrap();
    let none = Masks::default();
    let e = ss(&x, vec![0], vec![1], vec![0], none).unwrap_err();
    assert!(e.message.contains("strides[0] must be non-zero"));
    let m = Masks { shrink_axis: 1, ..none };
    let e = ss(&x, vec![5], vec![6], vec![1], m).unwrap_err();
    assert!(e.message.contains("slice index 5 of dimension 0 out of bounds."));
    let e = ss(&x, vec![0, 0, 0], vec![1, 1, 1], vec![1, 1, 1], none).unwrap_err();
    assert!(e.message.contains("Index out of range using input dim 2; input has only 2 dims"));
    let m = Masks { ellipsis: 3, ..none };
    assert!(ss(&x, vec![0, 0], vec![1, 1], vec![1, 1], m).unwrap_err().message.contains("Multiple ellipses"));
    let n = node("StridedSlice", &[("T", attr::ty(DataType::Int32)), ("Index", attr::ty(DataType::Int32))]);
    assert!(ferroflow_kernels::create_kernel(&n).is_err());
}

#[test]
fn grad_scatters() {
    let n = node(
        "StridedSliceGrad",
        &[
            ("T", attr::ty(DataType::Float)),
            ("Index", attr::ty(DataType::Int32)),
            ("begin_mask", attr::int(0)),
            ("end_mask", attr::int(0)),
            ("ellipsis_mask", attr::int(0)),
            ("new_axis_mask", attr::int(0)),
            ("shrink_axis_mask", attr::int(1)),
        ],
    );
    let dy = Tensor::vec(vec![1.0f32, 2.0, 3.0]);
    let inputs =
        vec![Tensor::vec(vec![2i32, 3]), Tensor::vec(vec![1i32]), Tensor::vec(vec![2i32]), Tensor::vec(vec![1i32]), dy];
    let o = run_kernel(n.clone(), inputs.clone(), 1).unwrap();
    assert_eq!(o[0].as_slice::<f32>().unwrap(), &[0., 0., 0., 1., 2., 3.]);
    let mut bad = inputs;
    bad[4] = Tensor::vec(vec![1.0f32]);
    assert!(run_kernel(n, bad, 1).unwrap_err().message.contains("shape of dy was [1] instead of [3]"));
}
