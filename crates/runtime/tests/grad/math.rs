//! Numeric checks of the math gradients (float64, central differences): broadcasting both
//! ways, static and unknown (`[-1, n]`, unknown rank) shapes, reductions with keep_dims,
//! negative, scalar, empty and fed axes, and second derivatives through the `*Grad` ops.

use ferroflow_core::{DataType, Tensor};
use ferroflow_graph::{gradients, ops, Output, Scope};
use ferroflow_runtime::grad_check::check_gradient;
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;

use ferroflow_runtime::grad_check::Lcg;

use crate::util::{Binary, Unary};

fn t(shape: &[usize], v: Vec<f64>) -> Tensor {
    Tensor::new(shape.to_vec(), v).unwrap()
}

/// Values uniform in `[lo, hi)`.
fn uni(shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor {
    let mut r = Lcg(seed);
    t(shape, (0..shape.iter().product::<usize>()).map(|_| r.uniform(lo, hi)).collect())
}

/// Values with magnitude in `[lo, hi)` and a random sign.
fn away(shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor {
    let mut r = Lcg(seed);
    let n = shape.iter().product::<usize>();
    t(shape, (0..n).map(|_| r.uniform(lo, hi) * if r.uniform(0.0, 1.0) < 0.5 { -1.0 } else { 1.0 }).collect())
}

fn check_eps(
    name: &str,
    build: impl Fn(&Scope, &[Output]) -> Output,
    vals: &[Tensor],
    diff: &[usize],
    eps: f64,
    tol: f64,
) {
    let r = check_gradient(build, vals, diff, eps).unwrap_or_else(|e| panic!("{name}: {e}"));
    let n: usize = diff.iter().map(|&i| vals[i].num_elements()).sum();
    assert_eq!(r.checked, n, "{name}");
    assert!(r.max_rel_error < tol, "{name}: max_rel_error {}", r.max_rel_error);
}

fn check(name: &str, build: impl Fn(&Scope, &[Output]) -> Output, vals: &[Tensor], diff: &[usize]) {
    check_eps(name, build, vals, diff, 1e-6, 1e-6)
}

/// `x` seen through a `PlaceholderWithDefault` of static shape `shape` (None = unknown rank),
/// so the gradient graph must compute shapes at run time.
fn dyn_(s: &Scope, x: &Output, shape: Option<&[i64]>) -> Output {
    ops::placeholder_with_default(s, x.clone(), shape)
}

/// Operand shapes: equal, broadcasting either way, both ways, scalars.
const BCAST: &[(&[usize], &[usize])] = &[
    (&[2, 3], &[2, 3]),
    (&[2, 3], &[3]),
    (&[3], &[2, 3]),
    (&[2, 1, 3], &[4, 1]),
    (&[4, 1], &[1, 3]),
    (&[], &[2, 3]),
    (&[2, 3], &[]),
];

/// Checks `f` for every operand-shape pair, statically shaped and through `[-1, n]`
/// (or unknown-rank) placeholders.
fn check_binary(name: &str, f: Binary, gen: impl Fn(&[usize], &[usize], u64) -> (Tensor, Tensor)) {
    for (k, &(xs, ys)) in BCAST.iter().enumerate() {
        let (x, y) = gen(xs, ys, 17 + k as u64);
        let what = format!("{name} {xs:?} {ys:?}");
        check(&what, |s, i| f(s, i[0].clone(), i[1].clone()), &[x.clone(), y.clone()], &[0, 1]);
        let dims = |d: &[usize]| -> Option<Vec<i64>> {
            match d.len() {
                0 => None,
                n => Some((0..n).map(|j| if j == 0 { -1 } else { d[j] as i64 }).collect()),
            }
        };
        let (dx, dy) = (dims(xs), dims(ys));
        check(
            &format!("{what} dynamic"),
            |s, i| f(s, dyn_(s, &i[0], dx.as_deref()), dyn_(s, &i[1], dy.as_deref())),
            &[x, y],
            &[0, 1],
        );
    }
}

#[test]
fn add_sub_mul_squared_difference() {
    let gen = |a: &[usize], b: &[usize], k| (uni(a, -2.0, 2.0, k), uni(b, -2.0, 2.0, k + 100));
    check_binary("Add", ops::add, gen);
    check_binary("AddV2", ops::add_v2, gen);
    check_binary("Sub", ops::sub, gen);
    check_binary("Mul", ops::mul, gen);
    check_binary("SquaredDifference", ops::squared_difference, gen);
}

#[test]
fn divisions() {
    let gen = |a: &[usize], b: &[usize], k| (uni(a, -2.0, 2.0, k), away(b, 0.5, 2.0, k + 100));
    check_binary("RealDiv", ops::real_div, gen);
    check_binary("Div", ops::div, gen);
    check_binary("DivNoNan", ops::div_no_nan, gen);
    // DivNoNan where y = 0: the x gradient is 0 there.
    let x = uni(&[2, 3], -2.0, 2.0, 5);
    let y = t(&[3], vec![0.0, 1.5, -0.75]);
    check("DivNoNan y=0", |s, i| ops::div_no_nan(s, i[0].clone(), i[1].clone()), &[x, y], &[0]);
}

#[test]
fn pow() {
    let gen = |a: &[usize], b: &[usize], k| (uni(a, 0.5, 2.0, k), uni(b, -2.0, 2.0, k + 100));
    check_binary("Pow", ops::pow, gen);
    // Negative bases with integer exponents (only x is differentiable there).
    let x = away(&[2, 3], 0.5, 2.0, 9);
    let y = t(&[3], vec![2.0, 3.0, -1.0]);
    check("Pow x<0", |s, i| ops::pow(s, i[0].clone(), i[1].clone()), &[x, y], &[0]);
}

#[test]
fn maximum_minimum() {
    let gen = |a: &[usize], b: &[usize], k| (uni(a, -2.0, 2.0, k), uni(b, -2.0, 2.0, k + 100));
    check_binary("Maximum", ops::maximum, gen);
    check_binary("Minimum", ops::minimum, gen);
}

#[test]
fn floor_mod() {
    // x = m + 0.5 ± 0.1 and |y| in [1, 1.05]: x / y stays away from integers.
    let gen = |a: &[usize], b: &[usize], k| {
        let mut r = Lcg(k);
        let n = a.iter().product::<usize>();
        let x = (0..n).map(|_| (r.uniform(-3.0, 3.0)).floor() + 0.5 + r.uniform(-0.1, 0.1)).collect();
        (t(a, x), away(b, 1.0, 1.05, k + 100))
    };
    check_binary("FloorMod", ops::floor_mod, gen);
}

#[test]
fn add_n() {
    let v: Vec<Tensor> = (0..3).map(|k| uni(&[2, 3], -1.0, 1.0, k)).collect();
    check("AddN", |s, i| ops::add_n(s, i.to_vec()), &v, &[0, 1, 2]);
    check("AddN dynamic", |s, i| ops::add_n(s, i.iter().map(|x| dyn_(s, x, Some(&[-1, 3]))).collect()), &v, &[0, 1, 2]);
    // The same tensor twice: gradients over both paths are summed.
    check("AddN x+x", |s, i| ops::add_n(s, vec![i[0].clone(), i[0].clone()]), &v[..1], &[0]);
}

fn bools(shape: &[usize], v: &[bool]) -> Tensor {
    Tensor::new(shape.to_vec(), v.to_vec()).unwrap()
}

#[test]
fn select() {
    let (a, b) = (uni(&[2, 3], -1.0, 1.0, 1), uni(&[2, 3], -1.0, 1.0, 2));
    let sel = |s: &Scope, i: &[Output]| ops::select(s, i[0].clone(), i[1].clone(), i[2].clone());
    for c in
        [bools(&[2], &[true, false]), bools(&[], &[false]), bools(&[2, 3], &[true, false, false, true, true, false])]
    {
        check(&format!("Select {:?}", c.shape()), sel, &[c.clone(), a.clone(), b.clone()], &[1, 2]);
    }
    let c = bools(&[2], &[false, true]);
    check(
        "Select dynamic",
        |s, i| ops::select(s, i[0].clone(), dyn_(s, &i[1], Some(&[-1, 3])), dyn_(s, &i[2], Some(&[-1, 3]))),
        &[c, a, b],
        &[1, 2],
    );
}

#[test]
fn select_v2() {
    let sel = |s: &Scope, i: &[Output]| ops::select_v2(s, i[0].clone(), i[1].clone(), i[2].clone());
    let cases: Vec<(Tensor, Vec<usize>, Vec<usize>)> = vec![
        (bools(&[2, 3], &[true, false, false, true, true, false]), vec![2, 3], vec![2, 3]),
        (bools(&[2, 1], &[true, false]), vec![3], vec![2, 3]),
        (bools(&[], &[true]), vec![2, 3], vec![1, 3]),
        (bools(&[2, 3], &[false, false, true, true, true, false]), vec![], vec![]),
        (bools(&[3], &[true, false, true]), vec![2, 1], vec![4, 2, 1]),
    ];
    for (k, (c, ts, es)) in cases.into_iter().enumerate() {
        let (a, b) = (uni(&ts, -1.0, 1.0, k as u64), uni(&es, -1.0, 1.0, 50 + k as u64));
        let what = format!("SelectV2 {:?} {ts:?} {es:?}", c.shape());
        check(&what, sel, &[c.clone(), a.clone(), b.clone()], &[1, 2]);
        check(
            &format!("{what} unknown rank"),
            |s, i| ops::select_v2(s, dyn_(s, &i[0], None), dyn_(s, &i[1], None), dyn_(s, &i[2], None)),
            &[c, a, b],
            &[1, 2],
        );
    }
}

fn check_unary(name: &str, f: Unary, lo: f64, hi: f64, signed: bool) {
    for (k, shape) in [vec![2usize, 3], vec![], vec![4, 1, 2]].into_iter().enumerate() {
        let x = if signed { away(&shape, lo, hi, k as u64) } else { uni(&shape, lo, hi, k as u64) };
        check(&format!("{name} {shape:?}"), |s, i| f(s, i[0].clone()), &[x], &[0]);
    }
    let x = uni(&[3, 2], lo, hi, 7);
    let x = if signed { away(&[3, 2], lo, hi, 7) } else { x };
    check(&format!("{name} dynamic"), |s, i| f(s, dyn_(s, &i[0], Some(&[-1, 2]))), &[x], &[0]);
}

fn inv(s: &Scope, x: Output) -> Output {
    s.op("Inv").input(x).build().output(0)
}

#[test]
fn unary_functions() {
    check_unary("Neg", ops::neg, -2.0, 2.0, false);
    check_unary("Abs", ops::abs, 0.1, 2.0, true);
    check_unary("Sign", ops::sign, 0.1, 2.0, true);
    check_unary("Square", ops::square, -2.0, 2.0, false);
    check_unary("Sqrt", ops::sqrt, 0.2, 3.0, false);
    check_unary("Rsqrt", ops::rsqrt, 0.2, 3.0, false);
    check_unary("Exp", ops::exp, -2.0, 2.0, false);
    check_unary("Log", ops::log, 0.2, 3.0, false);
    check_unary("Log1p", ops::log1p, -0.8, 3.0, false);
    check_unary("Tanh", ops::tanh, -2.0, 2.0, false);
    check_unary("Sigmoid", ops::sigmoid, -3.0, 3.0, false);
    check_unary("Reciprocal", ops::reciprocal, 0.3, 2.0, true);
    check_unary("Inv", inv, 0.3, 2.0, true);
}

/// The gradient ops themselves, both inputs differentiable.
#[test]
fn gradient_helper_ops() {
    let helpers: [(&str, Binary, f64, f64); 5] = [
        ("TanhGrad", ops::tanh_grad, -0.9, 0.9),
        ("SigmoidGrad", ops::sigmoid_grad, 0.1, 0.9),
        ("SqrtGrad", ops::sqrt_grad, 0.3, 2.0),
        ("RsqrtGrad", ops::rsqrt_grad, 0.3, 2.0),
        ("ReciprocalGrad", ops::reciprocal_grad, -2.0, 2.0),
    ];
    for (name, f, lo, hi) in helpers {
        let (a, b) = (uni(&[2, 3], lo, hi, 3), uni(&[2, 3], -1.5, 1.5, 4));
        check(name, |s, i| f(s, i[0].clone(), i[1].clone()), &[a.clone(), b.clone()], &[0, 1]);
    }
    let (a, b) = (uni(&[4], -2.0, 2.0, 3), uni(&[4], -1.5, 1.5, 4));
    check(
        "InvGrad",
        |s, i| s.op("InvGrad").input(i[0].clone()).input(i[1].clone()).build().output(0),
        &[a, b],
        &[0, 1],
    );
}

/// Second derivatives: the first gradient is part of the checked function.
#[test]
fn second_derivatives() {
    let fns: [(&str, Unary, f64, f64); 6] = [
        ("Tanh", ops::tanh, -2.0, 2.0),
        ("Sigmoid", ops::sigmoid, -3.0, 3.0),
        ("Sqrt", ops::sqrt, 0.3, 3.0),
        ("Rsqrt", ops::rsqrt, 0.3, 3.0),
        ("Reciprocal", ops::reciprocal, 0.3, 2.0),
        ("Inv", inv, 0.3, 2.0),
    ];
    for (name, f, lo, hi) in fns {
        let x = uni(&[2, 3], lo, hi, 11);
        let dy = uni(&[2, 3], -1.0, 1.0, 12);
        let build = |s: &Scope, i: &[Output]| {
            let y = f(s, i[0].clone());
            gradients(s, &[y], &[i[0].clone()], Some(&[i[1].clone()])).unwrap()[0].clone().unwrap()
        };
        check(&format!("{name}''"), build, &[x, dy], &[0, 1]);
    }
}

#[test]
fn cast() {
    // float64 -> float32 -> float64: the gradient is cast back; f32 rounding needs a wide eps.
    let x = uni(&[2, 3], -2.0, 2.0, 1);
    let f = |s: &Scope, i: &[Output]| ops::cast(s, ops::cast(s, i[0].clone(), DataType::Float), DataType::Double);
    check_eps("Cast f64->f32->f64", f, &[x], &[0], 1e-2, 1e-4);
    let x32 = Tensor::new(vec![3usize], vec![0.5f32, -1.0, 2.0]).unwrap();
    let f =
        |s: &Scope, i: &[Output]| ops::mul(s, ops::cast(s, i[0].clone(), DataType::Double), ops::constant(s, 3.0f64));
    check_eps("Cast f32->f64", f, &[x32], &[0], 1e-3, 1e-3);
}

/// Reduction builders by name.
fn reduce(op: &str) -> fn(&Scope, Output, Output, bool) -> Output {
    match op {
        "Sum" => ops::sum,
        "Mean" => ops::mean,
        "Max" => ops::max,
        "Min" => ops::min,
        _ => ops::prod,
    }
}

fn axes_cases() -> Vec<Tensor> {
    vec![
        Tensor::scalar(1i32),
        Tensor::scalar(-1i32),
        Tensor::scalar(0i64),
        Tensor::vec(vec![0i32, 2]),
        Tensor::vec(vec![-1i64, 0]),
        Tensor::vec(Vec::<i32>::new()),
        Tensor::vec(vec![0i32, 1, 2]),
    ]
}

fn check_reduction(op: &str, x: &Tensor) {
    let f = reduce(op);
    for axes in axes_cases() {
        for keep in [false, true] {
            let what = format!("{op} axes {:?} keep_dims {keep}", axes.to_f64_vec().unwrap());
            let a = axes.clone();
            check(&what, |s, i| f(s, i[0].clone(), ops::constant(s, a.clone()), keep), std::slice::from_ref(x), &[0]);
            // Axes fed at run time, input of unknown batch size.
            check(
                &format!("{what} fed axes, [-1, 3, 4]"),
                |s, i| f(s, dyn_(s, &i[0], Some(&[-1, 3, 4])), i[1].clone(), keep),
                &[x.clone(), axes.clone()],
                &[0],
            );
            let a = axes.clone();
            check(
                &format!("{what} unknown rank"),
                |s, i| f(s, dyn_(s, &i[0], None), ops::constant(s, a.clone()), keep),
                std::slice::from_ref(x),
                &[0],
            );
        }
    }
    // Rank 2 with an unknown batch dim and constant axes (static kept shape with a -1).
    let x2 = uni(&[3, 5], 0.5, 1.5, 99);
    for (axis, keep) in [(1i32, false), (-1, true), (0, false), (-2, true)] {
        check(
            &format!("{op} [-1, 5] axis {axis} keep_dims {keep}"),
            |s, i| f(s, dyn_(s, &i[0], Some(&[-1, 5])), ops::constant(s, axis), keep),
            std::slice::from_ref(&x2),
            &[0],
        );
    }
}

#[test]
fn sum_and_mean() {
    let x = uni(&[2, 3, 4], -2.0, 2.0, 21);
    check_reduction("Sum", &x);
    check_reduction("Mean", &x);
}

#[test]
fn max_and_min() {
    // Distinct values (a shuffled grid), so no ties.
    let mut v: Vec<f64> = (0..24).map(|k| (k as f64) * 0.25 - 3.0).collect();
    let mut r = Lcg(5);
    for k in (1..v.len()).rev() {
        v.swap(k, (r.uniform(0.0, 1.0) * (k + 1) as f64) as usize);
    }
    let x = t(&[2, 3, 4], v);
    check_reduction("Max", &x);
    check_reduction("Min", &x);
}

#[test]
fn prod() {
    check_reduction("Prod", &away(&[2, 3, 4], 0.5, 1.5, 22));
    // Zeros: none, one and two per reduced group.
    let x = t(&[3, 4], vec![1.5, -2.0, 0.5, 3.0, 0.0, 2.0, -1.5, 0.75, 0.0, 1.25, 0.0, 2.5]);
    for (axis, keep) in [(1i32, false), (-1, true), (0, false)] {
        check(
            &format!("Prod zeros axis {axis}"),
            |s, i| ops::prod(s, i[0].clone(), ops::constant(s, axis), keep),
            std::slice::from_ref(&x),
            &[0],
        );
    }
}

/// Runs the gradient of `sum(f(x))` at `x`.
fn grad_at(f: impl Fn(&Scope, Output) -> Output, x: Tensor) -> Vec<f64> {
    let s = Scope::new_root();
    let p = ops::placeholder(&s, DataType::Double, None);
    let y = f(&s, p.clone());
    let g = gradients(&s, &[y], std::slice::from_ref(&p), None).unwrap()[0].clone().unwrap();
    let sess = DirectSession::new(s.graph());
    sess.run(&[(&p, x)], &[&g], &[]).unwrap()[0].to_f64_vec().unwrap()
}

#[test]
fn exact_values_at_ties_and_zeros() {
    // Max/Min split the gradient among tied elements, like TensorFlow.
    let x = t(&[2, 3], vec![1.0, 3.0, 3.0, 2.0, 0.0, -1.0]);
    let g = grad_at(|s, x| ops::max(s, x, ops::constant(s, 1i32), false), x.clone());
    assert_eq!(g, vec![0.0, 0.5, 0.5, 1.0, 0.0, 0.0]);
    let g = grad_at(|s, x| ops::min(s, x, ops::constant(s, Vec::<i32>::new()), true), x.clone());
    assert_eq!(g, vec![1.0; 6]);
    // Maximum/Minimum give ties to x.
    let g = grad_at(|s, x| ops::maximum(s, x, ops::constant(s, 2.0f64)), x.clone());
    assert_eq!(g, vec![0.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
    let g = grad_at(|s, x| ops::minimum(s, x, ops::constant(s, 2.0f64)), x.clone());
    assert_eq!(g, vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    // Prod with zeros: the product of the other elements.
    let x = t(&[3, 3], vec![2.0, 0.0, 3.0, 0.0, 0.0, 5.0, 2.0, 3.0, 4.0]);
    let g = grad_at(|s, x| ops::prod(s, x, ops::constant(s, -1i32), false), x);
    assert_eq!(g, vec![0.0, 6.0, 0.0, 0.0, 0.0, 0.0, 12.0, 8.0, 6.0]);
    // Abs at 0 and Pow's y gradient at x <= 0 are 0.
    let g = grad_at(ops::abs, t(&[2], vec![0.0, -2.0]));
    assert_eq!(g, vec![0.0, -1.0]);
    let s = Scope::new_root();
    let y = ops::placeholder(&s, DataType::Double, None);
    let z = ops::pow(&s, ops::constant(&s, vec![0.0f64, -2.0, 4.0]), y.clone());
    let g = gradients(&s, &[z], std::slice::from_ref(&y), None).unwrap()[0].clone().unwrap();
    let out = DirectSession::new(s.graph()).run(&[(&y, t(&[3], vec![2.0; 3]))], &[&g], &[]).unwrap();
    assert_eq!(out[0].to_f64_vec().unwrap(), vec![0.0, 0.0, 16.0 * 4f64.ln()]);
}
