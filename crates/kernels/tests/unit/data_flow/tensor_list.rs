//! The TensorList kernels driven directly: what `tf.while_loop` gradients and
//! `tf.TensorArray` do with them, their errors and their encodings.

use ferroflow_core::{attr, Code, DataType, Status, Tensor, Variant};

use ferroflow_kernels::testutil::{node, run_kernel};

fn run(
    op: &str,
    extra: &[(&str, ferroflow_core::proto::AttrValue)],
    inputs: Vec<Tensor>,
    outs: usize,
) -> Result<Vec<Tensor>, Status> {
    let mut attrs = vec![("element_dtype", attr::ty(DataType::Float)), ("shape_type", attr::ty(DataType::Int32))];
    attrs.extend(extra.iter().cloned());
    run_kernel(node(op, &attrs), inputs, outs)
}

fn row(v: [f32; 2]) -> Tensor {
    Tensor::vec(v.to_vec())
}

#[test]
fn push_pop_and_stack_as_a_while_gradient_uses_them() {
    let empty = run("EmptyTensorList", &[], vec![Tensor::vec(vec![2i32]), Tensor::scalar(-1i32)], 1).unwrap().remove(0);
    let l1 = run("TensorListPushBack", &[], vec![empty.clone(), row([1.0, 2.0])], 1).unwrap().remove(0);
    let l2 = run("TensorListPushBack", &[], vec![l1.clone(), row([3.0, 4.0])], 1).unwrap().remove(0);
    let len = run("TensorListLength", &[], vec![l2.clone()], 1).unwrap().remove(0);
    assert_eq!(len.scalar_value::<i32>().unwrap(), 2);
    // Lists are values: pushing onto l1 left it with one element.
    assert_eq!(run("TensorListLength", &[], vec![l1], 1).unwrap()[0].scalar_value::<i32>().unwrap(), 1);
    let stacked = run("TensorListStack", &[], vec![l2.clone(), Tensor::vec(vec![2i32])], 1).unwrap().remove(0);
    assert_eq!(stacked.shape().dims(), &[2, 2]);
    assert_eq!(stacked.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    let out = run("TensorListPopBack", &[], vec![l2, Tensor::vec(vec![2i32])], 2).unwrap();
    assert_eq!(out[1].as_slice::<f32>().unwrap(), &[3.0, 4.0]);
    let out = run("TensorListPopBack", &[], vec![out[0].clone(), Tensor::scalar(-1i32)], 2).unwrap();
    assert_eq!(out[1].as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    let e = run("TensorListPopBack", &[], vec![out[0].clone(), Tensor::scalar(-1i32)], 2).unwrap_err();
    assert!(e.message.contains("Trying to pop from an empty list"), "{e}");
    // Elements must fit the list's element shape and dtype.
    let e = run("TensorListPushBack", &[], vec![empty.clone(), Tensor::vec(vec![1.0f32; 3])], 1).unwrap_err();
    assert!(e.message.contains("element of shape [3] to a list whose elements have shape [2]"), "{e}");
    let e = run(
        "TensorListPushBack",
        &[("element_dtype", attr::ty(DataType::Int32))],
        vec![empty, Tensor::vec(vec![1i32, 2])],
        1,
    )
    .unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("op elements int32 but list elements float"), "{e}");
}

#[test]
fn reserve_set_get_and_from_tensor_as_tensor_arrays_use_them() {
    let l = run("TensorListReserve", &[], vec![Tensor::vec(vec![2i32]), Tensor::scalar(3i32)], 1).unwrap().remove(0);
    let l = run("TensorListSetItem", &[], vec![l, Tensor::scalar(1i32), row([5.0, 6.0])], 1).unwrap().remove(0);
    let got = run("TensorListGetItem", &[], vec![l.clone(), Tensor::scalar(1i32), Tensor::vec(vec![2i32])], 1).unwrap();
    assert_eq!(got[0].as_slice::<f32>().unwrap(), &[5.0, 6.0]);
    // Unset elements read as zeros of the known element shape.
    let stacked = run("TensorListStack", &[("num_elements", attr::int(3))], vec![l.clone(), Tensor::scalar(-1i32)], 1)
        .unwrap()
        .remove(0);
    assert_eq!(stacked.as_slice::<f32>().unwrap(), &[0.0, 0.0, 5.0, 6.0, 0.0, 0.0]);
    let e = run("TensorListGetItem", &[], vec![l, Tensor::scalar(3i32), Tensor::scalar(-1i32)], 1).unwrap_err();
    assert!(e.message.contains("Trying to access element 3 in a list with 3 elements"), "{e}");
    let huge = vec![Tensor::vec(vec![2i32]), Tensor::scalar(i32::MAX)];
    assert_eq!(run("TensorListReserve", &[], huge, 1).unwrap_err().code, Code::ResourceExhausted);
    let e = run(
        "TensorListGetItem",
        &[],
        vec![Tensor::scalar(Variant::Empty), Tensor::scalar(0i32), Tensor::scalar(-1i32)],
        1,
    )
    .unwrap_err();
    assert!(e.message.contains("expected a TensorList variant"), "{e}");
    let t = Tensor::new(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let l = run("TensorListFromTensor", &[], vec![t.clone(), Tensor::vec(vec![-1i32])], 1).unwrap().remove(0);
    let back = run("TensorListStack", &[], vec![l.clone(), Tensor::scalar(-1i32)], 1).unwrap().remove(0);
    assert_eq!(back, t);
    let shape = run("TensorListElementShape", &[], vec![l.clone()], 1).unwrap().remove(0);
    assert_eq!(shape.as_slice::<i32>().unwrap(), &[-1]);
    // A list travels in TensorFlow's encodings (tensor_content as RecvTensor sends it,
    // and variant_val) and comes back equal.
    assert_eq!(Tensor::from_proto(&l.to_proto()).unwrap(), l);
    assert_eq!(Tensor::from_proto(&l.to_proto_field()).unwrap(), l);
}

/// TensorListStack and TensorListGather take the element shape from the elements, or for
/// none from the list or the op's element_shape input; undefined or unequal shapes are
/// TensorFlow's errors.
#[test]
fn stack_and_gather_need_a_known_element_shape_and_equal_elements() {
    let unknown = run("EmptyTensorList", &[], vec![Tensor::scalar(-1i32), Tensor::scalar(-1i32)], 1).unwrap().remove(0);
    let e = run("TensorListStack", &[], vec![unknown.clone(), Tensor::scalar(-1i32)], 1).unwrap_err();
    assert!(e.message.contains("Tried to stack elements of an empty list with non-fully-defined element_shape"), "{e}");
    let none = Tensor::vec(Vec::<i32>::new());
    let e = run("TensorListGather", &[], vec![unknown.clone(), none.clone(), Tensor::scalar(-1i32)], 1).unwrap_err();
    assert!(e.message.contains("Tried to gather 0 elements from a list with non-fully-defined shape"), "{e}");
    // The op's element_shape defines it: [0, 2].
    let empty = run("TensorListStack", &[], vec![unknown.clone(), Tensor::vec(vec![2i32])], 1).unwrap().remove(0);
    assert_eq!(empty.shape().dims(), &[0, 2]);
    let g = run("TensorListGather", &[], vec![unknown.clone(), none, Tensor::vec(vec![2i32])], 1).unwrap().remove(0);
    assert_eq!(g.shape().dims(), &[0, 2]);
    let l = run("TensorListPushBack", &[], vec![unknown, row([1.0, 2.0])], 1).unwrap().remove(0);
    let l = run("TensorListPushBack", &[], vec![l, Tensor::vec(vec![3.0f32; 3])], 1).unwrap().remove(0);
    let e = run("TensorListStack", &[], vec![l.clone(), Tensor::scalar(-1i32)], 1).unwrap_err();
    assert!(e.message.contains("Tried to stack elements of different shapes: [2] and [3]"), "{e}");
    let e = run("TensorListGather", &[], vec![l, Tensor::vec(vec![0i32, 1]), Tensor::scalar(-1i32)], 1).unwrap_err();
    assert!(e.message.contains("Tried to gather elements of different shapes: [2] and [3]"), "{e}");
}
