//! The Rust builders of TensorFlow 1.x control flow (`cond_v1`, `while_loop_v1`) run on
//! DirectSession: values of conditionals (taken and untaken, with a side effect in one
//! branch), of counted and nested loops, a loop in a conditional's untaken branch, and a
//! loop that updates a variable through an invariant.

use ferroflow_core::{DataType, Tensor};
use ferroflow_graph::{cond_v1, ops, while_loop_v1, Output, Scope};
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

#[test]
fn conditionals_take_one_branch() {
    let s = Scope::new_root();
    let p = ops::placeholder(&s, DataType::Bool, None);
    let x = ops::placeholder(&s, DataType::Float, None);
    let y = cond_v1(
        &s,
        p.clone(),
        std::slice::from_ref(&x),
        |s, a| vec![ops::mul(s, a[0].clone(), ops::constant(s, 2.0f32))],
        |s, a| vec![ops::sub(s, a[0].clone(), ops::constant(s, 1.0f32))],
    )
    .unwrap();
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
