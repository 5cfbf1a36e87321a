//! Numeric checks of the fractional pooling gradients: FractionalMaxPool and
//! FractionalAvgPool through their pooled output, random and pseudo-random sequences,
//! overlapping or not. The pooling is deterministic (fixed seeds), so every perturbed run
//! pools over the same cells; max-pool inputs are distinct values 0.01 apart, so no
//! perturbation breaks a tie.

use crate::util::*;
use ferroflow_graph::{ops, Scope};

const IN: [usize; 4] = [2, 7, 9, 2];

#[test]
fn fractional_pools() {
    let mut i = 0;
    for max in [true, false] {
        for pseudo in [false, true] {
            for overlapping in [false, true] {
                for ratio in [[1.0f32, 1.5, 1.6, 1.0], [1.0, 1.3, 2.0, 1.0]] {
                    i += 1;
                    let vals = [distinct(&IN, 700 + i)];
                    for mode in [Mode::Static, Mode::Dims] {
                        let build = |s: &Scope, v: &[ferroflow_graph::Output]| {
                            ops::fractional_pool(s, max, x(v, 0), &ratio, pseudo, overlapping, (17, 4 + i as i64)).0
                        };
                        let what = format!(
                            "Fractional{}Pool ratio {ratio:?} pseudo {pseudo} overlapping {overlapping} {mode:?}",
                            if max { "Max" } else { "Avg" }
                        );
                        ok(&what, check(build, &vals, &[0], mode), TOL);
                    }
                }
            }
        }
    }
}
