//! Stateful random ops: `RandomUniform`, `RandomStandardNormal`, `TruncatedNormal`,
//! `RandomUniformInt`, `RandomShuffle`. With `seed` or `seed2` non-zero the numbers are
//! TensorFlow's own (Philox4x32-10); each run of a node continues its stream.

use ferroflow_core::{attr, DataType, Status};

use crate::op_def::{op, OpDef, OpDefBuilder};
use crate::registry::OpRegistry;
use crate::scope::{OpBuilder, Output, Scope};
use crate::shape_fn::{unchanged, Dims, ShapeCtx};

/// The shape described by a shape-vector input: its value when constant, else only its rank.
pub(crate) fn shape_from_input(c: &ShapeCtx, i: usize) -> Result<Dims, Status> {
    if let Some(t) = c.const_input(i) {
        if t.rank() != 1 {
            return Err(c.error(format!("shape must be a vector, got shape {}", t.shape())));
        }
        let dims: Vec<i64> = t.to_f64_vec()?.into_iter().map(|d| d as i64).collect();
        if let Some(d) = dims.iter().find(|&&d| d < 0) {
            return Err(c.error(format!("Dimension {d} must be >= 0 in shape {dims:?}")));
        }
        return Ok(Some(dims));
    }
    match c.input(i) {
        Some(d) if d.len() != 1 => Err(c.error(format!("Shape must be rank 1 but is rank {}", d.len()))),
        Some(d) if d[0] >= 0 => Ok(Some(vec![-1; d[0] as usize])),
        _ => Ok(None),
    }
}

pub(crate) fn random_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    Ok(vec![shape_from_input(c, 0)?])
}

fn random_int_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    for (i, name) in [(1, "minval"), (2, "maxval")] {
        if let Some(d) = c.input(i) {
            if !d.is_empty() {
                return Err(c.error(format!("Shape must be rank 0 but is rank {} for {name}", d.len())));
            }
        }
    }
    random_shape(c)
}

/// A stateful float sampler with inputs `b` (the first the output's shape, of type `T`): one
/// float output of `dtype`, seeded by the `seed`/`seed2` attrs.
pub(super) fn float_sampler(b: OpDefBuilder) -> OpDef {
    b.output("output: dtype")
        .attr("seed: int = 0")
        .attr("seed2: int = 0")
        .attr("dtype: {half, bfloat16, float, double}")
        .attr("T: {int32, int64}")
        .stateful()
        .shape_fn(random_shape)
        .build()
}

pub(crate) fn register(r: &mut OpRegistry) {
    for name in ["RandomUniform", "RandomStandardNormal", "TruncatedNormal"] {
        r.add(float_sampler(op(name).input("shape: T")));
    }
    r.add(
        op("RandomUniformInt")
            .input("shape: T")
            .input("minval: Tout")
            .input("maxval: Tout")
            .output("output: Tout")
            .attr("seed: int = 0")
            .attr("seed2: int = 0")
            .attr("Tout: {int32, int64}")
            .attr("T: {int32, int64}")
            .stateful()
            .shape_fn(random_int_shape)
            .build(),
    );
    r.add(
        op("RandomShuffle")
            .input("value: T")
            .output("output: T")
            .attr("seed: int = 0")
            .attr("seed2: int = 0")
            .attr("T: type")
            .stateful()
            .shape_fn(unchanged)
            .build(),
    );
}

fn random(s: &Scope, op_name: &str, shape: Output, dtype: DataType, seed: i64, seed2: i64) -> Output {
    seeded(s.op(op_name).input(shape).attr("dtype", attr::ty(dtype)), seed, seed2)
}

/// Builds a random op with its two seeds; its first output.
fn seeded(b: OpBuilder, seed: i64, seed2: i64) -> Output {
    b.attr("seed", attr::int(seed)).attr("seed2", attr::int(seed2)).build().output(0)
}

/// `RandomUniform`: uniform values in `[0, 1)` of the given shape (an int32/int64 vector).
///
/// ```
/// use ferroflow_graph::{ops, Scope, DataType};
/// let s = Scope::new_root();
/// let u = ops::random_uniform(&s, ops::constant(&s, vec![2i32, 3]), DataType::Float, 1, 2);
/// assert_eq!(s.graph().shape_of(&u), Some(vec![2, 3]));
/// ```
pub fn random_uniform(s: &Scope, shape: Output, dtype: DataType, seed: i64, seed2: i64) -> Output {
    random(s, "RandomUniform", shape, dtype, seed, seed2)
}

/// `RandomStandardNormal`: normal values, mean 0, standard deviation 1.
pub fn random_standard_normal(s: &Scope, shape: Output, dtype: DataType, seed: i64, seed2: i64) -> Output {
    random(s, "RandomStandardNormal", shape, dtype, seed, seed2)
}

/// `TruncatedNormal`: standard normal values redrawn until within two standard deviations.
pub fn truncated_normal(s: &Scope, shape: Output, dtype: DataType, seed: i64, seed2: i64) -> Output {
    random(s, "TruncatedNormal", shape, dtype, seed, seed2)
}

/// `RandomUniformInt`: integers in `[minval, maxval)` (scalars of one type, int32/int64).
pub fn random_uniform_int(s: &Scope, shape: Output, minval: Output, maxval: Output, seed: i64, seed2: i64) -> Output {
    seeded(s.op("RandomUniformInt").inputs([shape, minval, maxval]), seed, seed2)
}

/// `RandomShuffle`: `value` with its first dimension randomly permuted.
pub fn random_shuffle(s: &Scope, value: Output, seed: i64, seed2: i64) -> Output {
    seeded(s.op("RandomShuffle").input(value), seed, seed2)
}

#[cfg(test)]
mod tests {
    use ferroflow_core::NodeAttrs;

    use super::*;
    use crate::ops::{constant, placeholder};

    #[test]
    fn shapes_from_constant_or_rank() {
        let s = Scope::new_root();
        let n = truncated_normal(&s, constant(&s, vec![4i64, 5]), DataType::Double, 0, 0);
        assert_eq!(s.graph().shape_of(&n), Some(vec![4, 5]));
        assert_eq!(n.dtype, DataType::Double);
        let p = placeholder(&s, DataType::Int32, Some(&[3]));
        let u = random_standard_normal(&s, p, DataType::Float, 0, 0);
        assert_eq!(s.graph().shape_of(&u), Some(vec![-1, -1, -1]));
        let i = random_uniform_int(&s, constant(&s, vec![7i32]), constant(&s, 0i64), constant(&s, 10i64), 1, 2);
        assert_eq!((i.dtype, s.graph().shape_of(&i)), (DataType::Int64, Some(vec![7])));
        let sh = random_shuffle(&s, constant(&s, vec![1.0f32, 2.0]), 3, 0);
        assert_eq!(s.graph().shape_of(&sh), Some(vec![2]));
        s.status().unwrap();
        let def = s.graph().node(&n.node).unwrap().def;
        assert_eq!((def.attr_int("seed").unwrap(), def.attr_type("T").unwrap()), (0, DataType::Int64));
        random_uniform(&s, constant(&s, vec![2i32, -1]), DataType::Float, 0, 0);
        assert!(s.status().unwrap_err().message.contains("Dimension -1 must be >= 0"));
        let s = Scope::new_root();
        random_uniform(&s, constant(&s, vec![2i32]), DataType::Int32, 0, 0);
        assert!(s.status().is_err(), "int32 is not an allowed dtype");
    }
}
