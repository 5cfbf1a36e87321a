use ferroflow_core::{attr, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn oh(idx: Tensor, depth: i32, axis: i64) -> Result<Tensor, Status> {
    let n =
        node("OneHot", &[("T", attr::ty(DataType::Float)), ("TI", attr::ty(idx.dtype())), ("axis", attr::int(axis))]);
    Ok(run_kernel(n, vec![idx, Tensor::scalar(depth), Tensor::scalar(1.0f32), Tensor::scalar(-1.0f32)], 1)?.remove(0))
}

#[test]
fn encodes() {
    let o = oh(Tensor::vec(vec![0i64, 2, -1, 5]), 3, -1).unwrap();
    assert_eq!(o.dims(), &[4, 3]);
    assert_eq!(o.as_slice::<f32>().unwrap(), &[1., -1., -1., -1., -1., 1., -1., -1., -1., -1., -1., -1.]);
    let o = oh(Tensor::vec(vec![0i32, 2]), 3, 0).unwrap();
    assert_eq!(o.dims(), &[3, 2]);
    assert_eq!(o.as_slice::<f32>().unwrap(), &[1., -1., -1., -1., -1., 1.]);
    assert!(oh(Tensor::vec(vec![0i32]), -1, -1).unwrap_err().message.contains("depth must be non-negative, got: -1"));
    assert!(oh(Tensor::vec(vec![0i32]), 2, 2)
        .unwrap_err()
        .message
        .contains("Expected axis to be -1 or between [0, 2)"));
}
