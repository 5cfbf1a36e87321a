//! The Rust builders of TensorFlow 1.x control flow (`cond_v1`, `while_loop_v1`) run on
//! DirectSession: values of conditionals (taken and untaken, with a side effect in one
//! branch), of counted and nested loops, a loop in a conditional's untaken branch, and a
//! loop that updates a variable through an invariant.

use ferroflow_core::{DataType, Tensor};
use ferroflow_graph::{cond_v1, ops, while_loop_v1, Output, Scope};
use ferroflow_runtime::StepRunner;
use ferroflow_runtime::{DirectSession, RunOptions};

fn run(s: &Scope, feeds: &[(&Output, Tensor)], fetches: &[&Output]) -> Vec<Tensor> {
    let sess = DirectSession::new(s.graph());
    let feeds: Vec<(String, Tensor)> = feeds.iter().map(|(o, t)| (o.name(), t.clone())).collect();
    let fetches: Vec<String> = fetches.iter().map(|o| o.name()).collect();
    sess.run_by_name(&feeds, &fetches, &[], &RunOptions::default()).unwrap()
}

/// Sum of 0..n with a counted loop.
fn sum_below(s: &Scope, n: Output) -> Output {
    let zero = ops::constant(s, 0i32);
    let out = while_loop_v1(
        s,
        &[zero.clone(), zero],
        &[n],
        |s, v, inv| ops::less(s, v[0].clone(), inv[0].clone()),
        |s, v, _| vec![ops::add(s, v[0].clone(), ops::constant(s, 1i32)), ops::add(s, v[1].clone(), v[0].clone())],
        10,
    )
    .unwrap();
    out[1].clone()
}

/// A conditional on a fed predicate `p` over a fed float `x`: `(scope, p, x, cond outputs)`.
fn fed_cond(
    then_fn: impl FnOnce(&Scope, &[Output]) -> Vec<Output>,
    else_fn: impl FnOnce(&Scope, &[Output]) -> Vec<Output>,
) -> (Scope, Output, Output, Vec<Output>) {
    let s = Scope::new_root();
    let p = ops::placeholder(&s, DataType::Bool, None);
    let x = ops::placeholder(&s, DataType::Float, None);
    let y = cond_v1(&s, p.clone(), std::slice::from_ref(&x), then_fn, else_fn).unwrap();
    (s, p, x, y)
}

#[test]
fn conditionals_take_one_branch() {
    let (s, p, x, y) = fed_cond(
        |s, a| vec![ops::mul(s, a[0].clone(), ops::constant(s, 2.0f32))],
        |s, a| vec![ops::sub(s, a[0].clone(), ops::constant(s, 1.0f32))],
    );
    for (pv, want) in [(true, 6.0f32), (false, 2.0)] {
        let got = run(&s, &[(&p, Tensor::scalar(pv)), (&x, Tensor::scalar(3.0f32))], &[&y[0]]);
        assert_eq!(got[0].scalar_value::<f32>().unwrap(), want);
    }
}

#[test]
fn loops_count_nest_and_sit_in_conditionals() {
    let s = Scope::new_root();
    let n = ops::placeholder(&s, DataType::Int32, None);
    let p = ops::placeholder(&s, DataType::Bool, None);
    let total = sum_below(&s, n.clone());
    // Nested: sum over i < n of sum_below(i).
    let zero = ops::constant(&s, 0i32);
    let nested = while_loop_v1(
        &s,
        &[zero.clone(), zero],
        std::slice::from_ref(&n),
        |s, v, inv| ops::less(s, v[0].clone(), inv[0].clone()),
        |s, v, _| {
            let inner = sum_below(s, v[0].clone());
            vec![ops::add(s, v[0].clone(), ops::constant(s, 1i32)), ops::add(s, v[1].clone(), inner)]
        },
        4,
    )
    .unwrap()[1]
        .clone();
    let in_cond = cond_v1(
        &s,
        p.clone(),
        std::slice::from_ref(&n),
        |s, a| vec![sum_below(s, a[0].clone())],
        |s, _| vec![ops::constant(s, -1i32)],
    )
    .unwrap()[0]
        .clone();
    for (nv, pv) in [(0, true), (1, false), (5, true), (9, false)] {
        let got = run(&s, &[(&n, Tensor::scalar(nv)), (&p, Tensor::scalar(pv))], &[&total, &nested, &in_cond]);
        let sum = |k: i32| (0..k).sum::<i32>();
        assert_eq!(got[0].scalar_value::<i32>().unwrap(), sum(nv), "n={nv}");
        assert_eq!(got[1].scalar_value::<i32>().unwrap(), (0..nv).map(sum).sum::<i32>(), "n={nv}");
        assert_eq!(got[2].scalar_value::<i32>().unwrap(), if pv { sum(nv) } else { -1 }, "n={nv} p={pv}");
    }
}

/// Gradients through `cond_v1`: the taken branch's derivative, checked numerically for
/// both predicates, with the input also used outside the conditional and a branch that
/// ignores it.
#[test]
fn conditional_gradients_follow_the_taken_branch() {
    use ferroflow_runtime::grad_check::check_gradient;
    for taken in [true, false] {
        let build = move |s: &Scope, x: &[Output]| {
            let p = ops::constant(s, taken);
            let y = cond_v1(
                s,
                p,
                std::slice::from_ref(&x[0]),
                |s, a| vec![ops::mul(s, ops::mul(s, a[0].clone(), a[0].clone()), ops::constant(s, 3.0f64))],
                |s, _| vec![ops::constant(s, Tensor::new(vec![3usize], vec![1.0f64, 2.0, 3.0]).unwrap())],
            )
            .unwrap();
            ops::add(s, y[0].clone(), ops::mul(s, x[0].clone(), ops::constant(s, 0.5f64)))
        };
        let x = Tensor::new(vec![3usize], vec![0.3f64, -1.2, 2.0]).unwrap();
        let r = check_gradient(build, &[x], &[0], 1e-6).unwrap();
        assert!(r.max_rel_error < 1e-6, "taken = {taken}: {r:?}");
    }
    // The analytic values: d/dx (3x² + x/2) = 6x + 0.5 when taken, 0.5 otherwise.
    let (s, p, x, y) = fed_cond(
        |s, a| vec![ops::mul(s, ops::mul(s, a[0].clone(), a[0].clone()), ops::constant(s, 3.0f32))],
        |s, _| vec![ops::constant(s, 1.0f32)],
    );
    let z = ops::add(&s, y[0].clone(), ops::mul(&s, x.clone(), ops::constant(&s, 0.5f32)));
    let g = ferroflow_graph::gradients(&s, &[z], std::slice::from_ref(&x), None).unwrap()[0].clone().unwrap();
    for (taken, want) in [(true, 6.0 * 2.0 + 0.5), (false, 0.5f32)] {
        let out = run(&s, &[(&p, Tensor::scalar(taken)), (&x, Tensor::scalar(2.0f32))], &[&g]);
        assert_eq!(out[0].scalar_value::<f32>().unwrap(), want, "taken = {taken}");
    }
}

#[test]
fn loop_gradients_from_rust_say_not_yet() {
    let s = Scope::new_root();
    let x = ops::placeholder(&s, DataType::Float, None);
    let out = while_loop_v1(
        &s,
        &[ops::constant(&s, 0i32), x.clone()],
        &[],
        |s, v, _| ops::less(s, v[0].clone(), ops::constant(s, 3i32)),
        |s, v, _| vec![ops::add(s, v[0].clone(), ops::constant(s, 1i32)), ops::mul(s, v[1].clone(), v[1].clone())],
        10,
    )
    .unwrap();
    let e = ferroflow_graph::gradients(&s, &[out[1].clone()], &[x], None).unwrap_err();
    assert_eq!(e.code, ferroflow_core::Code::Unimplemented, "{e}");
    assert!(e.message.contains("while loop"), "{e}");
}
