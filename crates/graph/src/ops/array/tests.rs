//! Shape inference and construction errors of the array ops.

use ferroflow_core::{Code, DataType};

use crate::ops::test_util::ph;
use crate::ops::*;
use crate::Scope;

#[test]
fn reshape_and_shape_ops() {
    let s = Scope::new_root();
    let x = ph(&s, &[2, 3, 4]);
    let sh = constant(&s, vec![-1i32, 4]);
    let r = reshape(&s, x.clone(), sh);
    assert_eq!(s.graph().shape_of(&r), Some(vec![6, 4]));
    assert_eq!(s.graph().shape_of(&shape(&s, x.clone(), DataType::Int64)), Some(vec![3]));
    assert_eq!(shape(&s, x.clone(), DataType::Int64).dtype, DataType::Int64);
    assert_eq!(s.graph().shape_of(&size(&s, x.clone(), DataType::Int32)), Some(vec![]));
    assert_eq!(rank(&s, x.clone()).dtype, DataType::Int32);
    let ns = shape_n(&s, vec![x.clone(), r.clone()], DataType::Int32);
    assert_eq!(ns.len(), 2);
    assert_eq!(s.graph().shape_of(&ns[1]), Some(vec![2]));
    let e = expand_dims(&s, x.clone(), constant(&s, -1i32));
    assert_eq!(s.graph().shape_of(&e), Some(vec![2, 3, 4, 1]));
    assert_eq!(s.graph().shape_of(&squeeze(&s, e, &[])), Some(vec![2, 3, 4]));
    let t = transpose(&s, x.clone(), constant(&s, vec![2i32, 0, 1]));
    assert_eq!(s.graph().shape_of(&t), Some(vec![4, 2, 3]));
    assert!(s.status().is_ok(), "{:?}", s.status());
    let bad = reshape(&s, x, constant(&s, vec![5i32, 5]));
    let _ = bad;
    assert_eq!(s.status().unwrap_err().code, Code::InvalidArgument);
}

#[test]
fn concat_stack_slice() {
    let s = Scope::new_root();
    let a = ph(&s, &[2, 3]);
    let b = ph(&s, &[2, -1]);
    let c = concat(&s, vec![a.clone(), b.clone()], constant(&s, 1i32));
    assert_eq!(s.graph().shape_of(&c), Some(vec![2, -1]));
    let d = concat(&s, vec![a.clone(), a.clone()], constant(&s, 0i32));
    assert_eq!(s.graph().shape_of(&d), Some(vec![4, 3]));
    let st = stack(&s, vec![a.clone(), a.clone(), a.clone()], 1);
    assert_eq!(s.graph().shape_of(&st), Some(vec![2, 3, 3]));
    let us = unstack(&s, st, 3, 1);
    assert_eq!(us.len(), 3);
    assert_eq!(s.graph().shape_of(&us[0]), Some(vec![2, 3]));
    let sl = slice(&s, a.clone(), constant(&s, vec![1i32, 1]), constant(&s, vec![-1i32, 2]));
    assert_eq!(s.graph().shape_of(&sl), Some(vec![1, 2]));
    let m = SliceMasks { begin: 1, end: 1, shrink_axis: 2, ..Default::default() };
    let col = strided_slice(
        &s,
        a.clone(),
        constant(&s, vec![0i32, 0]),
        constant(&s, vec![0i32, 1]),
        constant(&s, vec![1i32, 1]),
        m,
    );
    assert_eq!(s.graph().shape_of(&col), Some(vec![2]));
    let m = SliceMasks { new_axis: 1, ..Default::default() };
    let na =
        strided_slice(&s, a.clone(), constant(&s, vec![0i32]), constant(&s, vec![0i32]), constant(&s, vec![1i32]), m);
    assert_eq!(s.graph().shape_of(&na), Some(vec![1, 2, 3]));
    let g = gather_v2(&s, a.clone(), constant(&s, vec![0i32, 1, 1, 0]), constant(&s, 1i32));
    assert_eq!(s.graph().shape_of(&g), Some(vec![2, 4]));
    let tl = tile(&s, a.clone(), constant(&s, vec![2i32, 2]));
    assert_eq!(s.graph().shape_of(&tl), Some(vec![4, 6]));
    let p = pad(&s, a.clone(), constant(&s, ferroflow_core::Tensor::new(vec![2, 2], vec![1i32, 1, 0, 2]).unwrap()));
    assert_eq!(s.graph().shape_of(&p), Some(vec![4, 5]));
    let oh =
        one_hot(&s, constant(&s, vec![1i64, 2]), constant(&s, 5i32), constant(&s, 1.0f32), constant(&s, 0.0f32), -1);
    assert_eq!(s.graph().shape_of(&oh), Some(vec![2, 5]));
    let rg = range(&s, constant(&s, 0i32), constant(&s, 10i32), constant(&s, 3i32));
    assert_eq!(s.graph().shape_of(&rg), Some(vec![4]));
    let z = zeros(&s, &[3, 2], DataType::Double);
    assert_eq!((s.graph().shape_of(&z), z.dtype), (Some(vec![3, 2]), DataType::Double));
    let o = ones(&s, &[4], DataType::Int64);
    assert_eq!(s.graph().shape_of(&o), Some(vec![4]));
    let bt = broadcast_to(&s, ph(&s, &[3, 1]), constant(&s, vec![2i32, 3, 4]));
    assert_eq!(s.graph().shape_of(&bt), Some(vec![2, 3, 4]));
    let pg = prevent_gradient(&s, a.clone(), "no");
    assert_eq!(s.graph().node(&pg.node).unwrap().def.attr["message"], ferroflow_core::attr::string("no"));
    let ids = identity_n(&s, vec![a.clone(), constant(&s, 1i32)]);
    assert_eq!(ids[1].dtype, DataType::Int32);
    assert!(s.status().is_ok(), "{:?}", s.status());
    let _ = concat(&s, vec![a.clone(), ph(&s, &[3, 3])], constant(&s, 1i32));
    assert!(s.status().is_err());
}

#[test]
fn shape_errors_are_recorded() {
    for f in [
        |s: &Scope| drop(squeeze(s, ph(s, &[1, 2]), &[1])),
        |s: &Scope| drop(squeeze(s, ph(s, &[1, 2]), &[2])),
        |s: &Scope| drop(stack(s, vec![ph(s, &[2])], 3)),
        |s: &Scope| drop(transpose(s, ph(s, &[2, 2]), constant(s, vec![0i32, 0]))),
        |s: &Scope| drop(gather_v2(s, ph(s, &[2, 2]), constant(s, vec![0i32]), constant(s, 2i32))),
        |s: &Scope| drop(range(s, constant(s, vec![0i32]), constant(s, 1i32), constant(s, 1i32))),
        |s: &Scope| drop(concat(s, vec![constant(s, 1.0f32), constant(s, 2.0f32)], constant(s, 0i32))),
    ] {
        let s = Scope::new_root();
        f(&s);
        assert_eq!(s.status().unwrap_err().code, Code::InvalidArgument);
    }
}
