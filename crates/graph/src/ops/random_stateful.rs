//! The ops of `tf.random.Generator` (TensorFlow's definitions): `RngReadAndSkip` and
//! `RngSkip` on the generator's int64 state variable, the samplers that draw from the state
//! themselves (`StatefulUniform`, `StatefulUniformInt`, `StatefulUniformFullInt`,
//! `StatefulStandardNormalV2`, `StatefulTruncatedNormal`, `StatefulRandomBinomial`), and
//! `NonDeterministicInts` (the seed of `from_non_deterministic_state`). All are stateful
//! and not differentiable; each sampler runs where its state variable lives.

use ferroflow_core::{attr, DataType, Status};

use super::random::shape_from_input;
use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

/// The state's counter (2 words, the most any algorithm uses) and key (1 word).
const STATE_WORDS: i64 = 3;

fn scalar_input(c: &ShapeCtx, i: usize, what: &str) -> Result<(), Status> {
    match c.input(i) {
        Some(d) if !d.is_empty() => Err(c.error(format!("Shape must be rank 0 but is rank {} for {what}", d.len()))),
        _ => Ok(()),
    }
}

fn read_and_skip_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    scalar_input(c, 1, "alg")?;
    scalar_input(c, 2, "delta")?;
    Ok(vec![Some(vec![STATE_WORDS])])
}

fn skip_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    scalar_input(c, 1, "algorithm")?;
    scalar_input(c, 2, "delta")?;
    Ok(vec![])
}

fn stateful_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    scalar_input(c, 1, "algorithm")?;
    if c.node.op == "StatefulUniformInt" {
        scalar_input(c, 3, "minval")?;
        scalar_input(c, 4, "maxval")?;
    }
    Ok(vec![shape_from_input(c, 2)?])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("RngReadAndSkip")
            .input("resource: resource")
            .input("alg: int32")
            .input("delta: uint64")
            .output("value: int64")
            .stateful()
            .shape_fn(read_and_skip_shape)
            .build(),
    );
    r.add(
        op("RngSkip")
            .input("resource: resource")
            .input("algorithm: int64")
            .input("delta: int64")
            .stateful()
            .shape_fn(skip_shape)
            .build(),
    );
    let base = |name: &str| op(name).input("resource: resource").input("algorithm: int64").input("shape: shape_dtype");
    for (name, dtype) in [
        ("StatefulUniform", "DT_FLOAT"),
        ("StatefulStandardNormalV2", "DT_FLOAT"),
        ("StatefulTruncatedNormal", "DT_FLOAT"),
        ("StatefulUniformFullInt", "DT_UINT64"),
    ] {
        r.add(
            base(name)
                .output("output: dtype")
                .attr(&format!("dtype: type = {dtype}"))
                .attr("shape_dtype: type = DT_INT64")
                .stateful()
                .shape_fn(stateful_shape)
                .build(),
        );
    }
    r.add(
        base("StatefulUniformInt")
            .input("minval: dtype")
            .input("maxval: dtype")
            .output("output: dtype")
            .attr("dtype: type = DT_INT64")
            .attr("shape_dtype: type = DT_INT64")
            .stateful()
            .shape_fn(stateful_shape)
            .build(),
    );
    r.add(
        op("StatefulRandomBinomial")
            .input("resource: resource")
            .input("algorithm: int64")
            .input("shape: S")
            .input("counts: T")
            .input("probs: T")
            .output("output: dtype")
            .attr("S: {int32, int64}")
            .attr("T: {half, float, double, int32, int64} = DT_DOUBLE")
            .attr("dtype: {half, float, double, int32, int64} = DT_INT64")
            .stateful()
            .shape_fn(|c| {
                scalar_input(c, 1, "algorithm")?;
                Ok(vec![shape_from_input(c, 2)?])
            })
            .build(),
    );
    // `tf.random.Generator.from_non_deterministic_state`'s seed: integers from the OS.
    r.add(
        op("NonDeterministicInts")
            .input("shape: shape_dtype")
            .output("output: dtype")
            .attr("dtype: type = DT_INT64")
            .attr("shape_dtype: type = DT_INT64")
            .stateful()
            .shape_fn(|c| Ok(vec![shape_from_input(c, 0)?]))
            .build(),
    );
}

/// `RngReadAndSkip`: the state of the generator variable `resource` (int64 [3]: counter,
/// key) before its counter moves on by `delta` draws; `alg` 1 (Philox) or 3 (auto-select).
pub fn rng_read_and_skip(s: &Scope, resource: Output, alg: Output, delta: Output) -> Output {
    s.op("RngReadAndSkip").inputs([resource, alg, delta]).build().output(0)
}

/// `StatefulUniform`: uniform values in `[0, 1)` of `shape` from the generator variable
/// `resource` (algorithm 1, Philox), whose counter moves on by as many draws.
pub fn stateful_uniform(s: &Scope, resource: Output, algorithm: Output, shape: Output, dtype: DataType) -> Output {
    s.op("StatefulUniform").inputs([resource, algorithm, shape]).attr("dtype", attr::ty(dtype)).build().output(0)
}
