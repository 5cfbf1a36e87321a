//! The gamma, Poisson and binomial samplers (TensorFlow's definitions): `RandomGamma`
//! (`tf.random.gamma`) and its gradient helper `RandomGammaGrad`, `RandomPoissonV2`
//! (`tf.random.poisson`) and the deprecated `RandomPoisson`, and the stateless
//! `StatelessRandomGammaV2`/`V3` (`tf.random.stateless_gamma`), `StatelessRandomPoisson`
//! (`tf.random.stateless_poisson`) and `StatelessRandomBinomial`
//! (`tf.random.stateless_binomial`). The stateful ones output `shape + param.shape`; the
//! stateless ones output `shape`, which must end with the parameters' (broadcast) shape.

use ferroflow_core::{attr, DataType, Status};

use super::random::random_shape;
use crate::op_def::{op, OpDef};
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{OpBuilder, Output, Scope};
use crate::shape_fn::{broadcast, Dims, ShapeCtx};

const GAMMA_TYPES: &str = "{half, float, double}";
const POISSON_TYPES: &str = "{half, float, double, int32, int64}";

/// `shape` (input 0) followed by input `param`'s shape.
fn shape_then_param(c: &ShapeCtx, param: usize) -> Result<Vec<Dims>, Status> {
    let shape = random_shape(c)?.remove(0);
    Ok(vec![match (shape, c.input(param)) {
        (Some(mut s), Some(p)) => {
            s.extend(p);
            Some(s)
        }
        _ => None,
    }])
}

fn gamma_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    shape_then_param(c, 1)
}

/// A seed input (input 1) must be a vector of two.
fn seeded_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    if let Some(d) = c.input(1) {
        if d.len() != 1 || (d[0] >= 0 && d[0] != 2) {
            return Err(c.error(format!("seed must have shape [2], not {d:?}")));
        }
    }
    random_shape(c)
}

fn seeded(b: OpBuilder, seed: i64, seed2: i64) -> Output {
    b.attr("seed", attr::int(seed)).attr("seed2", attr::int(seed2)).build().output(0)
}

/// A stateful sampler `name`: inputs `shape: S` and `param`, the output `output`, the
/// `seed`/`seed2` and `S` attrs, then `types`; output shape `shape + param.shape`.
fn stateful_sampler(name: &str, param: &str, output: &str, types: &[String]) -> OpDef {
    let b = op(name).input("shape: S").input(param).output(output);
    let b = b.attr("seed: int = 0").attr("seed2: int = 0").attr("S: {int32, int64}");
    types.iter().fold(b, |b, t| b.attr(t)).stateful().shape_fn(gamma_shape).build()
}

/// A stateless sampler `name`: inputs `shape: T`, `seed: Tseed` and `param`, the output
/// `output: dtype`, the attrs `types` then `T` and `Tseed`; output shape `shape`.
fn stateless_sampler(name: &str, param: &str, types: &[String]) -> OpDef {
    let b = op(name).input("shape: T").input("seed: Tseed").input(param).output("output: dtype");
    let b = types.iter().fold(b, |b, t| b.attr(t));
    b.attr("T: {int32, int64}").attr("Tseed: {int32, int64} = DT_INT64").shape_fn(seeded_shape).build()
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(stateful_sampler("RandomGamma", "alpha: T", "output: T", &[format!("T: {GAMMA_TYPES}")]));
    r.add(
        op("RandomGammaGrad")
            .input("alpha: T")
            .input("sample: T")
            .output("output: T")
            .attr("T: {float, double}")
            .shape_fn(broadcast)
            .build(),
    );
    r.add(stateful_sampler("RandomPoisson", "rate: dtype", "output: dtype", &[format!("dtype: {GAMMA_TYPES}")]));
    let poisson_types = [format!("R: {POISSON_TYPES} = DT_DOUBLE"), format!("dtype: {POISSON_TYPES} = DT_INT64")];
    r.add(stateful_sampler("RandomPoissonV2", "rate: R", "output: dtype", &poisson_types));
    r.add(stateless_sampler("StatelessRandomGammaV2", "alpha: dtype", &[format!("dtype: {GAMMA_TYPES}")]));
    r.add(
        op("StatelessRandomGammaV3")
            .input("shape: shape_dtype")
            .input("key: uint64")
            .input("counter: uint64")
            .input("alg: int32")
            .input("alpha: dtype")
            .output("output: dtype")
            .attr(&format!("dtype: {GAMMA_TYPES}"))
            .attr("shape_dtype: {int32, int64} = DT_INT32")
            .shape_fn(random_shape)
            .build(),
    );
    let lam_types = [format!("Rtype: {POISSON_TYPES}"), format!("dtype: {POISSON_TYPES}")];
    r.add(stateless_sampler("StatelessRandomPoisson", "lam: Rtype", &lam_types));
    r.add(
        op("StatelessRandomBinomial")
            .input("shape: S")
            .input("seed: Tseed")
            .input("counts: T")
            .input("probs: T")
            .output("output: dtype")
            .attr("S: {int32, int64}")
            .attr("Tseed: {int32, int64} = DT_INT64")
            .attr(&format!("T: {POISSON_TYPES} = DT_DOUBLE"))
            .attr(&format!("dtype: {POISSON_TYPES} = DT_INT64"))
            .shape_fn(seeded_shape)
            .build(),
    );
}

/// `RandomGamma`: gamma(alpha, 1) samples of shape `shape + alpha.shape`; TensorFlow's
/// numbers for the same seeds. Differentiable in `alpha` (through `RandomGammaGrad`).
///
/// ```
/// use ferroflow_graph::{ops, Scope, DataType};
/// let s = Scope::new_root();
/// let alpha = ops::constant(&s, vec![0.5f32, 2.0]);
/// let g = ops::random_gamma(&s, ops::constant(&s, vec![3i32]), alpha, 1, 2);
/// assert_eq!(s.graph().shape_of(&g), Some(vec![3, 2]));
/// assert_eq!(g.dtype, DataType::Float);
/// ```
pub fn random_gamma(s: &Scope, shape: Output, alpha: Output, seed: i64, seed2: i64) -> Output {
    seeded(s.op("RandomGamma").input(shape).input(alpha), seed, seed2)
}

/// `RandomGammaGrad`: the derivative of gamma samples `sample` with respect to `alpha`
/// (broadcasting).
pub fn random_gamma_grad(s: &Scope, alpha: Output, sample: Output) -> Output {
    s.op("RandomGammaGrad").input(alpha).input(sample).build().output(0)
}

/// `RandomPoissonV2`: Poisson(rate) samples (`dtype`) of shape `shape + rate.shape`.
pub fn random_poisson_v2(s: &Scope, shape: Output, rate: Output, dtype: DataType, seed: i64, seed2: i64) -> Output {
    seeded(s.op("RandomPoissonV2").input(shape).input(rate).attr("dtype", attr::ty(dtype)), seed, seed2)
}

/// `StatelessRandomGammaV2`: gamma samples of `shape` (ending with `alpha`'s shape), a
/// function of `seed` (two ints) only.
pub fn stateless_random_gamma_v2(s: &Scope, shape: Output, seed: Output, alpha: Output) -> Output {
    s.op("StatelessRandomGammaV2").input(shape).input(seed).input(alpha).build().output(0)
}

/// `StatelessRandomGammaV3`: like [`stateless_random_gamma_v2`] from a Philox key, counter
/// and algorithm (`StatelessRandomGetKeyCounterAlg`'s outputs).
pub fn stateless_random_gamma_v3(
    s: &Scope,
    shape: Output,
    key: Output,
    counter: Output,
    alg: Output,
    alpha: Output,
) -> Output {
    s.op("StatelessRandomGammaV3").inputs([shape, key, counter, alg, alpha]).build().output(0)
}

/// `StatelessRandomPoisson`: Poisson samples (`dtype`) of `shape` (ending with `lam`'s
/// shape), a function of `seed` only.
pub fn stateless_random_poisson(s: &Scope, shape: Output, seed: Output, lam: Output, dtype: DataType) -> Output {
    s.op("StatelessRandomPoisson").inputs([shape, seed, lam]).attr("dtype", attr::ty(dtype)).build().output(0)
}

/// `StatelessRandomBinomial`: binomial(counts, probs) samples (`dtype`) of `shape`, which
/// ends with the broadcast shape of `counts` and `probs`; a function of `seed` only.
pub fn stateless_random_binomial(
    s: &Scope,
    shape: Output,
    seed: Output,
    counts: Output,
    probs: Output,
    dtype: DataType,
) -> Output {
    op_output(s, "StatelessRandomBinomial", [shape, seed, counts, probs], [("dtype", attr::ty(dtype))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{constant, placeholder};

    #[test]
    fn shapes_and_types() {
        let s = Scope::new_root();
        let alpha = constant(&s, ferroflow_core::Tensor::new(vec![2, 2], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap());
        let g = random_gamma(&s, constant(&s, vec![5i64]), alpha.clone(), 1, 2);
        assert_eq!((g.dtype, s.graph().shape_of(&g)), (DataType::Double, Some(vec![5, 2, 2])));
        let d = random_gamma_grad(&s, alpha, g);
        assert_eq!(s.graph().shape_of(&d), Some(vec![5, 2, 2]));
        let p = random_poisson_v2(&s, constant(&s, vec![3i32]), constant(&s, vec![1.5f32]), DataType::Int32, 0, 0);
        assert_eq!((p.dtype, s.graph().shape_of(&p)), (DataType::Int32, Some(vec![3, 1])));
        let seed = constant(&s, vec![1i64, 2]);
        let b = stateless_random_binomial(
            &s,
            constant(&s, vec![4i32, 2]),
            seed.clone(),
            constant(&s, vec![10.0f32, 20.0]),
            constant(&s, vec![0.5f32, 0.25]),
            DataType::Float,
        );
        assert_eq!((b.dtype, s.graph().shape_of(&b)), (DataType::Float, Some(vec![4, 2])));
        let q =
            stateless_random_poisson(&s, constant(&s, vec![6i32]), seed.clone(), constant(&s, 2.0f64), DataType::Int64);
        assert_eq!(s.graph().shape_of(&q), Some(vec![6]));
        let unknown = placeholder(&s, DataType::Int32, Some(&[2]));
        let v2 = stateless_random_gamma_v2(&s, unknown, seed, constant(&s, vec![1.0f32]));
        assert_eq!(s.graph().shape_of(&v2), Some(vec![-1, -1]));
        s.status().unwrap();
    }

    #[test]
    fn a_seed_of_three_is_rejected() {
        let s = Scope::new_root();
        let _ = stateless_random_poisson(
            &s,
            constant(&s, vec![2i32]),
            constant(&s, vec![1i64, 2, 3]),
            constant(&s, 1.0f32),
            DataType::Int32,
        );
        assert!(s.status().unwrap_err().message.contains("seed must have shape [2]"));
    }
}
