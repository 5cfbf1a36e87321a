use ferroflow_core::{attr, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn concat(xs: Vec<Tensor>, axis: i32) -> Result<Tensor, Status> {
    let n = node(
        "ConcatV2",
        &[("T", attr::ty(xs[0].dtype())), ("N", attr::int(xs.len() as i64)), ("Tidx", attr::ty(DataType::Int32))],
    );
    let mut inputs = xs;
    inputs.push(Tensor::scalar(axis));
    Ok(run_kernel(n, inputs, 1)?.remove(0))
}

#[test]
fn concatenates() {
    let a = Tensor::new(vec![2, 2], vec![1.0f32, 2., 3., 4.]).unwrap();
    let b = Tensor::new(vec![2, 1], vec![5.0f32, 6.]).unwrap();
    let c = concat(vec![a.clone(), b.clone()], -1).unwrap();
    assert_eq!(c.dims(), &[2, 3]);
    assert_eq!(c.as_slice::<f32>().unwrap(), &[1., 2., 5., 3., 4., 6.]);
    let d = concat(vec![a.clone(), a.clone()], 0).unwrap();
    assert_eq!(d.as_slice::<f32>().unwrap(), &[1., 2., 3., 4., 1., 2., 3., 4.]);
    let e = concat(vec![a.clone(), b.clone()], 0).unwrap_err();
    assert!(
        e.message
            .contains("ConcatOp : Dimension 1 in both shapes must be equal: shape[0] = [2,2] vs. shape[1] = [2,1]"),
        "{e}"
    );
    let e = concat(vec![a.clone(), b], 2).unwrap_err();
    assert!(e.message.contains("range [-2, 2), but got 2"));
    let e = concat(vec![a, Tensor::vec(vec![1.0f32])], 0).unwrap_err();
    assert!(e.message.contains("Ranks of all input tensors should match"));
    let s = concat(vec![Tensor::vec(vec![b"a".to_vec()]), Tensor::vec(vec![b"b".to_vec()])], 0).unwrap();
    assert_eq!(s.as_slice::<Vec<u8>>().unwrap(), &[b"a".to_vec(), b"b".to_vec()]);
}

#[test]
fn offsets() {
    let n = node("ConcatOffset", &[("N", attr::int(2)), ("shape_type", attr::ty(DataType::Int32))]);
    let o =
        run_kernel(n.clone(), vec![Tensor::scalar(1i32), Tensor::vec(vec![2i32, 3]), Tensor::vec(vec![2i32, 5])], 2)
            .unwrap();
    assert_eq!(o[0].as_slice::<i32>().unwrap(), &[0, 0]);
    assert_eq!(o[1].as_slice::<i32>().unwrap(), &[0, 3]);
    let e =
        run_kernel(n.clone(), vec![Tensor::scalar(1i32), Tensor::vec(vec![2i32, 3]), Tensor::vec(vec![3i32, 5])], 2)
            .unwrap_err();
    assert!(e.message.contains(
        "All dimensions except 1 must match. Input 1 has shape [3 5] and doesn't match input 0 with shape [2 3]."
    ));
    let e = run_kernel(n, vec![Tensor::scalar(3i32), Tensor::vec(vec![2i32, 3]), Tensor::vec(vec![2i32, 5])], 2)
        .unwrap_err();
    assert!(e.message.contains("Concat dim is out of range: 3 vs. 2"));
}
