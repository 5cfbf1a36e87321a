//! Numeric checks of the 3-D convolution and pooling gradients: Conv3D,
//! Conv3DBackpropInputV2, Conv3DBackpropFilterV2, MaxPool3D, MaxPool3DGrad,
//! MaxPool3DGradGrad, AvgPool3D, AvgPool3DGrad — SAME and VALID, strides 1 and 2, batch 2.
//! Max-pool inputs are distinct values, so no perturbation breaks a tie.

use crate::util::*;
use ferroflow_core::attr;
use ferroflow_graph::{ops, Output, Scope};

/// (input, filter, strides, padding).
type ConvCase = ([usize; 5], [usize; 5], [usize; 3], &'static str);

const CONV: [ConvCase; 4] = [
    ([2, 3, 4, 3, 2], [2, 3, 2, 2, 3], [1, 1, 1], "SAME"),
    ([2, 4, 3, 5, 1], [3, 2, 3, 1, 2], [2, 1, 2], "VALID"),
    ([1, 5, 4, 4, 2], [3, 3, 3, 2, 1], [2, 2, 2], "SAME"),
    ([2, 2, 3, 3, 3], [1, 1, 1, 3, 2], [1, 2, 1], "VALID"),
];

fn conv_out(c: &ConvCase) -> [usize; 5] {
    let same = c.3 == "SAME";
    let o = |i: usize| out_size(c.0[1 + i], c.1[i], c.2[i], same);
    [c.0[0], o(0), o(1), o(2), c.1[4]]
}

fn strides(s: [usize; 3]) -> [i64; 5] {
    [1, s[0] as i64, s[1] as i64, s[2] as i64, 1]
}

fn with_attrs(s: &Scope, op: &str, ins: Vec<Output>, st: [i64; 5], pad: &str) -> Output {
    let attrs = [("strides", attr::list_int(&st)), ("padding", attr::string(pad))];
    ops::op_output(s, op, ins, attrs)
}

#[test]
fn conv3d_and_its_backprops() {
    for (i, c) in CONV.iter().enumerate() {
        let (st, pad, ys) = (strides(c.2), c.3, conv_out(c));
        let seed = 10 * i as u64;
        for mode in [Mode::Static, Mode::Dims] {
            let vals = [uniform(&c.0, seed), uniform(&c.1, seed + 1)];
            let e = check(|s, v| ops::conv3d(s, x(v, 0), x(v, 1), &st, pad), &vals, &[0, 1], mode);
            ok(&format!("Conv3D {c:?} {mode:?}"), e, TOL);
            let vals = [uniform(&c.1, seed + 2), uniform(&ys, seed + 3)];
            let e = check(
                |s, v| with_attrs(s, "Conv3DBackpropInputV2", vec![i32_const(s, &c.0), x(v, 0), x(v, 1)], st, pad),
                &vals,
                &[0, 1],
                mode,
            );
            ok(&format!("Conv3DBackpropInputV2 {c:?} {mode:?}"), e, TOL);
            let vals = [uniform(&c.0, seed + 4), uniform(&ys, seed + 5)];
            let e = check(
                |s, v| with_attrs(s, "Conv3DBackpropFilterV2", vec![x(v, 0), i32_const(s, &c.1), x(v, 1)], st, pad),
                &vals,
                &[0, 1],
                mode,
            );
            ok(&format!("Conv3DBackpropFilterV2 {c:?} {mode:?}"), e, TOL);
        }
    }
}

const POOL_IN: [usize; 5] = [2, 4, 5, 3, 2];

/// (ksize, strides, padding).
const POOL: [([i64; 3], [i64; 3], &str); 4] = [
    ([2, 2, 2], [2, 2, 2], "SAME"),
    ([3, 2, 2], [1, 2, 1], "VALID"),
    ([2, 3, 2], [2, 1, 1], "SAME"),
    ([1, 1, 1], [1, 1, 1], "VALID"),
];

fn k5(k: [i64; 3]) -> [i64; 5] {
    [1, k[0], k[1], k[2], 1]
}

fn pool_out(k: [i64; 3], st: [i64; 3], pad: &str) -> [usize; 5] {
    let o = |i: usize| out_size(POOL_IN[1 + i], k[i] as usize, st[i] as usize, pad == "SAME");
    [POOL_IN[0], o(0), o(1), o(2), POOL_IN[4]]
}

fn pool_op(s: &Scope, op: &str, ins: Vec<Output>, k: [i64; 3], st: [i64; 3], pad: &str) -> Output {
    let attrs =
        [("ksize", attr::list_int(&k5(k))), ("strides", attr::list_int(&k5(st))), ("padding", attr::string(pad))];
    ops::op_output(s, op, ins, attrs)
}

#[test]
fn pool3d_first_and_second_order() {
    for (i, (k, st, pad)) in POOL.into_iter().enumerate() {
        let seed = 100 + 10 * i as u64;
        let out = pool_out(k, st, pad);
        for mode in [Mode::Static, Mode::Dims] {
            let what = format!("k{k:?} s{st:?} {pad} {mode:?}");
            let e = check(
                |s, v| ops::max_pool3d(s, x(v, 0), &k5(k), &k5(st), pad),
                &[distinct(&POOL_IN, seed)],
                &[0],
                mode,
            );
            ok(&format!("MaxPool3D {what}"), e, TOL);
            let e = check(
                |s, v| ops::avg_pool3d(s, x(v, 0), &k5(k), &k5(st), pad),
                &[uniform(&POOL_IN, seed + 1)],
                &[0],
                mode,
            );
            ok(&format!("AvgPool3D {what}"), e, TOL);
            let e = check(
                |s, v| pool_op(s, "AvgPool3DGrad", vec![i32_const(s, &POOL_IN), x(v, 0)], k, st, pad),
                &[uniform(&out, seed + 2)],
                &[0],
                mode,
            );
            ok(&format!("AvgPool3DGrad {what}"), e, TOL);
            // MaxPool3DGrad is linear in `grad`, MaxPool3DGradGrad in its `grad` (shaped like
            // the input); positions come from the distinct input, held fixed.
            let vals = [distinct(&POOL_IN, seed + 3), uniform(&out, seed + 4)];
            let build = |s: &Scope, v: &[Output]| {
                let y = ops::max_pool3d(s, x(v, 0), &k5(k), &k5(st), pad);
                pool_op(s, "MaxPool3DGrad", vec![x(v, 0), y, x(v, 1)], k, st, pad)
            };
            ok(&format!("MaxPool3DGrad {what}"), check(build, &vals, &[1], mode), TOL);
            let vals = [distinct(&POOL_IN, seed + 5), uniform(&POOL_IN, seed + 6)];
            let build = |s: &Scope, v: &[Output]| {
                let y = ops::max_pool3d(s, x(v, 0), &k5(k), &k5(st), pad);
                pool_op(s, "MaxPool3DGradGrad", vec![x(v, 0), y, x(v, 1)], k, st, pad)
            };
            ok(&format!("MaxPool3DGradGrad {what}"), check(build, &vals, &[1], mode), TOL);
        }
    }
}
