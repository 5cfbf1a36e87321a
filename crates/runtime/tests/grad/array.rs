//! Numeric checks of the array gradients: reshapes, Transpose, ConcatV2, Pack, Unpack,
//! Fill, Snapshot, StopGradient, PreventGradient. (Slicing, padding, tiling and
//! broadcasting: `array_slice.rs`; gathers and variables: `array_gather.rs`.)

use crate::util::{assert_grad, i32s, i64s, rand};
use ferroflow_core::{attr, Code, DataType, Tensor};
use ferroflow_graph::{gradients, ops, Scope};
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;

#[test]
fn reshape() {
    assert_grad(
        "[2,3,4] -> [4,-1]",
        |s, x| ops::reshape(s, x[0].clone(), i32s(s, &[4, -1])),
        &[rand(&[2, 3, 4], 1)],
        &[0],
    );
    assert_grad("[6] -> [2,3] (int64)", |s, x| ops::reshape(s, x[0].clone(), i64s(s, &[2, 3])), &[rand(&[6], 2)], &[0]);
    assert_grad("[1] -> []", |s, x| ops::reshape(s, x[0].clone(), i32s(s, &[])), &[rand(&[1], 3)], &[0]);
    assert_grad("[] -> [1,1]", |s, x| ops::reshape(s, x[0].clone(), i32s(s, &[1, 1])), &[rand(&[], 4)], &[0]);
}

#[test]
fn expand_dims() {
    for (dims, axis) in [(vec![3], 0), (vec![3], -1), (vec![2, 3], 1), (vec![2, 3], -3), (vec![], 0)] {
        assert_grad(
            &format!("{dims:?} axis {axis}"),
            |s, x| ops::expand_dims(s, x[0].clone(), ops::constant(s, axis)),
            &[rand(&dims, 5)],
            &[0],
        );
    }
    assert_grad(
        "int64 dim",
        |s, x| ops::expand_dims(s, x[0].clone(), ops::constant(s, -2i64)),
        &[rand(&[2, 2], 6)],
        &[0],
    );
}

#[test]
fn squeeze() {
    for (dims, sq) in [
        (vec![1, 3, 1, 2], vec![]),
        (vec![1, 3, 1, 2], vec![0]),
        (vec![1, 3, 1, 2], vec![-2]),
        (vec![2, 1], vec![-1]),
        (vec![1], vec![]),
    ] {
        assert_grad(&format!("{dims:?} {sq:?}"), |s, x| ops::squeeze(s, x[0].clone(), &sq), &[rand(&dims, 7)], &[0]);
    }
}

#[test]
fn transpose() {
    assert_grad(
        "[2,3,4] perm [2,0,1]",
        |s, x| ops::transpose(s, x[0].clone(), i32s(s, &[2, 0, 1])),
        &[rand(&[2, 3, 4], 8)],
        &[0],
    );
    assert_grad(
        "[3,2] perm [1,0] int64",
        |s, x| ops::transpose(s, x[0].clone(), i64s(s, &[1, 0])),
        &[rand(&[3, 2], 9)],
        &[0],
    );
    assert_grad(
        "[2,1,3,2] perm [3,1,0,2]",
        |s, x| ops::transpose(s, x[0].clone(), i32s(s, &[3, 1, 0, 2])),
        &[rand(&[2, 1, 3, 2], 10)],
        &[0],
    );
}

#[test]
fn concat() {
    assert_grad(
        "axis 0, two inputs",
        |s, x| ops::concat(s, vec![x[0].clone(), x[1].clone()], ops::constant(s, 0i32)),
        &[rand(&[2, 3], 11), rand(&[1, 3], 12)],
        &[0, 1],
    );
    assert_grad(
        "axis -1, three inputs of different widths",
        |s, x| ops::concat(s, x.to_vec(), ops::constant(s, -1i32)),
        &[rand(&[2, 1, 2], 13), rand(&[2, 1, 3], 14), rand(&[2, 1, 1], 15)],
        &[0, 1, 2],
    );
    assert_grad(
        "axis 1 int64, same input twice",
        |s, x| ops::concat(s, vec![x[0].clone(), x[1].clone(), x[0].clone()], ops::constant(s, 1i64)),
        &[rand(&[3, 2], 16), rand(&[3, 4], 17)],
        &[0, 1],
    );
    assert_grad(
        "axis -2 of rank 2",
        |s, x| ops::concat(s, x.to_vec(), ops::constant(s, -2i32)),
        &[rand(&[1, 2], 18), rand(&[3, 2], 19)],
        &[0, 1],
    );
    // The axis is computed, not a constant.
    assert_grad(
        "computed axis",
        |s, x| {
            let axis = ops::rank(s, x[0].clone());
            let axis = ops::sub(s, axis, ops::constant(s, 1i32));
            ops::concat(s, x.to_vec(), axis)
        },
        &[rand(&[2, 2], 20), rand(&[2, 3], 21)],
        &[0, 1],
    );
}

#[test]
fn pack() {
    for axis in [0, 1, -1, -3] {
        assert_grad(
            &format!("axis {axis}"),
            |s, x| ops::stack(s, x.to_vec(), axis),
            &[rand(&[2, 3], 22), rand(&[2, 3], 23)],
            &[0, 1],
        );
    }
    assert_grad("one input", |s, x| ops::stack(s, x.to_vec(), 0), &[rand(&[4], 24)], &[0]);
    assert_grad(
        "scalars",
        |s, x| ops::stack(s, x.to_vec(), 0),
        &[rand(&[], 25), rand(&[], 26), rand(&[], 27)],
        &[0, 1, 2],
    );
}

#[test]
fn unpack() {
    for axis in [0, 1, -1] {
        let dims = [3usize, 2, 3];
        let n = dims[if axis < 0 { 2 } else { axis as usize }] as i64;
        assert_grad(
            &format!("axis {axis}"),
            |s, x| ops::stack(s, ops::unstack(s, x[0].clone(), n, axis), 0),
            &[rand(&dims, 28)],
            &[0],
        );
    }
    // Some outputs unused (their gradient is zeros), one used twice.
    assert_grad(
        "partial use",
        |s, x| {
            let p = ops::unstack(s, x[0].clone(), 4, 1);
            ops::concat(s, vec![p[2].clone(), p[0].clone(), p[2].clone()], ops::constant(s, 0i32))
        },
        &[rand(&[3, 4], 29)],
        &[0],
    );
}

#[test]
fn fill() {
    assert_grad("Fill [2,3]", |s, x| ops::fill(s, i32s(s, &[2, 3]), x[0].clone()), &[rand(&[], 30)], &[0]);
    assert_grad("Fill [] (int64 dims)", |s, x| ops::fill(s, i64s(s, &[]), x[0].clone()), &[rand(&[], 31)], &[0]);
    assert_grad("Fill [2,0,2]", |s, x| ops::fill(s, i32s(s, &[2, 0, 2]), x[0].clone()), &[rand(&[], 32)], &[0]);
}

#[test]
fn snapshot() {
    assert_grad("Snapshot", |s, x| ops::snapshot(s, x[0].clone()), &[rand(&[2, 2], 33)], &[0]);
}

#[test]
fn stop_gradient_blocks_and_prevent_gradient_errors() {
    let s = Scope::new_root();
    let x = ops::placeholder(&s, DataType::Double, Some(&[3]));
    let y = ops::concat(&s, vec![x.clone(), ops::stop_gradient(&s, x.clone())], ops::constant(&s, 0i32));
    let w = ops::constant(&s, Tensor::vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]));
    let g = gradients(&s, &[y], std::slice::from_ref(&x), Some(&[w])).unwrap();
    let sess = DirectSession::new(s.graph());
    let out = sess.run(&[(&x, Tensor::vec(vec![0.0f64; 3]))], &[g[0].as_ref().unwrap()], &[]).unwrap();
    assert_eq!(out[0].as_slice::<f64>().unwrap(), &[1.0, 2.0, 3.0]);
    let only = gradients(&s, &[ops::stop_gradient(&s, x.clone())], std::slice::from_ref(&x), None).unwrap();
    assert!(only[0].is_none());

    // PreventGradient is an identity forward and an error backward.
    let p = s
        .op("PreventGradient")
        .name("no_hessian")
        .input(x.clone())
        .attr("message", attr::string("second derivative not supported"))
        .build()
        .output(0);
    let out = sess.run(&[(&x, Tensor::vec(vec![1.0f64, 2.0, 3.0]))], &[&p], &[]).unwrap();
    assert_eq!(out[0].as_slice::<f64>().unwrap(), &[1.0, 2.0, 3.0]);
    let e = gradients(&s, &[p], &[x], None).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("no_hessian") && e.message.contains("second derivative not supported"), "{e}");
}

#[test]
fn composed_array_ops() {
    // reshape -> transpose -> concat with itself -> stack -> squeeze: paths add up.
    assert_grad(
        "chain",
        |s, x| {
            let r = ops::reshape(s, x[0].clone(), i32s(s, &[3, 2]));
            let t = ops::transpose(s, r.clone(), i32s(s, &[1, 0]));
            let c = ops::concat(s, vec![t, ops::reshape(s, r, i32s(s, &[2, 3]))], ops::constant(s, 1i32));
            let st = ops::stack(s, vec![c.clone(), c], 0);
            ops::squeeze(s, ops::expand_dims(s, st, ops::constant(s, 1i32)), &[1])
        },
        &[rand(&[6], 34)],
        &[0],
    );
}
