//! Shape inference of the extended array ops.

use ferroflow_core::{Code, DataType};

use crate::ops::test_util::ph;
use crate::ops::*;
use crate::Scope;

#[test]
fn split_shapes() {
    let s = Scope::new_root();
    let x = ph(&s, &[4, 6]);
    let parts = split(&s, constant(&s, -1i32), x.clone(), 3);
    assert_eq!(parts.len(), 3);
    assert_eq!(s.graph().shape_of(&parts[2]), Some(vec![4, 2]));
    let parts = split_v(&s, x.clone(), constant(&s, vec![1i64, -1]), constant(&s, 0i32), 2);
    assert_eq!(s.graph().shape_of(&parts[1]), Some(vec![3, 6]));
    let unknown = split(&s, placeholder(&s, DataType::Int32, Some(&[])), x.clone(), 2);
    assert_eq!(s.graph().shape_of(&unknown[0]), Some(vec![-1, -1]));
    assert!(s.status().is_ok(), "{:?}", s.status());
    let _ = split(&s, constant(&s, 0i32), x, 3);
    assert_eq!(s.status().unwrap_err().code, Code::InvalidArgument);
}

#[test]
fn other_shapes() {
    let s = Scope::new_root();
    let x = ph(&s, &[2, 5]);
    let (v, i) = top_k_v2(&s, x.clone(), constant(&s, 3i32), true);
    assert_eq!((s.graph().shape_of(&v), i.dtype), (Some(vec![2, 3]), DataType::Int32));
    let p = constant(&s, ferroflow_core::Tensor::new(vec![2, 2], vec![1i32, 1, 2, 0]).unwrap());
    assert_eq!(s.graph().shape_of(&mirror_pad(&s, x.clone(), p.clone(), "REFLECT")), Some(vec![4, 7]));
    assert_eq!(s.graph().shape_of(&mirror_pad_grad(&s, ph(&s, &[4, 7]), p, "REFLECT")), Some(vec![2, 5]));
    let idx = constant(&s, ferroflow_core::Tensor::new(vec![3, 1], vec![0i32, 1, 0]).unwrap());
    assert_eq!(s.graph().shape_of(&gather_nd(&s, x.clone(), idx.clone())), Some(vec![3, 5]));
    assert_eq!(
        s.graph().shape_of(&scatter_nd(&s, idx, ph(&s, &[3, 5]), constant(&s, vec![2i32, 5]))),
        Some(vec![2, 5])
    );
    assert_eq!(s.graph().shape_of(&diag(&s, x.clone())), Some(vec![2, 5, 2, 5]));
    assert_eq!(s.graph().shape_of(&diag_part(&s, ph(&s, &[3, 3]))), Some(vec![3]));
    let e = einsum(&s, vec![ph(&s, &[2, 3, 4]), ph(&s, &[4, 7])], "bij,jk->bki");
    assert_eq!(s.graph().shape_of(&e), Some(vec![2, 7, 3]));
    let e = einsum(&s, vec![ph(&s, &[2, 1, 3, 4]), ph(&s, &[5, 4, 2])], "...ij,...jk->...ik");
    assert_eq!(s.graph().shape_of(&e), Some(vec![2, 5, 3, 2]));
    let b = placeholder(&s, DataType::Bool, Some(&[2, 3]));
    assert_eq!(s.graph().shape_of(&reduce_all(&s, b.clone(), constant(&s, 1i32), true)), Some(vec![2, 1]));
    assert_eq!(s.graph().shape_of(&reduce_any(&s, b, constant(&s, 0i32), false)), Some(vec![3]));
    assert_eq!(
        s.graph().shape_of(&lin_space(&s, constant(&s, 0f32), constant(&s, 1f32), constant(&s, 5i32))),
        Some(vec![5])
    );
    assert_eq!(s.graph().shape_of(&ensure_shape(&s, ph(&s, &[-1, 3]), Some(&[2, -1]))), Some(vec![2, 3]));
    assert!(s.status().is_ok(), "{:?}", s.status());
    let _ = einsum(&s, vec![ph(&s, &[2, 3]), ph(&s, &[4, 2])], "ij,jk->ik");
    assert_eq!(s.status().unwrap_err().code, Code::InvalidArgument);
}

#[test]
fn space_shapes_and_overflow() {
    let s = Scope::new_root();
    let x = ph(&s, &[2, 4, 6, 3]);
    let pads = constant(&s, ferroflow_core::Tensor::new(vec![2, 2], vec![0i64, 0, 1, 1]).unwrap());
    let y = space_to_batch_nd(&s, x.clone(), constant(&s, vec![2i64, 4]), pads.clone());
    assert_eq!(s.graph().shape_of(&y), Some(vec![16, 2, 2, 3]));
    let z = batch_to_space_nd(&s, y, constant(&s, vec![2i64, 4]), pads);
    assert_eq!(s.graph().shape_of(&z), Some(vec![2, 4, 6, 3]));
    assert_eq!(s.graph().shape_of(&space_to_depth(&s, x.clone(), 2)), Some(vec![2, 2, 3, 12]));
    assert_eq!(s.graph().shape_of(&depth_to_space(&s, ph(&s, &[1, 2, 3, 8]), 2)), Some(vec![1, 4, 6, 2]));
    assert!(s.status().is_ok(), "{:?}", s.status());
    // A block product that overflows int64 is refused, not wrapped (a wrapped product of 0
    // would divide by zero).
    let s = Scope::new_root();
    let zero = constant(&s, ferroflow_core::Tensor::new(vec![2, 2], vec![0i64; 4]).unwrap());
    let big = constant(&s, vec![1i64 << 32, 1i64 << 32]);
    let _ = batch_to_space_nd(&s, ph(&s, &[8, 2, 2, 1]), big, zero);
    let e = s.status().unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("overflow"), "{e}");
    let s = Scope::new_root();
    let _ = space_to_depth(&s, ph(&s, &[1, 2, 2, 1 << 40]), 1 << 20);
    assert!(s.status().unwrap_err().message.contains("overflow"));
}
