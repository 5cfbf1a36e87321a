//! Numeric checks of the argmax pooling gradients: MaxPoolWithArgmax (through its pooled
//! output), MaxPoolGradWithArgmax and MaxPoolGradGradWithArgmax (each linear in its `grad`
//! input, positions from the fixed `argmax`), SAME and VALID, strides 1 and 2, with and
//! without the batch in the index. Inputs are distinct values 0.01 apart, so no
//! perturbation breaks a tie.

use crate::util::*;
use ferroflow_core::{attr, DataType};
use ferroflow_graph::{ops, Output, Scope};

const IN: [usize; 4] = [2, 5, 6, 2];

fn cases() -> Vec<(i64, i64, &'static str, bool)> {
    let mut v = Vec::new();
    for pad in ["SAME", "VALID"] {
        for (k, st) in [(2, 2), (3, 1), (3, 2)] {
            for batch in [false, true] {
                v.push((k, st, pad, batch));
            }
        }
    }
    v
}

/// The gradient op `op` of inputs (x, g, argmax) with the window attrs of a case.
fn argmax_grad_op(s: &Scope, op: &str, xv: Output, g: Output, argmax: Output, c: (i64, i64, &str, bool)) -> Output {
    let (k, st, pad, batch) = c;
    let attrs = [
        ("ksize", attr::list_int(&[1, k, k, 1])),
        ("strides", attr::list_int(&[1, st, st, 1])),
        ("padding", attr::string(pad)),
        ("include_batch_in_index", attr::bool(batch)),
    ];
    ops::op_output(s, op, [xv, g, argmax], attrs)
}

#[test]
fn max_pool_with_argmax() {
    for (i, (k, st, pad, batch)) in cases().into_iter().enumerate() {
        let vals = [distinct(&IN, 300 + i as u64)];
        for mode in [Mode::Static, Mode::Dims] {
            let build = |s: &Scope, v: &[Output]| {
                ops::max_pool_with_argmax(s, x(v, 0), &[1, k, k, 1], &[1, st, st, 1], pad, DataType::Int64, batch).0
            };
            ok(
                &format!("MaxPoolWithArgmax k{k} s{st} {pad} batch {batch} {mode:?}"),
                check(build, &vals, &[0], mode),
                TOL,
            );
        }
    }
}

#[test]
fn argmax_gradients_second_order() {
    for (i, c) in cases().into_iter().enumerate() {
        let (k, st, pad, batch) = c;
        let same = pad == "SAME";
        let (ku, su) = (k as usize, st as usize);
        let out = [IN[0], out_size(IN[1], ku, su, same), out_size(IN[2], ku, su, same), IN[3]];
        let vals = [distinct(&IN, 320 + i as u64), uniform(&out, 340 + i as u64)];
        let vals_gg = [distinct(&IN, 360 + i as u64), uniform(&IN, 380 + i as u64)];
        for mode in [Mode::Static, Mode::Dims] {
            let argmax = |s: &Scope, xv: Output| {
                ops::max_pool_with_argmax(s, xv, &[1, k, k, 1], &[1, st, st, 1], pad, DataType::Int64, batch).1
            };
            let build = |s: &Scope, v: &[Output]| {
                let a = argmax(s, x(v, 0));
                argmax_grad_op(s, "MaxPoolGradWithArgmax", x(v, 0), x(v, 1), a, c)
            };
            let what = format!("MaxPoolGradWithArgmax k{k} s{st} {pad} batch {batch} {mode:?}");
            ok(&what, check(build, &vals, &[1], mode), TOL);
            let build = |s: &Scope, v: &[Output]| {
                let a = argmax(s, x(v, 0));
                argmax_grad_op(s, "MaxPoolGradGradWithArgmax", x(v, 0), x(v, 1), a, c)
            };
            let what = format!("MaxPoolGradGradWithArgmax k{k} s{st} {pad} batch {batch} {mode:?}");
            ok(&what, check(build, &vals_gg, &[1], mode), TOL);
        }
    }
}
