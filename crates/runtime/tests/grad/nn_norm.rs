//! Numeric checks of the batch-normalization and depthwise-convolution gradients:
//! FusedBatchNorm (V1, V2, V3; training and inference; NHWC and NCHW) in float32, the only
//! type TensorFlow defines them for, and DepthwiseConv2dNative with its two backprops in
//! float64 (SAME, VALID and EXPLICIT padding, strides 1 and 2, channel multipliers 1 and 2).
#![allow(clippy::type_complexity)]

use crate::util::*;
use ferroflow_core::{attr, Tensor};
use ferroflow_graph::{ops, Output, Scope};

/// A FusedBatchNorm node of version `op` on the five placeholders (y only).
fn bn(s: &Scope, v: &[Output], op: &str, training: bool, format: &str) -> Output {
    let attrs =
        [("epsilon", attr::float(0.01)), ("is_training", attr::bool(training)), ("data_format", attr::string(format))];
    ops::op_output(s, op, v.iter().cloned(), attrs)
}

#[test]
fn fused_batch_norm() {
    for (op, training, format, xs) in [
        ("FusedBatchNorm", true, "NHWC", [2, 3, 2, 3]),
        ("FusedBatchNormV2", false, "NHWC", [2, 2, 3, 2]),
        ("FusedBatchNormV3", true, "NCHW", [2, 3, 2, 2]),
        ("FusedBatchNormV3", false, "NCHW", [1, 2, 3, 3]),
        ("FusedBatchNormV3", true, "NHWC", [1, 4, 3, 2]),
    ] {
        let c = if format == "NCHW" { xs[1] } else { xs[3] };
        let scale = values(&[c], 3, 0.5, 2.0, &[], 0.0);
        let var = values(&[c], 4, 0.5, 2.0, &[], 0.0);
        let vals: Vec<Tensor> = [rand(&xs, 1), scale, rand(&[c], 2), rand(&[c], 5), var].iter().map(to_f32).collect();
        for mode in [Mode::Static, Mode::Dims] {
            let e = check_multi(|s, v| vec![bn(s, v, op, training, format)], &vals, &[0, 1, 2], EPS32, mode);
            ok(&format!("{op} training={training} {format} {xs:?} {mode:?}"), e, TOL32);
        }
    }
}

/// (input shape, filter shape, stride, padding, explicit paddings)
fn dw_cases() -> Vec<([usize; 4], [usize; 4], usize, &'static str, Vec<i64>)> {
    vec![
        ([2, 5, 5, 2], [3, 3, 2, 1], 1, "SAME", vec![]),
        ([2, 6, 5, 2], [3, 2, 2, 2], 2, "SAME", vec![]),
        ([1, 6, 6, 3], [3, 3, 3, 2], 2, "VALID", vec![]),
        ([1, 4, 5, 2], [2, 3, 2, 1], 1, "EXPLICIT", vec![0, 0, 1, 2, 2, 0, 0, 0]),
    ]
}

fn dw_out(xs: [usize; 4], fs: [usize; 4], st: usize, pad: &str, e: &[i64]) -> [usize; 4] {
    let dim = |i: usize, k: usize, p: usize| match pad {
        "EXPLICIT" => (i + e[p] as usize + e[p + 1] as usize - k) / st + 1,
        _ => out_size(i, k, st, pad == "SAME"),
    };
    [xs[0], dim(xs[1], fs[0], 2), dim(xs[2], fs[1], 4), fs[2] * fs[3]]
}

fn dw(s: &Scope, op: &str, ins: Vec<Output>, st: usize, pad: &str, e: &[i64]) -> Output {
    let st = st as i64;
    let attrs = [
        ("strides", attr::list_int(&[1, st, st, 1])),
        ("padding", attr::string(pad)),
        ("explicit_paddings", attr::list_int(e)),
    ];
    ops::op_output(s, op, ins, attrs)
}

#[test]
fn depthwise_conv2d_native() {
    for (i, (xs, fs, st, pad, e)) in dw_cases().into_iter().enumerate() {
        let vals = [rand(&xs, 10 + i as u64), rand(&fs, 20 + i as u64)];
        for mode in [Mode::Static, Mode::Dims] {
            let build = |s: &Scope, v: &[Output]| dw(s, "DepthwiseConv2dNative", vec![x(v, 0), x(v, 1)], st, pad, &e);
            let err = check(build, &vals, &[0, 1], mode);
            ok(&format!("DepthwiseConv2dNative {xs:?} {fs:?} {st} {pad} {mode:?}"), err, TOL);
        }
    }
}

#[test]
fn depthwise_backprops() {
    for (i, (xs, fs, st, pad, e)) in dw_cases().into_iter().enumerate() {
        let ys = dw_out(xs, fs, st, pad, &e);
        let (f, dy, xv) = (rand(&fs, 30 + i as u64), rand(&ys, 40 + i as u64), rand(&xs, 50 + i as u64));
        let op = "DepthwiseConv2dNativeBackpropInput";
        let build = |s: &Scope, v: &[Output]| dw(s, op, vec![i32_const(s, &xs), x(v, 0), x(v, 1)], st, pad, &e);
        ok(
            &format!("{op} {xs:?} {fs:?} {st} {pad}"),
            check(build, &[f.clone(), dy.clone()], &[0, 1], Mode::Static),
            TOL,
        );
        let op = "DepthwiseConv2dNativeBackpropFilter";
        let build = |s: &Scope, v: &[Output]| dw(s, op, vec![x(v, 0), i32_const(s, &fs), x(v, 1)], st, pad, &e);
        ok(&format!("{op} {xs:?} {fs:?} {st} {pad}"), check(build, &[xv, dy], &[0, 1], Mode::Static), TOL);
    }
}

#[test]
fn depthwise_builders_match_raw_ops() {
    let s = Scope::new_root();
    let xv = ops::placeholder(&s, ferroflow_core::DataType::Double, Some(&[1, 4, 4, 2]));
    let f = ops::placeholder(&s, ferroflow_core::DataType::Double, Some(&[2, 2, 2, 3]));
    let y = ops::depthwise_conv2d_native(&s, xv, f, &[1, 1, 1, 1], "VALID");
    assert_eq!(s.graph().shape_of(&y), Some(vec![1, 3, 3, 6]));
}
