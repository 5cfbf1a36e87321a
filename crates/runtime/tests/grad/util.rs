//! The numeric gradient checker of the gradient tests (the other modules of `tests/grad/`).
//!
//! Each check compares the symbolic gradient of `sum_i sum(w_i * y_i)` (fixed pseudo-random
//! `w_i`, fed as `grad_ys`, so only the gradients under test are involved — not those of Mul
//! and Sum) with central differences, like `ferroflow_runtime::grad_check::check_gradient`;
//! the error is `|symbolic - numeric| / max(1, |numeric|)`.
//!
//! Precision: every nn kernel supports float64, so the checks run in float64 with
//! `eps = 1e-6` (truncation error ~eps² ≈ 1e-12, rounding ~1e-16 / eps ≈ 1e-10; observed
//! errors are ~1e-9) and a tolerance of 1e-6. The float32 checks use `eps = 1e-3`
//! (rounding ~6e-8 · |loss| / eps ≈ 1e-4 for these sizes, as observed) and a tolerance of
//! 1e-2.
#![allow(dead_code)]

use ferroflow_core::{DataType, Tensor};
use ferroflow_graph::gradients::grad_registry;
use ferroflow_graph::{gradients, ops, Output, Scope};
use ferroflow_runtime::grad_check::check_gradient;
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;

pub const EPS: f64 = 1e-6;
pub const TOL: f64 = 1e-6;
pub const EPS32: f64 = 1e-3;
pub const TOL32: f64 = 1e-2;

/// Placeholder shapes: as the values, all dims unknown, or unknown rank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Static,
    Dims,
    Rank,
}

pub use ferroflow_runtime::grad_check::Lcg;

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Uniform values in [lo, hi), at least `margin` from every kink.
pub fn values(shape: &[usize], seed: u64, lo: f64, hi: f64, kinks: &[f64], margin: f64) -> Tensor {
    let mut r = Lcg(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xabcd);
    let v: Vec<f64> = (0..numel(shape))
        .map(|_| loop {
            let x = lo + (r.signed() + 1.0) / 2.0 * (hi - lo);
            if kinks.iter().all(|k| (x - k).abs() >= margin) {
                break x;
            }
        })
        .collect();
    Tensor::new(shape.to_vec(), v).unwrap()
}

pub fn uniform(shape: &[usize], seed: u64) -> Tensor {
    values(shape, seed, -1.0, 1.0, &[], 0.0)
}

/// A shuffled ramp: distinct values 0.01 apart (no max-pool ties).
pub fn distinct(shape: &[usize], seed: u64) -> Tensor {
    let n = numel(shape);
    let mut v: Vec<f64> = (0..n).map(|i| (i as f64 - n as f64 / 2.0) * 0.01).collect();
    let mut r = Lcg(seed);
    for i in (1..n).rev() {
        let j = (((r.signed() + 1.0) / 2.0) * (i + 1) as f64) as usize;
        v.swap(i, j.min(i));
    }
    Tensor::new(shape.to_vec(), v).unwrap()
}

pub fn to_f32(t: &Tensor) -> Tensor {
    let v: Vec<f32> = t.to_f64_vec().unwrap().into_iter().map(|x| x as f32).collect();
    Tensor::new(t.dims().to_vec(), v).unwrap()
}

pub fn perturb(t: &Tensor, k: usize, d: f64) -> Tensor {
    let mut t = t.clone();
    match t.dtype() {
        DataType::Double => t.data_mut::<f64>().unwrap()[k] += d,
        DataType::Float => t.data_mut::<f32>().unwrap()[k] += d as f32,
        other => panic!("cannot perturb {other}"),
    }
    t
}

/// The worst relative error of the gradients of `sum_i sum(w_i * ys_i)` with respect to the
/// inputs `diff` (indices into `vals`).
pub fn check_multi(
    build: impl Fn(&Scope, &[Output]) -> Vec<Output>,
    vals: &[Tensor],
    diff: &[usize],
    eps: f64,
    mode: Mode,
) -> f64 {
    let s = Scope::new_root();
    let xs: Vec<Output> = vals
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let dims: Vec<i64> = match mode {
                Mode::Static => v.dims().iter().map(|&d| d as i64).collect(),
                _ => vec![-1; v.rank()],
            };
            let shape = if mode == Mode::Rank { None } else { Some(&dims[..]) };
            ops::placeholder_named(&s, &format!("x{i}"), v.dtype(), shape)
        })
        .collect();
    let ys = build(&s, &xs);
    let ws: Vec<Output> =
        ys.iter().enumerate().map(|(i, y)| ops::placeholder_named(&s, &format!("w{i}"), y.dtype, None)).collect();
    let dx: Vec<Output> = diff.iter().map(|&i| xs[i].clone()).collect();
    let grads = gradients(&s, &ys, &dx, Some(&ws)).unwrap();
    s.status().unwrap();
    let grads: Vec<Output> = grads
        .into_iter()
        .enumerate()
        .map(|(i, g)| g.unwrap_or_else(|| panic!("input {} has no gradient", diff[i])))
        .collect();
    let sess = DirectSession::new(s.graph());
    let feeds = |v: &[Tensor]| -> Vec<(&Output, Tensor)> { xs.iter().zip(v).map(|(x, t)| (x, t.clone())).collect() };
    let y_refs: Vec<&Output> = ys.iter().collect();
    let y0 = sess.run(&feeds(vals), &y_refs, &[]).unwrap();
    let mut r = Lcg(0x5eed);
    let w: Vec<Vec<f64>> = y0.iter().map(|y| (0..y.num_elements()).map(|_| r.signed()).collect()).collect();
    let loss = |v: &[Tensor]| -> f64 {
        let ys = sess.run(&feeds(v), &y_refs, &[]).unwrap();
        ys.iter().zip(&w).map(|(y, w)| y.to_f64_vec().unwrap().iter().zip(w).map(|(a, b)| a * b).sum::<f64>()).sum()
    };
    let mut all = feeds(vals);
    for ((wo, wv), y) in ws.iter().zip(&w).zip(&y0) {
        let t = Tensor::new(y.dims().to_vec(), wv.clone()).unwrap();
        all.push((wo, if y.dtype() == DataType::Float { to_f32(&t) } else { t }));
    }
    let g_refs: Vec<&Output> = grads.iter().collect();
    let sym = sess.run(&all, &g_refs, &[]).unwrap();
    let mut worst = 0.0f64;
    for (g, &i) in sym.iter().zip(diff) {
        assert_eq!(g.dims(), vals[i].dims(), "gradient of input {i} has the wrong shape");
        let g = g.to_f64_vec().unwrap();
        for (k, gk) in g.iter().enumerate() {
            let num = (loss(&replace(vals, i, perturb(&vals[i], k, eps)))
                - loss(&replace(vals, i, perturb(&vals[i], k, -eps))))
                / (2.0 * eps);
            worst = worst.max((gk - num).abs() / num.abs().max(1.0));
        }
    }
    worst
}

pub fn replace(vals: &[Tensor], i: usize, t: Tensor) -> Vec<Tensor> {
    let mut v = vals.to_vec();
    v[i] = t;
    v
}

pub fn check(build: impl Fn(&Scope, &[Output]) -> Output, vals: &[Tensor], diff: &[usize], mode: Mode) -> f64 {
    check_multi(|s, x| vec![build(s, x)], vals, diff, EPS, mode)
}

#[track_caller]
pub fn ok(what: &str, err: f64, tol: f64) {
    eprintln!("{what}: {err:e}");
    assert!(err < tol, "{what}: max relative error {err:e} >= {tol:e}");
}

pub fn x(v: &[Output], i: usize) -> Output {
    v[i].clone()
}
/// Output size of one windowed dim (TensorFlow's arithmetic).
pub fn out_size(input: usize, k: usize, stride: usize, same: bool) -> usize {
    if same {
        input.div_ceil(stride)
    } else {
        (input - k + stride) / stride
    }
}

/// An int32 constant vector.
pub fn i32_const(s: &Scope, v: &[usize]) -> Output {
    ops::constant(s, Tensor::vec(v.iter().map(|&d| d as i32).collect::<Vec<_>>()))
}

/// A float64 tensor of the given shape with deterministic values in [-1, 1).
pub fn rand(dims: &[usize], seed: u64) -> Tensor {
    let mut r = Lcg(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let n = dims.iter().product();
    Tensor::new(dims.to_vec(), (0..n).map(|_| r.signed()).collect::<Vec<f64>>()).unwrap()
}

/// Whether the math family's `Mul` and `Sum` gradients are registered.
pub fn math_grads_ready() -> bool {
    let r = grad_registry();
    ["Mul", "Sum"].iter().all(|op| matches!(r.get(op), Some(Some(_))))
}

/// Asserts that the gradient of `build` at `values` w.r.t. the inputs `diff` passes the
/// check with static shapes and with unknown ranks (where the gradients use `Shape`/`Rank`
/// ops), and the shared `check_gradient` when the `Mul` and `Sum` gradients it needs exist.
pub fn assert_grad(what: &str, build: impl Fn(&Scope, &[Output]) -> Output, values: &[Tensor], diff: &[usize]) {
    let mut e = check(&build, values, diff, Mode::Static).max(check(&build, values, diff, Mode::Rank));
    if math_grads_ready() {
        e = e.max(check_gradient(&build, values, diff, EPS).expect("check_gradient").max_rel_error);
    }
    assert!(e < TOL, "{what}: max relative error {e}");
}

/// A unary op builder.
pub type Unary = fn(&Scope, Output) -> Output;
/// A binary op builder.
pub type Binary = fn(&Scope, Output, Output) -> Output;

/// Checks the gradient of each (name, op, lo, hi) case with [`assert_grad`] at a [2, 3]
/// float64 input drawn from [lo, hi] with `seed`, keeping away from `kinks`.
pub fn unary_cases(cases: &[(&str, Unary, f64, f64)], seed: u64, kinks: &[f64]) {
    for &(name, f, lo, hi) in cases {
        let v = values(&[2, 3], seed, lo, hi, kinks, 0.05);
        assert_grad(name, |s, xs| f(s, x(xs, 0)), &[v], &[0]);
    }
}

/// An int32 vector constant.
pub fn i32s(s: &Scope, v: &[i32]) -> Output {
    ops::constant(s, v.to_vec())
}

/// An int64 vector constant.
pub fn i64s(s: &Scope, v: &[i64]) -> Output {
    ops::constant(s, v.to_vec())
}
