//! Numeric checks of the Dilation2D gradient (both inputs, through
//! Dilation2DBackpropInput and Dilation2DBackpropFilter) and of erosion2d built on it: SAME
//! and VALID, strides and atrous rates, batch 2, two channels. Values are uniform doubles,
//! so no window's maximum is tied within a step; every window holds a pixel of the image.

use crate::util::*;
use ferroflow_graph::ops::{self, Dilation2dAttrs};

/// (input shape, filter shape, strides, rates, padding).
type Case = ([usize; 4], [usize; 3], [i64; 2], [i64; 2], &'static str);

const CASES: [Case; 6] = [
    ([2, 5, 6, 2], [2, 3, 2], [1, 1], [1, 1], "SAME"),
    ([2, 5, 6, 2], [2, 3, 2], [1, 1], [1, 1], "VALID"),
    ([1, 7, 6, 2], [3, 2, 2], [2, 2], [1, 1], "SAME"),
    ([1, 7, 8, 2], [2, 2, 2], [2, 3], [2, 2], "VALID"),
    ([2, 6, 5, 1], [2, 2, 1], [1, 2], [2, 1], "SAME"),
    ([1, 4, 4, 2], [4, 4, 2], [1, 1], [1, 1], "VALID"),
];

fn attrs(strides: [i64; 2], rates: [i64; 2], padding: &str) -> Dilation2dAttrs {
    Dilation2dAttrs {
        strides: [1, strides[0], strides[1], 1],
        rates: [1, rates[0], rates[1], 1],
        padding: padding.into(),
    }
}

#[test]
fn dilation2d() {
    for (i, (xs, fs, strides, rates, padding)) in CASES.into_iter().enumerate() {
        let a = attrs(strides, rates, padding);
        let vals = [uniform(&xs, 70 + i as u64), uniform(&fs, 90 + i as u64)];
        for mode in [Mode::Static, Mode::Dims] {
            let e = check(|s, v| ops::dilation2d(s, x(v, 0), x(v, 1), &a), &vals, &[0, 1], mode);
            ok(&format!("Dilation2D {xs:?} {fs:?} {strides:?} {rates:?} {padding} {mode:?}"), e, TOL);
        }
    }
}

#[test]
fn erosion2d() {
    for (i, (xs, fs, strides, rates, padding)) in CASES.into_iter().enumerate().step_by(2) {
        let a = attrs(strides, rates, padding);
        let vals = [uniform(&xs, 110 + i as u64), uniform(&fs, 130 + i as u64)];
        let e = check(|s, v| ops::erosion2d(s, x(v, 0), x(v, 1), &a), &vals, &[0, 1], Mode::Static);
        ok(&format!("erosion2d {xs:?} {fs:?} {strides:?} {rates:?} {padding}"), e, TOL);
    }
}

#[test]
fn dilation2d_f32() {
    let (xs, fs, strides, rates, padding) = CASES[2];
    let a = attrs(strides, rates, padding);
    let vals = [to_f32(&uniform(&xs, 150)), to_f32(&uniform(&fs, 151))];
    let e = check_multi(|s, v| vec![ops::dilation2d(s, x(v, 0), x(v, 1), &a)], &vals, &[0, 1], EPS32, Mode::Static);
    ok("Dilation2D f32", e, TOL32);
}
