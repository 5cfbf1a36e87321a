//! Stateless random ops (TensorFlow's definitions): the seed-to-key ops
//! (`StatelessRandomGetKeyCounter`, `...Alg`, `StatelessRandomGetAlg`), the V2 samplers that
//! take a Philox key, counter and algorithm, `StatelessShuffle`, and the V1 samplers that take a seed. The same
//! inputs give the same numbers on every run; tf_keras's initializers emit them.

use ferroflow_core::{attr, DataType, Status};

use super::random::random_shape;
use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

const FLOATS: &str = "{half, bfloat16, float, double}";
const FULL_INTS: &str = "{int32, int64, uint32, uint64}";

fn key_counter_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    if let Some(s) = c.input(0) {
        if s.len() != 1 || (s[0] >= 0 && s[0] != 2) {
            return Err(c.error(format!("seed must have shape [2], not {s:?}")));
        }
    }
    // The counter of Philox is two uint64s.
    let mut out = vec![Some(vec![1]), Some(vec![2])];
    if c.node.op == "StatelessRandomGetKeyCounterAlg" {
        out.push(Some(vec![]));
    }
    Ok(out)
}

fn alg_shape(_: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![Some(vec![])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    for name in ["StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg"] {
        let b = op(name).input("seed: Tseed").output("key: uint64").output("counter: uint64");
        let b = b.when(name.ends_with("Alg"), |b| b.output("alg: int32"));
        r.add(b.attr("Tseed: {int32, int64} = DT_INT64").shape_fn(key_counter_shape).build());
    }
    r.add(op("StatelessRandomGetAlg").output("alg: int32").stateful().shape_fn(alg_shape).build());
    let v2 =
        |name: &str| op(name).input("shape: Tshape").input("key: uint64").input("counter: uint64").input("alg: int32");
    for name in ["StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"] {
        r.add(
            v2(name)
                .output("output: dtype")
                .attr(&format!("dtype: {FLOATS} = DT_FLOAT"))
                .attr("Tshape: {int32, int64} = DT_INT32")
                .shape_fn(random_shape)
                .build(),
        );
    }
    r.add(
        v2("StatelessRandomUniformIntV2")
            .input("minval: dtype")
            .input("maxval: dtype")
            .output("output: dtype")
            .attr(&format!("dtype: {FULL_INTS}"))
            .attr("Tshape: {int32, int64} = DT_INT32")
            .shape_fn(random_shape)
            .build(),
    );
    r.add(
        v2("StatelessRandomUniformFullIntV2")
            .output("output: dtype")
            .attr(&format!("dtype: {FULL_INTS} = DT_UINT64"))
            .attr("Tshape: {int32, int64} = DT_INT32")
            .shape_fn(random_shape)
            .build(),
    );
    for name in ["StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"] {
        r.add(
            op(name)
                .input("shape: T")
                .input("seed: Tseed")
                .output("output: dtype")
                .attr(&format!("dtype: {FLOATS} = DT_FLOAT"))
                .attr("T: {int32, int64} = DT_INT32")
                .attr("Tseed: {int32, int64} = DT_INT64")
                .shape_fn(random_shape)
                .build(),
        );
    }
    r.add(
        op("StatelessRandomUniformInt")
            .input("shape: T")
            .input("seed: Tseed")
            .input("minval: dtype")
            .input("maxval: dtype")
            .output("output: dtype")
            .attr("dtype: {int32, int64}")
            .attr("T: {int32, int64}")
            .attr("Tseed: {int32, int64} = DT_INT64")
            .shape_fn(random_shape)
            .build(),
    );
    r.add(
        op("StatelessRandomUniformFullInt")
            .input("shape: T")
            .input("seed: Tseed")
            .output("output: dtype")
            .attr(&format!("dtype: {FULL_INTS} = DT_UINT64"))
            .attr("T: {int32, int64} = DT_INT32")
            .attr(&format!("Tseed: {FULL_INTS} = DT_INT64"))
            .shape_fn(random_shape)
            .build(),
    );
    r.add(
        op("StatelessShuffle")
            .input("value: T")
            .input("key: uint64")
            .input("counter: uint64")
            .input("alg: int32")
            .output("output: T")
            .attr("T: type")
            .shape_fn(crate::shape_fn::unchanged)
            .build(),
    );
}

/// `StatelessShuffle`: `value` permuted along its first dimension, a function of the Philox
/// `key` and `counter` (from `StatelessRandomGetKeyCounter`) and `alg` (1 or 3) only.
pub fn stateless_shuffle(s: &Scope, value: Output, key: Output, counter: Output, alg: Output) -> Output {
    s.op("StatelessShuffle").input(value).input(key).input(counter).input(alg).build().output(0)
}

/// A V1 sampler `op_type` of `shape` and `seed`, of type `dtype`.
fn seeded(s: &Scope, op_type: &str, shape: Output, seed: Output, dtype: DataType) -> Output {
    op_output(s, op_type, [shape, seed], [("dtype", attr::ty(dtype))])
}

/// `StatelessRandomUniform`: uniform values in `[0, 1)` of `shape`, a function of `seed` (a
/// vector of two ints) only.
pub fn stateless_random_uniform(s: &Scope, shape: Output, seed: Output, dtype: DataType) -> Output {
    seeded(s, "StatelessRandomUniform", shape, seed, dtype)
}

/// `StatelessRandomNormal`: standard normal values of `shape`, a function of `seed` only.
pub fn stateless_random_normal(s: &Scope, shape: Output, seed: Output, dtype: DataType) -> Output {
    seeded(s, "StatelessRandomNormal", shape, seed, dtype)
}

/// `StatelessTruncatedNormal`: normal values within two standard deviations, a function of
/// `seed` only.
pub fn stateless_truncated_normal(s: &Scope, shape: Output, seed: Output, dtype: DataType) -> Output {
    seeded(s, "StatelessTruncatedNormal", shape, seed, dtype)
}

two_output_builders! {
    /// `StatelessRandomGetKeyCounter`: the Philox key (uint64 [1]) and counter (uint64 [2]) of a
    /// seed, for the `...V2` samplers.
    stateless_random_get_key_counter => "StatelessRandomGetKeyCounter"(seed);
}

/// `StatelessRandomUniformV2` from a key, a counter and an algorithm id (1, Philox).
pub fn stateless_random_uniform_v2(
    s: &Scope,
    shape: Output,
    key: Output,
    counter: Output,
    alg: Output,
    dtype: DataType,
) -> Output {
    s.op("StatelessRandomUniformV2").inputs([shape, key, counter, alg]).attr("dtype", attr::ty(dtype)).build().output(0)
}
