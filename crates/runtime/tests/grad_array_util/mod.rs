//! Numeric gradient checks for the array gradients (shared by the `grad_array*` tests).
//!
//! [`check`] compares the symbolic gradient of `sum(w * f(x))` (fixed pseudo-random `w`)
//! with central differences, like `ferroflow_runtime::grad_check::check_gradient`, but
//! seeds the backward pass with `w` (`grad_ys`) so that it needs no `Mul`/`Sum` gradients,
//! and runs twice: with the inputs' static shapes known (the gradients use constant shapes)
//! and with unknown shapes (they use `Shape`/`Rank` ops). When the math family's `Mul` and
//! `Sum` gradients are registered it also runs the shared `check_gradient`.

#![allow(dead_code)]

use ferroflow_core::Tensor;
use ferroflow_graph::gradients::grad_registry;
use ferroflow_graph::{gradients, ops, Output, Scope};
use ferroflow_runtime::grad_check::check_gradient;
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;

/// Finite-difference step (float64).
pub const EPS: f64 = 1e-6;
/// Largest accepted relative error.
pub const TOL: f64 = 1e-6;

/// A float64 tensor of the given shape with deterministic values in [-1, 1).
pub fn rand(dims: &[usize], seed: u64) -> Tensor {
    let mut r = ferroflow_runtime::grad_check::Lcg(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let n = dims.iter().product();
    Tensor::new(dims.to_vec(), (0..n).map(|_| r.signed()).collect::<Vec<f64>>()).unwrap()
}

/// Whether the math family's `Mul` and `Sum` gradients are registered.
pub fn math_grads_ready() -> bool {
    let r = grad_registry();
    ["Mul", "Sum"].iter().all(|op| matches!(r.get(op), Some(Some(_))))
}

fn perturb(t: &Tensor, k: usize, d: f64) -> Tensor {
    let mut t = t.clone();
    t.data_mut::<f64>().unwrap()[k] += d;
    t
}

/// One check; `hide_shapes` makes the placeholders' shapes unknown (unknown rank).
pub fn check_once(
    build: &dyn Fn(&Scope, &[Output]) -> Output,
    values: &[Tensor],
    diff: &[usize],
    hide_shapes: bool,
) -> f64 {
    let s = Scope::new_root();
    let xs: Vec<Output> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let dims = v.shape().to_i64();
            ops::placeholder_named(&s, &format!("x{i}"), v.dtype(), if hide_shapes { None } else { Some(&dims) })
        })
        .collect();
    let y = build(&s, &xs);
    s.status().expect("forward graph");
    let sess = DirectSession::new(s.graph());
    let feeds =
        |vals: &[Tensor]| -> Vec<(&Output, Tensor)> { xs.iter().zip(vals).map(|(x, v)| (x, v.clone())).collect() };
    let y0 = sess.run(&feeds(values), &[&y], &[]).expect("forward run").remove(0);
    let mut r = ferroflow_runtime::grad_check::Lcg(0x5eed);
    let w: Vec<f64> = (0..y0.num_elements()).map(|_| r.signed()).collect();
    let wt = ops::constant(&s, Tensor::new(y0.shape().clone(), w.clone()).unwrap());
    let dx: Vec<Output> = diff.iter().map(|&i| xs[i].clone()).collect();
    let grads = gradients(&s, std::slice::from_ref(&y), &dx, Some(&[wt])).expect("gradients");
    let fetch: Vec<&Output> = grads.iter().map(|g| g.as_ref().expect("an input has no gradient")).collect();
    let sym = sess.run(&feeds(values), &fetch, &[]).expect("backward run");
    let loss = |vals: &[Tensor]| -> f64 {
        let y = sess.run(&feeds(vals), &[&y], &[]).expect("perturbed run").remove(0);
        y.as_slice::<f64>().unwrap().iter().zip(&w).map(|(a, b)| a * b).sum()
    };
    let mut worst = 0.0f64;
    for (gi, &xi) in diff.iter().enumerate() {
        assert_eq!(sym[gi].dims(), values[xi].dims(), "gradient of input {xi} has the wrong shape");
        let symv = sym[gi].as_slice::<f64>().unwrap();
        for (k, &sv) in symv.iter().enumerate() {
            let mut plus = values.to_vec();
            plus[xi] = perturb(&values[xi], k, EPS);
            let mut minus = values.to_vec();
            minus[xi] = perturb(&values[xi], k, -EPS);
            let num = (loss(&plus) - loss(&minus)) / (2.0 * EPS);
            worst = worst.max((sv - num).abs() / num.abs().max(1.0));
        }
    }
    worst
}

/// Checks the gradient of `build` at `values` w.r.t. the inputs `diff`, with static and
/// with unknown shapes, and returns the worst relative error.
pub fn check(build: impl Fn(&Scope, &[Output]) -> Output, values: &[Tensor], diff: &[usize]) -> f64 {
    let mut worst = check_once(&build, values, diff, false).max(check_once(&build, values, diff, true));
    if math_grads_ready() {
        let r = check_gradient(&build, values, diff, EPS).expect("check_gradient");
        worst = worst.max(r.max_rel_error);
    }
    worst
}

/// Asserts the gradient check of `build` passes.
pub fn assert_grad(what: &str, build: impl Fn(&Scope, &[Output]) -> Output, values: &[Tensor], diff: &[usize]) {
    let e = check(build, values, diff);
    assert!(e < TOL, "{what}: max relative error {e}");
}

/// An int32 vector constant.
pub fn i32s(s: &Scope, v: &[i32]) -> Output {
    ops::constant(s, v.to_vec())
}

/// An int64 vector constant.
pub fn i64s(s: &Scope, v: &[i64]) -> Output {
    ops::constant(s, v.to_vec())
}
