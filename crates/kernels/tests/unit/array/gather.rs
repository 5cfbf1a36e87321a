use ferroflow_core::{attr, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn g2(params: Tensor, indices: Tensor, axis: i32, bd: i64) -> Result<Tensor, Status> {
    let n = node(
        "GatherV2",
        &[
            ("Tparams", attr::ty(params.dtype())),
            ("Tindices", attr::ty(indices.dtype())),
            ("Taxis", attr::ty(DataType::Int32)),
            ("batch_dims", attr::int(bd)),
        ],
    );
    Ok(run_kernel(n, vec![params, indices, Tensor::scalar(axis)], 1)?.remove(0))
}

#[test]
fn gathers() {
    let p = Tensor::new(vec![3, 2], vec![1.0f32, 2., 3., 4., 5., 6.]).unwrap();
    let o = g2(p.clone(), Tensor::vec(vec![2i64, 0, 2]), 0, 0).unwrap();
    assert_eq!((o.dims(), o.as_slice::<f32>().unwrap()), (&[3usize, 2][..], &[5., 6., 1., 2., 5., 6.][..]));
    let o = g2(p.clone(), Tensor::new(vec![1, 2], vec![1i32, 0]).unwrap(), -1, 0).unwrap();
    assert_eq!((o.dims(), o.as_slice::<f32>().unwrap()), (&[3usize, 1, 2][..], &[2., 1., 4., 3., 6., 5.][..]));
    let o = g2(p.clone(), Tensor::scalar(1i32), 1, 0).unwrap();
    assert_eq!((o.dims(), o.as_slice::<f32>().unwrap()), (&[3usize][..], &[2., 4., 6.][..]));
    let o = g2(p.clone(), Tensor::new(vec![3, 1], vec![1i32, 0, 1]).unwrap(), 1, 1).unwrap();
    assert_eq!((o.dims(), o.as_slice::<f32>().unwrap()), (&[3usize, 1][..], &[2., 3., 6.][..]));
    let big = Tensor::new(vec![1000, 64], (0..64000).collect::<Vec<i32>>()).unwrap();
    let o = g2(big, Tensor::vec((0..1000).rev().collect::<Vec<i32>>()), 0, 0).unwrap();
    assert_eq!(o.as_slice::<i32>().unwrap()[64], 998 * 64);
}

#[test]
fn errors() {
    let p = Tensor::vec((0..10).map(|x| x as f32).collect::<Vec<_>>());
    let e = g2(p.clone(), Tensor::vec(vec![1i32, 2, 3, 12]), 0, 0).unwrap_err();
    assert!(e.message.contains("indices[3] = 12 is not in [0, 10)"), "{e}");
    let q = Tensor::new(vec![4, 5], vec![0.0f32; 20]).unwrap();
    let e = g2(q.clone(), Tensor::new(vec![1, 2], vec![1i32, 7]).unwrap(), 1, 0).unwrap_err();
    assert!(e.message.contains("indices[0,1] = 7 is not in [0, 5)"));
    assert!(g2(q.clone(), Tensor::vec(vec![0i32]), 2, 0).unwrap_err().message.contains("at least rank 3"));
    let e = g2(q.clone(), Tensor::new(vec![4, 1], vec![0i32; 4]).unwrap(), 0, 1).unwrap_err();
    assert!(e.message.contains("batch_dims (1) must be less than or equal to axis (0)."));
    let e = g2(q, Tensor::new(vec![3, 1], vec![0i32; 3]).unwrap(), 1, 1).unwrap_err();
    assert!(e.message.contains("params.shape[0]: 4 should be equal to indices.shape[0]: 3"));
    let n = node(
        "Gather",
        &[
            ("Tparams", attr::ty(DataType::Float)),
            ("Tindices", attr::ty(DataType::Int32)),
            ("validate_indices", attr::bool(true)),
        ],
    );
    let e = run_kernel(n, vec![p, Tensor::vec(vec![-1i32])], 1).unwrap_err();
    assert!(e.message.contains("indices[0] = -1 is not in [0, 10)"));
}
