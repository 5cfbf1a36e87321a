//! Numeric checks of the convolution and pooling gradients: Conv2D, Conv2DBackpropInput,
//! Conv2DBackpropFilter, MaxPool, MaxPoolGrad, MaxPoolGradGrad, AvgPool, AvgPoolGrad — SAME and VALID, strides 1 and 2,
//! batch 2. Max-pool inputs are distinct values 0.01 apart, so no perturbation breaks a tie.

use crate::util::*;
use ferroflow_core::{DataType, Tensor};
use ferroflow_graph::{gradients, ops, Output, Scope};

/// (input shape, filter shape, stride, padding) cases: SAME/VALID × strides 1/2, batch 2,
/// non-square windows, plus 1×1 and whole-image filters.
fn conv_cases() -> Vec<([usize; 4], [usize; 4], usize, &'static str)> {
    let mut v = Vec::new();
    for pad in ["SAME", "VALID"] {
        for st in [1, 2] {
            v.push(([2, 5, 6, 2], [3, 2, 2, 3], st, pad));
        }
    }
    v.push(([2, 5, 5, 3], [1, 1, 3, 2], 2, "SAME"));
    v.push(([2, 4, 4, 1], [4, 4, 1, 2], 1, "VALID"));
    v.push(([1, 4, 5, 1], [2, 2, 1, 1], 2, "SAME"));
    v
}

fn conv_out(xs: [usize; 4], fs: [usize; 4], st: usize, pad: &str) -> [usize; 4] {
    let same = pad == "SAME";
    [xs[0], out_size(xs[1], fs[0], st, same), out_size(xs[2], fs[1], st, same), fs[3]]
}

/// One case of [`conv_cases`]: input, filter and output shapes, strides and padding.
#[derive(Clone, Copy)]
struct Conv {
    xs: [usize; 4],
    fs: [usize; 4],
    ys: [usize; 4],
    strides: [i64; 4],
    pad: &'static str,
}

/// Checks `op`'s gradient with respect to both its differentiated inputs for every case
/// of [`conv_cases`], in both shape modes. Case `i`'s two inputs are uniform of the shapes
/// `shapes` picks from it, seeded `seeds[k] + i`; `build` makes the op from them.
fn check_conv(
    op: &str,
    shapes: [fn(&Conv) -> [usize; 4]; 2],
    seeds: [u64; 2],
    build: fn(&Scope, &[Output], Conv) -> Output,
) {
    for (i, (xs, fs, st, pad)) in conv_cases().into_iter().enumerate() {
        let c = Conv { xs, fs, ys: conv_out(xs, fs, st, pad), strides: [1, st as i64, st as i64, 1], pad };
        let vals = [0, 1].map(|k| uniform(&shapes[k](&c), seeds[k] + i as u64));
        for mode in [Mode::Static, Mode::Dims] {
            let e = check(|s, v| build(s, v, c), &vals, &[0, 1], mode);
            ok(&format!("{op} {xs:?} {fs:?} stride {st} {pad} {mode:?}"), e, TOL);
        }
    }
}

#[test]
fn conv2d() {
    check_conv("Conv2D", [|c| c.xs, |c| c.fs], [20, 40], |s, v, c| ops::conv2d(s, x(v, 0), x(v, 1), &c.strides, c.pad));
}

#[test]
fn conv2d_float32() {
    let vals = [to_f32(&uniform(&[2, 5, 6, 2], 60)), to_f32(&uniform(&[3, 2, 2, 3], 61))];
    for (st, pad) in [(1, "SAME"), (2, "VALID")] {
        let strides = [1, st, st, 1];
        let e = check_multi(
            |s, v| vec![ops::conv2d(s, x(v, 0), x(v, 1), &strides, pad)],
            &vals,
            &[0, 1],
            EPS32,
            Mode::Static,
        );
        ok(&format!("Conv2D f32 stride {st} {pad}"), e, TOL32);
    }
}

#[test]
fn conv2d_backprop_input() {
    check_conv("Conv2DBackpropInput", [|c| c.fs, |c| c.ys], [70, 80], |s, v, c| {
        ops::conv2d_backprop_input(s, i32_const(s, &c.xs), x(v, 0), x(v, 1), &c.strides, c.pad)
    });
}

#[test]
fn conv2d_backprop_filter() {
    check_conv("Conv2DBackpropFilter", [|c| c.xs, |c| c.ys], [90, 100], |s, v, c| {
        ops::conv2d_backprop_filter(s, x(v, 0), i32_const(s, &c.fs), x(v, 1), &c.strides, c.pad)
    });
}

/// (ksize, stride, padding) pool cases over a [2, 5, 6, 2] input.
fn pool_cases() -> Vec<(i64, i64, &'static str)> {
    let mut v = Vec::new();
    for pad in ["SAME", "VALID"] {
        for (k, st) in [(2, 2), (3, 1), (3, 2), (2, 1)] {
            v.push((k, st, pad));
        }
    }
    v
}

const POOL_IN: [usize; 4] = [2, 5, 6, 2];

/// The output shape of pooling [`POOL_IN`] by a `k`×`k` window at stride `st`.
fn pool_out(k: i64, st: i64, pad: &str) -> [usize; 4] {
    let (ku, su, same) = (k as usize, st as usize, pad == "SAME");
    [POOL_IN[0], out_size(POOL_IN[1], ku, su, same), out_size(POOL_IN[2], ku, su, same), POOL_IN[3]]
}

/// Checks a pooling op's gradient for every case of [`pool_cases`], in both shape modes;
/// each case's input is drawn by `input` with the seed `seed + case`.
fn check_pool(
    op: &str,
    pool: fn(&Scope, Output, &[i64], &[i64], &str) -> Output,
    input: fn(&[usize], u64) -> Tensor,
    seed: u64,
) {
    for (i, (k, st, pad)) in pool_cases().into_iter().enumerate() {
        let vals = [input(&POOL_IN, seed + i as u64)];
        for mode in [Mode::Static, Mode::Dims] {
            let e = check(|s, v| pool(s, x(v, 0), &[1, k, k, 1], &[1, st, st, 1], pad), &vals, &[0], mode);
            ok(&format!("{op} k{k} s{st} {pad} {mode:?}"), e, TOL);
        }
    }
}

#[test]
fn max_pool() {
    check_pool("MaxPool", ops::max_pool, distinct, 110);
}

#[test]
fn avg_pool() {
    check_pool("AvgPool", ops::avg_pool, uniform, 120);
}

#[test]
fn avg_pool_grad_second_order() {
    for (i, (k, st, pad)) in pool_cases().into_iter().enumerate() {
        let out = pool_out(k, st, pad);
        let vals = [uniform(&out, 130 + i as u64)];
        for mode in [Mode::Static, Mode::Dims] {
            let build = |s: &Scope, v: &[Output]| {
                ops::avg_pool_grad(s, i32_const(s, &POOL_IN), x(v, 0), &[1, k, k, 1], &[1, st, st, 1], pad)
            };
            ok(&format!("AvgPoolGrad k{k} s{st} {pad} {mode:?}"), check(build, &vals, &[0], mode), TOL);
        }
    }
}

/// MaxPoolGrad is linear in its `grad` input (the positions come from the distinct
/// `orig_input`, held fixed), and MaxPoolGradGrad likewise; both are checked against finite
/// differences with respect to that input.
#[test]
fn max_pool_grad_second_order() {
    for (i, (k, st, pad)) in pool_cases().into_iter().enumerate() {
        let out = pool_out(k, st, pad);
        let (ks, ss) = ([1, k, k, 1], [1, st, st, 1]);
        let vals = [distinct(&POOL_IN, 140 + i as u64), uniform(&out, 150 + i as u64)];
        let vals_gg = [distinct(&POOL_IN, 160 + i as u64), uniform(&POOL_IN, 170 + i as u64)];
        for mode in [Mode::Static, Mode::Dims] {
            let build = |s: &Scope, v: &[Output]| {
                let y = ops::max_pool(s, x(v, 0), &ks, &ss, pad);
                ops::max_pool_grad(s, x(v, 0), y, x(v, 1), &ks, &ss, pad)
            };
            ok(&format!("MaxPoolGrad k{k} s{st} {pad} {mode:?}"), check(build, &vals, &[1], mode), TOL);
            let build = |s: &Scope, v: &[Output]| {
                let y = ops::max_pool(s, x(v, 0), &ks, &ss, pad);
                ops::max_pool_grad_grad(s, x(v, 0), y, x(v, 1), &ks, &ss, pad)
            };
            ok(&format!("MaxPoolGradGrad k{k} s{st} {pad} {mode:?}"), check(build, &vals_gg, &[1], mode), TOL);
        }
    }
}

/// Differentiating MaxPool's gradient again with respect to the incoming gradient (as
/// `tf.gradients` twice does) builds a MaxPoolGradGrad.
#[test]
fn max_pool_second_order_builds_max_pool_grad_grad() {
    let s = Scope::new_root();
    let xv = ops::placeholder(&s, DataType::Double, Some(&[1, 4, 4, 1]));
    let w = ops::placeholder(&s, DataType::Double, Some(&[1, 2, 2, 1]));
    let y = ops::max_pool(&s, xv.clone(), &[1, 2, 2, 1], &[1, 2, 2, 1], "VALID");
    let g = gradients(&s, &[y], std::slice::from_ref(&xv), Some(std::slice::from_ref(&w))).unwrap()[0].clone().unwrap();
    let dw = gradients(&s, &[g], &[w], None).unwrap()[0].clone().expect("a gradient for the incoming gradient");
    assert_eq!(s.graph().node(&dw.node).unwrap().def.op, "MaxPoolGradGrad");
}
