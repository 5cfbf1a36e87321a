//! `ParameterizedTruncatedNormal` (stateful; one mean, stddev and bounds per row of the
//! output, or one for all) and `StatelessParameterizedTruncatedNormal` (the parameters
//! broadcast against each other and against the trailing dims of the output; seeded by a
//! `seed` pair): normal samples truncated to `[minvals, maxvals]`.

use ferroflow_core::DataType;

use super::random::{float_sampler, random_shape};
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};

/// The parameter inputs (the stateless op spells the second `stddevs`, as TensorFlow does).
const PARAMS: [&str; 4] = ["means", "stdevs", "minvals", "maxvals"];
const STATELESS_PARAMS: [&str; 4] = ["means", "stddevs", "minvals", "maxvals"];

pub(crate) fn register(r: &mut OpRegistry) {
    let b = op("ParameterizedTruncatedNormal").input("shape: T");
    let b = PARAMS.iter().fold(b, |b, p| b.input(&format!("{p}: dtype")));
    r.add(float_sampler(b));
    let b = op("StatelessParameterizedTruncatedNormal").input("shape: S").input("seed: Tseed");
    let b = STATELESS_PARAMS.iter().fold(b, |b, p| b.input(&format!("{p}: dtype")));
    r.add(
        b.output("output: dtype")
            .attr("S: {int32, int64}")
            .attr("Tseed: {int32, int64} = DT_INT64")
            .attr("dtype: {half, float, double}")
            .shape_fn(random_shape)
            .build(),
    );
}

/// `StatelessParameterizedTruncatedNormal(shape, seed, means, stddevs, minvals, maxvals)`.
pub fn stateless_parameterized_truncated_normal(
    s: &Scope,
    shape: Output,
    seed: Output,
    params: [Output; 4],
    dtype: DataType,
) -> Output {
    let b = s.op("StatelessParameterizedTruncatedNormal").input(shape).input(seed);
    let b = params.into_iter().fold(b, |b, p| b.input(p));
    b.attr("dtype", ferroflow_core::attr::ty(dtype)).build().output(0)
}
