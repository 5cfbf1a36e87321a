//! Graph-level tests of the array gradients (values are checked numerically in
//! `crates/runtime/tests/grad/array.rs`).

use ferroflow_core::{Code, DataType, Tensor};

use crate::gradients::{grad_registry, gradients};
use crate::ops;
use crate::scope::{Output, Scope};

fn ph(s: &Scope, dims: Option<&[i64]>) -> Output {
    ops::placeholder(s, DataType::Double, dims)
}

/// Op types of the nodes under the gradient scope of `node`.
fn grad_ops(s: &Scope, node: &str) -> Vec<String> {
    let prefix = format!("gradients/{node}_grad/");
    s.graph().nodes().into_iter().filter(|n| n.def.name.starts_with(&prefix)).map(|n| n.def.op).collect()
}

#[test]
fn registers_the_array_gradients_and_marks_the_rest() {
    let r = grad_registry();
    let differentiable = "Reshape ExpandDims Squeeze Snapshot PreventGradient Transpose ConcatV2 Pack Unpack Fill \
                          Slice StridedSlice StridedSliceGrad Pad PadV2 Tile BroadcastTo Gather GatherV2";
    for op in differentiable.split_whitespace() {
        assert!(matches!(r.get(op), Some(Some(_))), "{op} has no gradient");
    }
    let not_differentiable = "Shape ShapeN Size Rank ZerosLike OnesLike OneHot Range InvertPermutation ConcatOffset \
                              RandomUniform RandomStandardNormal TruncatedNormal RandomShuffle AssignVariableOp \
                              AssignAdd ApplyAdam ResourceApplyGradientDescent StopGradient";
    for op in not_differentiable.split_whitespace() {
        assert!(matches!(r.get(op), Some(None)), "{op} is not marked not differentiable");
    }
    // Every marked op exists.
    for op in super::APPLY_OPS {
        assert!(crate::op_registry().get(op).is_some(), "{op} is not an op");
    }
}

#[test]
fn prevent_gradient_is_an_error_naming_node_and_message() {
    let s = Scope::new_root();
    let x = ph(&s, Some(&[2]));
    let p = s
        .op("PreventGradient")
        .name("guard")
        .input(x.clone())
        .attr("message", ferroflow_core::attr::string("no second derivative"))
        .build()
        .output(0);
    let y = ops::reshape(&s, p, ops::constant(&s, vec![1i32, 2]));
    let e = gradients(&s, &[y], &[x], None).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("'guard'"), "{e}");
    assert!(e.message.contains("Gradient explicitly disabled. Reason: no second derivative"), "{e}");
}

#[test]
fn non_differentiable_ops_stop_the_gradient() {
    let s = Scope::new_root();
    let x = ph(&s, Some(&[3]));
    let z = ops::zeros_like(&s, x.clone());
    let sh = ops::random_shuffle(&s, x.clone(), 1, 2);
    let g = gradients(&s, &[z, sh], &[x], None).unwrap();
    assert!(g[0].is_none());
}

#[test]
fn static_shapes_become_constants_unknown_ones_shape_ops() {
    let s = Scope::new_root();
    let x = ph(&s, Some(&[2, 3]));
    let y = s.op("Reshape").name("r").input(x.clone()).input(ops::constant(&s, vec![6i32])).build().output(0);
    let g = gradients(&s, &[y], std::slice::from_ref(&x), None).unwrap();
    assert_eq!(s.graph().shape_of(g[0].as_ref().unwrap()), Some(vec![2, 3]));
    let ops_ = grad_ops(&s, "r");
    assert!(ops_.contains(&"Const".to_string()) && !ops_.contains(&"Shape".to_string()), "{ops_:?}");

    let s = Scope::new_root();
    let x = ph(&s, Some(&[-1, 3]));
    let y = s.op("Reshape").name("r").input(x.clone()).input(ops::constant(&s, vec![-1i32])).build().output(0);
    let g = gradients(&s, &[y], &[x], None).unwrap();
    // (Reshape's shape function does not yet read partial shapes from a `Shape` op.)
    assert_eq!(s.graph().shape_of(g[0].as_ref().unwrap()).map(|d| d.len()), Some(2));
    assert!(grad_ops(&s, "r").contains(&"Shape".to_string()));
}

#[test]
fn concat_pack_unpack_fill_gradient_structure() {
    let s = Scope::new_root();
    let a = ph(&s, Some(&[2, 3]));
    let b = ph(&s, Some(&[2, 1]));
    let c = ops::concat(&s, vec![a.clone(), b.clone()], ops::constant(&s, -1i32));
    let g = gradients(&s, &[c], &[a.clone(), b.clone()], None).unwrap();
    // Slices at a computed offset: Slice's shape function leaves the dims unknown.
    assert_eq!(g.iter().map(|g| g.is_some()).collect::<Vec<_>>(), vec![true, true]);
    assert_eq!(s.graph().shape_of(g[1].as_ref().unwrap()).map(|d| d.len()), Some(2));

    let st = ops::stack(&s, vec![a.clone(), a.clone()], -1);
    let g = gradients(&s, &[st], std::slice::from_ref(&a), None).unwrap();
    assert_eq!(s.graph().shape_of(g[0].as_ref().unwrap()), Some(vec![2, 3]));

    // Only one output of Unpack is used: the others get zeros.
    let parts = ops::unstack(&s, a.clone(), 3, 1);
    let g = gradients(&s, &[parts[1].clone()], std::slice::from_ref(&a), None).unwrap();
    assert_eq!(s.graph().shape_of(g[0].as_ref().unwrap()), Some(vec![2, 3]));

    let v = ph(&s, Some(&[]));
    let dims = ops::constant(&s, vec![2i32, 2]);
    let f = ops::fill(&s, dims.clone(), v.clone());
    let g = gradients(&s, &[f], &[v, dims], None).unwrap();
    assert_eq!(s.graph().shape_of(g[0].as_ref().unwrap()), Some(vec![]));
    assert!(g[1].is_none());
}

#[test]
fn gather_v2_negative_batch_dims_needs_the_indices_rank() {
    let s = Scope::new_root();
    let p = ph(&s, Some(&[2, 3]));
    let idx = ops::placeholder(&s, DataType::Int32, None);
    let y = s
        .op("GatherV2")
        .name("gv")
        .input(p.clone())
        .input(idx)
        .input(ops::constant(&s, 1i32))
        .attr("batch_dims", ferroflow_core::attr::int(-1))
        .build()
        .output(0);
    let e = gradients(&s, &[y], &[p], None).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("'gv'") && e.message.contains("batch_dims"), "{e}");
}

#[test]
fn gradient_dtypes_and_int64_index_inputs() {
    let s = Scope::new_root();
    let x = ph(&s, Some(&[4, 3]));
    let idx = ops::constant(&s, Tensor::vec(vec![3i64, 0]));
    let y = ops::gather_v2(&s, x.clone(), idx, ops::constant(&s, 0i64));
    let b = ops::constant(&s, Tensor::vec(vec![1i64, 0]));
    let e = ops::constant(&s, Tensor::vec(vec![3i64, 2]));
    let st = ops::constant(&s, Tensor::vec(vec![1i64, 1]));
    let z = ops::strided_slice(&s, x.clone(), b, e, st, Default::default());
    let g = gradients(&s, &[y, z], &[x], None).unwrap();
    let g = g[0].as_ref().unwrap();
    assert_eq!(g.dtype, DataType::Double);
    assert!(s.status().is_ok(), "{:?}", s.status());
}
