//! Numeric checks of the Gather / GatherV2 gradients (dense, via UnsortedSegmentSum) and
//! of gradients flowing through a Variable's read.

use crate::util::{assert_grad, i32s, i64s, math_grads_ready, rand};
use ferroflow_core::Tensor;
use ferroflow_graph::{global_variables_initializer, gradients, ops, Output, Scope, Variable};
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;

#[test]
fn gather_v1() {
    assert_grad(
        "[5,3] rows [2,0,2,4] (repeated)",
        |s, x| ops::gather(s, x[0].clone(), i32s(s, &[2, 0, 2, 4])),
        &[rand(&[5, 3], 1)],
        &[0],
    );
    assert_grad(
        "[4,2] int64 indices [[1,1],[0,3]]",
        |s, x| ops::gather(s, x[0].clone(), ops::constant(s, Tensor::new(vec![2, 2], vec![1i64, 1, 0, 3]).unwrap())),
        &[rand(&[4, 2], 2)],
        &[0],
    );
    assert_grad(
        "[4] scalar index",
        |s, x| ops::gather(s, x[0].clone(), ops::constant(s, 3i32)),
        &[rand(&[4], 3)],
        &[0],
    );
}

fn idx2(rows: usize, v: &[i32]) -> Tensor {
    Tensor::new(vec![rows, v.len() / rows], v.to_vec()).unwrap()
}

/// The GatherV2 gradient for a `shape` input seeded `seed`, gathered at `idx` along `axis`
/// (both built from the scope; `axis` may also use the input) with `batch_dims`.
fn check_gather_v2(
    what: &str,
    (shape, seed): (&[usize], u64),
    batch_dims: i64,
    idx: impl Fn(&Scope) -> Output,
    axis: impl Fn(&Scope, &Output) -> Output,
) {
    let build = |s: &Scope, x: &[Output]| ops::gather_v2_batch(s, x[0].clone(), idx(s), axis(s, &x[0]), batch_dims);
    assert_grad(what, build, &[rand(shape, seed)], &[0]);
}

fn axis<T: Into<Tensor> + Copy>(a: T) -> impl Fn(&Scope, &Output) -> Output {
    move |s, _| ops::constant(s, a)
}

fn konst(t: Tensor) -> impl Fn(&Scope) -> Output {
    move |s| ops::constant(s, t.clone())
}

#[test]
fn gather_v2_axis_0() {
    check_gather_v2("[5,3] axis 0", (&[5, 3], 4), 0, |s| i32s(s, &[4, 0, 4]), axis(0i32));
    check_gather_v2("[3,2,2] axis 0 int64, 2-D indices", (&[3, 2, 2], 5), 0, konst(idx2(2, &[2, 2, 0, 1])), axis(0i64));
}

#[test]
fn gather_v2_other_axes() {
    check_gather_v2("[3,4] axis 1", (&[3, 4], 6), 0, |s| i32s(s, &[3, 0, 3]), axis(1i32));
    check_gather_v2("[2,3,4] axis -1, 2-D indices", (&[2, 3, 4], 7), 0, konst(idx2(2, &[1, 0, 3, 3])), axis(-1i32));
    check_gather_v2("[2,3,2] axis 1 int64 axis and indices", (&[2, 3, 2], 8), 0, |s| i64s(s, &[2, 2, 0]), axis(1i64));
    check_gather_v2("[4,3] axis -2 (== 0, not constant-folded)", (&[4, 3], 9), 0, |s| i32s(s, &[1, 3]), axis(-2i32));
    check_gather_v2(
        "computed axis (rank - 1)",
        (&[2, 3], 10),
        0,
        |s| i32s(s, &[0, 2, 2]),
        |s, x| ops::sub(s, ops::rank(s, x.clone()), ops::constant(s, 1i32)),
    );
    check_gather_v2("[3,2] axis 1 scalar index", (&[3, 2], 11), 0, |s| ops::constant(s, 1i32), axis(1i32));
}

#[test]
fn gather_v2_batch_dims() {
    check_gather_v2("[2,4,3] batch_dims 1 axis 1", (&[2, 4, 3], 12), 1, konst(idx2(2, &[0, 3, 2, 2])), axis(1i32));
    let idx = idx2(2, &[1, 0, 1, 3, 3, 0]);
    check_gather_v2("[2,3,4] batch_dims -1 (= 1) axis 2", (&[2, 3, 4], 13), -1, konst(idx), axis(2i32));
    let idx = Tensor::new(vec![2, 2, 3], vec![0i64, 3, 3, 1, 1, 2, 0, 0, 0, 3, 2, 1]).unwrap();
    check_gather_v2("[2,2,4] batch_dims 2 axis 2 int64 indices", (&[2, 2, 4], 14), 2, konst(idx), axis(2i32));
}

/// `loss = sum(gather(read(w), idx) * c)`: the gradient w.r.t. the variable's value is
/// dense, with the rows of `c` added at their indices.
#[test]
fn gradient_through_a_variable_read() {
    let s = Scope::new_root();
    let w0 = Tensor::new(vec![4, 3], (0..12).map(|v| v as f64 * 0.5).collect::<Vec<_>>()).unwrap();
    let w = Variable::new(&s, "w", ops::constant(&s, w0));
    let idx = ops::constant(&s, vec![2i32, 0, 2]);
    let cv: Vec<f64> = vec![1.0, 2.0, 3.0, 10.0, 20.0, 30.0, 100.0, 200.0, 300.0];
    let c = ops::constant(&s, Tensor::new(vec![3, 3], cv).unwrap());
    let g = ops::gather(&s, w.read(), idx);
    let grads = if math_grads_ready() {
        let prod = ops::mul(&s, g, c);
        let loss = ops::sum(&s, prod, ops::constant(&s, vec![0i32, 1]), false);
        gradients(&s, &[loss], &[w.value()], None).unwrap()
    } else {
        // Without the math family's Mul/Sum gradients: the same gradient, seeded with c.
        gradients(&s, &[g], &[w.value()], Some(&[c])).unwrap()
    };
    let dw = grads[0].as_ref().expect("w has a gradient");
    let init = global_variables_initializer(&s);
    let sess = DirectSession::new(s.graph());
    sess.run(&[], &[], &[&init]).unwrap();
    let out = sess.run(&[], &[dw], &[]).unwrap().remove(0);
    assert_eq!(out.dims(), &[4, 3]);
    let want = [10.0, 20.0, 30.0, 0.0, 0.0, 0.0, 101.0, 202.0, 303.0, 0.0, 0.0, 0.0];
    assert_eq!(out.as_slice::<f64>().unwrap(), &want);

    // The same through GatherV2 along axis 1 of a reference variable.
    let s = Scope::new_root();
    let w = Variable::new_ref(&s, "v", ops::constant(&s, Tensor::new(vec![2, 3], vec![0.0f64; 6]).unwrap()));
    let g = ops::gather_v2(&s, w.read(), ops::constant(&s, vec![1i32, 1]), ops::constant(&s, 1i32));
    let c = ops::constant(&s, Tensor::new(vec![2, 2], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap());
    let grads = gradients(&s, &[g], &[w.value()], Some(&[c])).unwrap();
    let init = global_variables_initializer(&s);
    let sess = DirectSession::new(s.graph());
    sess.run(&[], &[], &[&init]).unwrap();
    let out = sess.run(&[], &[grads[0].as_ref().unwrap()], &[]).unwrap().remove(0);
    assert_eq!(out.as_slice::<f64>().unwrap(), &[0.0, 3.0, 0.0, 0.0, 7.0, 0.0]);
}

#[test]
fn gradients_reach_a_resource_variable_handle_through_every_read() {
    let s = Scope::new_root();
    let w = Variable::new(&s, "w", ops::constant(&s, vec![1.0f64, 2.0, 3.0]));
    let r2 = w.read_value(&s);
    let first = ops::gather(&s, w.read(), ops::constant(&s, vec![0i32]));
    let y = ops::concat(&s, vec![first, ops::reshape(&s, r2, ops::constant(&s, vec![3i32]))], ops::constant(&s, 0i32));
    let c = ops::constant(&s, vec![5.0f64, 1.0, 2.0, 3.0]);
    let g = gradients(&s, &[y], &[w.read(), w.handle()], Some(&[c])).unwrap();
    let init = global_variables_initializer(&s);
    let sess = DirectSession::new(s.graph());
    sess.run(&[], &[], &[&init]).unwrap();
    let out = sess.run(&[], &[g[0].as_ref().unwrap(), g[1].as_ref().unwrap()], &[]).unwrap();
    // W.r.t. the first read only its path counts; w.r.t. the handle both reads add up.
    assert_eq!(out[0].as_slice::<f64>().unwrap(), &[5.0, 0.0, 0.0]);
    assert_eq!(out[1].as_slice::<f64>().unwrap(), &[6.0, 2.0, 3.0]);
}
