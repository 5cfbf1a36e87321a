//! Shape and type inference of the math ops.

use ferroflow_core::{attr, DataType};

use crate::ops::test_util::ph;
use crate::ops::*;
use crate::Scope;

#[test]
fn broadcast_shapes() {
    let s = Scope::new_root();
    let a = ph(&s, &[-1, 1, 3]);
    let b = ph(&s, &[4, 1]);
    let c = add(&s, a.clone(), b);
    assert_eq!(s.graph().shape_of(&c), Some(vec![-1, 4, 3]));
    let g = greater(&s, c.clone(), constant(&s, 0.0f32));
    assert_eq!((g.dtype, s.graph().shape_of(&g)), (DataType::Bool, Some(vec![-1, 4, 3])));
    let u = placeholder(&s, DataType::Float, None);
    assert_eq!(s.graph().shape_of(&mul(&s, u, a)), None);
    assert!(s.status().is_ok());
}

#[test]
fn incompatible_shapes_fail_at_build() {
    let s = Scope::new_root();
    let a = ph(&s, &[2, 3]);
    let b = ph(&s, &[4]);
    let _ = sub(&s, a.clone(), b.clone());
    let e = s.status().unwrap_err();
    assert!(e.message.contains("Sub"), "{e}");
    // Equal without the shape error: unknown static shape.
    let s = Scope::new_root();
    let a = placeholder(&s, DataType::Int32, Some(&[2]));
    let b = placeholder(&s, DataType::Int32, Some(&[3]));
    let e = s.op("Equal").input(a).input(b).attr("incompatible_shape_error", attr::bool(false)).build();
    assert!(s.status().is_ok());
    assert_eq!(s.graph().shape_of(&e.output(0)), None);
}

#[test]
fn type_restrictions() {
    let s = Scope::new_root();
    let a = placeholder(&s, DataType::Bool, Some(&[2]));
    let _ = add(&s, a.clone(), a);
    assert!(s.status().unwrap_err().message.contains("not an allowed type"));
}

#[test]
fn binary_ext_shapes() {
    let s = Scope::new_root();
    let a = placeholder(&s, DataType::Double, Some(&[-1, 3]));
    let b = placeholder(&s, DataType::Double, Some(&[2, 1]));
    // The shared broadcast rule leaves a dim unknown against a known one (TensorFlow's shape
    // function would infer 2 here); the kernel checks the real shapes.
    assert_eq!(s.graph().shape_of(&xlogy(&s, a.clone(), b.clone())), Some(vec![-1, 3]));
    let sc = placeholder(&s, DataType::Double, Some(&[]));
    assert_eq!(s.graph().shape_of(&betainc(&s, sc.clone(), a.clone(), sc)), Some(vec![-1, 3]));
    assert_eq!(s.graph().shape_of(&approximate_equal(&s, a.clone(), a, 0.1)), Some(vec![-1, 3]));
    assert!(s.status().is_ok());
    let c = placeholder(&s, DataType::Double, Some(&[4]));
    let _ = betainc(&s, c.clone(), b, c);
    assert!(s.status().is_err());
}

#[test]
fn misc_shapes() {
    let s = Scope::new_root();
    let a = ph(&s, &[-1, 3]);
    let b = ph(&s, &[2, -1]);
    let n = add_n(&s, vec![a.clone(), b.clone(), a.clone()]);
    assert_eq!(s.graph().shape_of(&n), Some(vec![2, 3]));
    let c = placeholder(&s, DataType::Bool, Some(&[-1]));
    let sel = select(&s, c, a.clone(), b.clone());
    assert_eq!(s.graph().shape_of(&sel), Some(vec![2, 3]));
    let c2 = placeholder(&s, DataType::Bool, Some(&[4, 1, 1]));
    let v2 = select_v2(&s, c2, a.clone(), constant(&s, 0.0f32));
    assert_eq!(s.graph().shape_of(&v2), Some(vec![4, -1, 3]));
    let i = cast(&s, a, DataType::Int64);
    assert_eq!((i.dtype, s.graph().shape_of(&i)), (DataType::Int64, Some(vec![-1, 3])));
    let (r0, r1) = broadcast_gradient_args(&s, constant(&s, vec![2i32, 1, 3]), constant(&s, vec![3i32]));
    assert_eq!((s.graph().shape_of(&r0), s.graph().shape_of(&r1)), (Some(vec![1]), Some(vec![2])));
    let (r0, _) = broadcast_gradient_args(&s, placeholder(&s, DataType::Int64, Some(&[-1])), constant(&s, vec![3i64]));
    assert_eq!((r0.dtype, s.graph().shape_of(&r0)), (DataType::Int64, Some(vec![-1])));
    assert!(s.status().is_ok());
}

#[test]
fn add_n_shape_mismatch() {
    let s = Scope::new_root();
    let a = ph(&s, &[2, 3]);
    let b = ph(&s, &[3, 3]);
    let _ = add_n(&s, vec![a, b]);
    assert!(s.status().unwrap_err().message.contains("AddN"));
}

#[test]
fn reduction_shapes() {
    let s = Scope::new_root();
    let x = ph(&s, &[2, -1, 4]);
    let g = s.graph();
    assert_eq!(g.shape_of(&sum(&s, x.clone(), constant(&s, vec![0i32, -1]), false)), Some(vec![-1]));
    assert_eq!(g.shape_of(&mean(&s, x.clone(), constant(&s, 1i64), true)), Some(vec![2, 1, 4]));
    assert_eq!(g.shape_of(&max(&s, x.clone(), constant(&s, Vec::<i32>::new()), false)), Some(vec![2, -1, 4]));
    let axes = placeholder(&s, DataType::Int32, Some(&[-1]));
    assert_eq!(g.shape_of(&min(&s, x.clone(), axes.clone(), true)), Some(vec![-1, -1, -1]));
    assert_eq!(g.shape_of(&prod(&s, x.clone(), axes, false)), None);
    let a = arg_max(&s, x.clone(), constant(&s, -2i32), DataType::Int32);
    assert_eq!((a.dtype, g.shape_of(&a)), (DataType::Int32, Some(vec![2, 4])));
    let a = arg_min(&s, x.clone(), placeholder(&s, DataType::Int64, Some(&[])), DataType::Int64);
    assert_eq!(g.shape_of(&a), Some(vec![-1, -1]));
    assert!(s.status().is_ok());
    let _ = sum(&s, x, constant(&s, 3i32), false);
    assert!(s.status().unwrap_err().message.contains("Invalid reduction dimension"));
}

#[test]
fn unary_shapes_and_types() {
    let s = Scope::new_root();
    let x = ph(&s, &[2, -1]);
    let y = tanh(&s, x.clone());
    assert_eq!(s.graph().shape_of(&y), Some(vec![2, -1]));
    let dy = ph(&s, &[-1, 5]);
    let g = tanh_grad(&s, y, dy);
    assert_eq!(s.graph().shape_of(&g), Some(vec![2, 5]));
    assert!(s.status().is_ok());
    let i = placeholder(&s, DataType::Int32, Some(&[3]));
    let _ = sqrt(&s, i);
    assert!(s.status().is_err());
}

#[test]
fn unary_ext_shapes_and_types() {
    let s = Scope::new_root();
    let x = ph(&s, &[2, -1]);
    assert_eq!(s.graph().shape_of(&erf(&s, x.clone())), Some(vec![2, -1]));
    let b = is_nan(&s, x.clone());
    assert_eq!((b.dtype, s.graph().shape_of(&b)), (DataType::Bool, Some(vec![2, -1])));
    assert_eq!(s.graph().shape_of(&l2_loss(&s, x)), Some(vec![]));
    let i = placeholder(&s, DataType::Int32, Some(&[3]));
    assert_eq!(invert(&s, i.clone()).dtype, DataType::Int32);
    assert!(s.status().is_ok());
    let _ = sin(&s, i);
    assert!(s.status().is_err());
}
