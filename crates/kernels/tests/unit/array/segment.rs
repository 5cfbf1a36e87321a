use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn segment_sums() {
    let n = node(
        "UnsortedSegmentSum",
        &[
            ("T", attr::ty(DataType::Float)),
            ("Tindices", attr::ty(DataType::Int32)),
            ("Tnumsegments", attr::ty(DataType::Int32)),
        ],
    );
    let data = Tensor::new(vec![4, 2], vec![1.0f32, 2., 3., 4., 5., 6., 7., 8.]).unwrap();
    let run =
        |ids: Vec<i32>, num: i32| run_kernel(n.clone(), vec![data.clone(), Tensor::vec(ids), Tensor::scalar(num)], 1);
    let o = run(vec![0, 2, 0, -1], 3).unwrap();
    assert_eq!(o[0].dims(), &[3, 2]);
    assert_eq!(o[0].as_slice::<f32>().unwrap(), &[6., 8., 0., 0., 3., 4.]);
    assert!(run(vec![0, 1, 5, -1], 4).unwrap_err().message.contains("segment_ids[2] = 5 is out of range [0, 4)"));
    assert!(run(vec![0, 1, 1, 2], -1).unwrap_err().message.contains("Input num_segments == -1 must not be negative."));
    assert!(run(vec![0, 1], 4)
        .unwrap_err()
        .message
        .contains("data.shape = [4,2] does not start with segment_ids.shape = [2]"));
}

#[test]
fn stitches() {
    let n = node("DynamicStitch", &[("T", attr::ty(DataType::Float)), ("N", attr::int(2))]);
    let i0 = Tensor::vec(vec![0i32, 3]);
    let i1 = Tensor::vec(vec![1i32, 3]);
    let d0 = Tensor::new(vec![2, 2], vec![1.0f32, 2., 3., 4.]).unwrap();
    let d1 = Tensor::new(vec![2, 2], vec![5.0f32, 6., 7., 8.]).unwrap();
    let o = run_kernel(n.clone(), vec![i0.clone(), i1.clone(), d0.clone(), d1], 1).unwrap();
    assert_eq!(o[0].dims(), &[4, 2]);
    assert_eq!(o[0].as_slice::<f32>().unwrap(), &[1., 2., 5., 6., 0., 0., 7., 8.]);
    let e =
        run_kernel(n.clone(), vec![i0.clone(), Tensor::vec(vec![-1i32, 2]), d0.clone(), d0.clone()], 1).unwrap_err();
    assert!(e.message.contains("indices[0] is out of range"));
    let e =
        run_kernel(n.clone(), vec![i0.clone(), Tensor::vec(vec![i32::MAX, 2]), d0.clone(), d0.clone()], 1).unwrap_err();
    assert_eq!(e.code, ferroflow_core::Code::InvalidArgument);
    assert!(e.message.contains("2147483648 rows"), "{e}");
    let bad = Tensor::new(vec![2, 3], vec![0.0f32; 6]).unwrap();
    let e = run_kernel(n, vec![i0, i1, d0, bad], 1).unwrap_err();
    assert!(e.message.contains("Need data[0].shape[1:] = data[1].shape[1:]"));
}
