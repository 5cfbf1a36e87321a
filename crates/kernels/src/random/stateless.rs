//! Stateless random kernels: the same seed gives the same numbers on every run and every
//! task. `StatelessRandomGetKeyCounter`/`GetAlg`/`GetKeyCounterAlg` turn a seed into a Philox
//! key and counter; the `...V2` ops (`StatelessRandomUniformV2`, `StatelessRandomNormalV2`,
//! `StatelessTruncatedNormalV2`, `StatelessRandomUniformIntV2`,
//! `StatelessRandomUniformFullIntV2`) draw from an explicit key and counter, the V1 ops
//! (`StatelessRandomUniform`, `StatelessRandomNormal`, `StatelessTruncatedNormal`,
//! `StatelessRandomUniformInt`, `StatelessRandomUniformFullInt`) from a seed. tf_keras's
//! initializers emit these in graph mode. The numbers are TensorFlow's (Philox4x32-10 with
//! TensorFlow's seed scrambling and its distributions).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor};

use super::distributions::{
    fill, fixed_rate, Distribution, NormalF32, NormalF64, TruncatedF32, TruncatedF64, UniformF32, UniformF64,
    UniformI32, UniformI64,
};
use super::ops::{int_bounds, shape_from_tensor};
use super::philox::Philox;
use crate::{KernelRegistry, OpContext, OpKernel};

/// TensorFlow's only CPU algorithm id for these ops: Philox (`RNG_ALG_PHILOX`).
const ALG_PHILOX: i32 = 1;
/// `RNG_ALG_AUTO_SELECT`: Philox on CPU.
const ALG_AUTO_SELECT: i32 = 3;

/// TensorFlow's seed scrambling (`GenerateKey`): one Philox call with a fixed key on the
/// seed's four 32-bit words gives the stream's key and the upper half of its counter.
pub fn key_counter_from_seed(seed: [u64; 2]) -> Philox {
    let counter = [seed[0] as u32, (seed[0] >> 32) as u32, seed[1] as u32, (seed[1] >> 32) as u32];
    let mix = Philox::from_parts(counter, [0x3ec8_f720, 0x0246_1e29]).next4();
    Philox::from_parts([0, 0, mix[2], mix[3]], [mix[0], mix[1]])
}

/// The two seed words of a `seed` input: a vector of two int32 or int64.
pub(crate) fn seed_of(ctx: &OpContext, t: &Tensor) -> Result<[u64; 2], Status> {
    if t.shape().dims() != [2] {
        return Err(ctx.error(format!("seed must have shape [2], not {}", t.shape())));
    }
    Ok(match t.dtype() {
        DataType::Int32 => {
            let s = t.as_slice::<i32>()?;
            [s[0] as i64 as u64, s[1] as i64 as u64]
        }
        DataType::Int64 => {
            let s = t.as_slice::<i64>()?;
            [s[0] as u64, s[1] as u64]
        }
        d => return Err(ctx.error(format!("seed must be int32 or int64, got {d}"))),
    })
}

/// The generator of a stateless op from its inputs after `shape`: a V2 op's key, counter and
/// algorithm (`v2`) or a V1 op's seed; with the index of the input that follows them.
pub(crate) fn stateless_gen(ctx: &OpContext, v2: bool) -> Result<(Philox, usize), Status> {
    Ok(if v2 {
        (philox_of(ctx, &ctx.input(1)?, &ctx.input(2)?, &ctx.input(3)?)?, 4)
    } else {
        (key_counter_from_seed(seed_of(ctx, &ctx.input(1)?)?), 2)
    })
}

/// The generator of a V2 op's `key` (uint64 [1]), `counter` (uint64 [>= 2]) and `alg` inputs.
pub(crate) fn philox_of(ctx: &OpContext, key: &Tensor, counter: &Tensor, alg: &Tensor) -> Result<Philox, Status> {
    if alg.rank() != 0 || alg.dtype() != DataType::Int32 {
        return Err(ctx.error(format!("alg must be an int32 scalar, got {} {}", alg.dtype(), alg.shape())));
    }
    let a = alg.scalar_value::<i32>()?;
    // 3 is RNG_ALG_AUTO_SELECT (what `tf.random.stateless_*` and tf_keras's initializers
    // send), which is Philox on CPU; 2 (ThreeFry) has no CPU kernel here.
    if a != ALG_PHILOX && a != ALG_AUTO_SELECT {
        return Err(
            ctx.error(format!("Unsupported algorithm id: {a} (Philox, id 1, and auto-select, id 3, run on CPU)"))
        );
    }
    if key.dtype() != DataType::UInt64 || key.shape().dims() != [1] {
        return Err(ctx.error(format!("key must have shape [1] and type uint64, not {} {}", key.dtype(), key.shape())));
    }
    if counter.dtype() != DataType::UInt64 || counter.rank() != 1 || counter.num_elements() < 2 {
        return Err(ctx.error(format!(
            "counter must be a uint64 vector of at least 2 elements (Philox), not {} {}",
            counter.dtype(),
            counter.shape()
        )));
    }
    let k = key.as_slice::<u64>()?[0];
    let c = counter.as_slice::<u64>()?;
    Ok(Philox::from_parts(
        [c[0] as u32, (c[0] >> 32) as u32, c[1] as u32, (c[1] >> 32) as u32],
        [k as u32, (k >> 32) as u32],
    ))
}

op_kernel! {
    /// `StatelessRandomGetKeyCounter` (and `...Alg`, `StatelessRandomGetAlg`).
    struct GetKeyCounter { key_counter: bool, alg: bool }
    fn compute(&self, ctx) {
        let mut next = 0;
        if self.key_counter {
            let seed = seed_of(ctx, &ctx.input(0)?)?;
            let g = key_counter_from_seed(seed);
            let (k, c) = (g.key(), g.counter());
            let key = k[0] as u64 | (k[1] as u64) << 32;
            ctx.set_output(0, Tensor::vec(vec![key]))?;
            let counter = vec![c[0] as u64 | (c[1] as u64) << 32, c[2] as u64 | (c[3] as u64) << 32];
            ctx.set_output(1, Tensor::vec(counter))?;
            next = 2;
        }
        if self.alg {
            ctx.set_output(next, Tensor::scalar(ALG_PHILOX))?;
        }
        Ok(())
    }
}

/// A stateless (or stateful) sampler's distribution.
#[derive(Clone, Copy)]
pub(crate) enum Dist {
    Uniform,
    Normal,
    Truncated,
    UniformInt,
    FullInt,
}

/// One stateless sampling op: V2 (key, counter, alg inputs) or V1 (a seed input).
struct Stateless {
    dist: Dist,
    dtype: DataType,
    v2: bool,
}

fn draw<D: Distribution>(dist: &D, gen: Philox, shape: Shape) -> Result<Tensor, Status>
where
    D::T: Default + ferroflow_core::TensorType,
{
    let mut v = vec![D::T::default(); shape.num_elements()];
    fill(dist, gen, &mut v);
    Tensor::new(shape, v)
}

/// Full-range integers: every bit of the samples (TensorFlow's `UniformFullIntDistribution`).
struct FullI32;
fixed_rate!(FullI32, i32, 4, |self, s, out| {
    for (o, x) in out.iter_mut().zip(s) {
        *o = x as i32;
    }
});
struct FullI64;
fixed_rate!(FullI64, i64, 2, |self, s, out| {
    for (i, o) in out.iter_mut().enumerate() {
        *o = (s[2 * i] as u64 | (s[2 * i + 1] as u64) << 32) as i64;
    }
});
struct FullU32;
fixed_rate!(FullU32, u32, 4, |self, s, out| {
    out.copy_from_slice(&s[..out.len()]);
});
struct FullU64;
fixed_rate!(FullU64, u64, 2, |self, s, out| {
    for (i, o) in out.iter_mut().enumerate() {
        *o = s[2 * i] as u64 | (s[2 * i + 1] as u64) << 32;
    }
});

impl OpKernel for Stateless {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let shape = shape_from_tensor(ctx, &ctx.input(0)?)?;
        let (gen, next) = stateless_gen(ctx, self.v2)?;
        let bounds = match self.dist {
            Dist::UniformInt => Some((ctx.input(next)?, ctx.input(next + 1)?)),
            _ => None,
        };
        let n = shape.num_elements();
        let out = sample(ctx, self.dist, self.dtype, gen, shape, bounds.as_ref().map(|(l, h)| (l, h, n > 0)))?;
        ctx.set_output(0, out)
    }
}

/// `shape` elements of `dist` of type `dtype` drawn from `gen` (TensorFlow's
/// `FillPhiloxRandom`); `bounds` are a uniform int's `minval` and `maxval`, with whether to
/// check `minval < maxval`.
pub(crate) fn sample(
    ctx: &OpContext,
    dist: Dist,
    dtype: DataType,
    gen: Philox,
    shape: Shape,
    bounds: Option<(&Tensor, &Tensor, bool)>,
) -> Result<Tensor, Status> {
    ferroflow_core::check_tensor_alloc(shape.dims(), dtype).map_err(|e| ctx.error_with(e))?;
    Ok(match (dist, dtype) {
        (Dist::Uniform, DataType::Float) => draw(&UniformF32, gen, shape)?,
        (Dist::Uniform, _) => draw(&UniformF64, gen, shape)?,
        (Dist::Normal, DataType::Float) => draw(&NormalF32, gen, shape)?,
        (Dist::Normal, _) => draw(&NormalF64, gen, shape)?,
        (Dist::Truncated, DataType::Float) => draw(&TruncatedF32, gen, shape)?,
        (Dist::Truncated, _) => draw(&TruncatedF64, gen, shape)?,
        (Dist::FullInt, DataType::Int32) => draw(&FullI32, gen, shape)?,
        (Dist::FullInt, DataType::Int64) => draw(&FullI64, gen, shape)?,
        (Dist::FullInt, DataType::UInt32) => draw(&FullU32, gen, shape)?,
        (Dist::FullInt, _) => draw(&FullU64, gen, shape)?,
        (Dist::UniformInt, dt) => {
            let Some((lo, hi, check)) = bounds else { return Err(ctx.error("minval and maxval are missing")) };
            check_bounds(ctx, dt, lo, hi)?;
            match dt {
                DataType::Int32 => {
                    let (l, h) = int_bounds::<i32>(ctx, lo, hi, check)?;
                    draw(&UniformI32 { lo: l, range: (h as u32).wrapping_sub(l as u32).max(1) }, gen, shape)?
                }
                _ => {
                    let (l, h) = int_bounds::<i64>(ctx, lo, hi, check)?;
                    draw(&UniformI64 { lo: l, range: (h as u64).wrapping_sub(l as u64).max(1) }, gen, shape)?
                }
            }
        }
    })
}

/// `minval` and `maxval` must be scalars of the output type.
pub(crate) fn check_bounds(ctx: &OpContext, dt: DataType, lo: &Tensor, hi: &Tensor) -> Result<(), Status> {
    for (t, what) in [(lo, "minval"), (hi, "maxval")] {
        if t.rank() != 0 || t.dtype() != dt {
            return Err(ctx.error(format!("{what} must be a {dt} scalar, got {} {}", t.dtype(), t.shape())));
        }
    }
    Ok(())
}

/// Whether TensorFlow's CPU kernels of `dist` draw `dtype` (of those ferroflow draws).
pub(crate) fn dist_supports(dist: Dist, dtype: DataType) -> bool {
    match dist {
        Dist::Uniform | Dist::Normal | Dist::Truncated => matches!(dtype, DataType::Float | DataType::Double),
        Dist::UniformInt => matches!(dtype, DataType::Int32 | DataType::Int64),
        Dist::FullInt => matches!(dtype, DataType::Int32 | DataType::Int64 | DataType::UInt32 | DataType::UInt64),
    }
}

fn make(n: &NodeDef, dist: Dist, v2: bool) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = n.attr_type("dtype")?;
    if !dist_supports(dist, dtype) {
        return Err(Status::unimplemented(format!("dtype {dtype} is not supported on CPU by ferroflow"))
            .in_node(&n.name, &n.op));
    }
    Ok(Box::new(Stateless { dist, dtype, v2 }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("StatelessRandomGetKeyCounter", |_| Ok(Box::new(GetKeyCounter { key_counter: true, alg: false })));
    r.add_cheap("StatelessRandomGetKeyCounterAlg", |_| Ok(Box::new(GetKeyCounter { key_counter: true, alg: true })));
    r.add_cheap("StatelessRandomGetAlg", |_| Ok(Box::new(GetKeyCounter { key_counter: false, alg: true })));
    r.add("StatelessRandomUniformV2", |n| make(n, Dist::Uniform, true));
    r.add("StatelessRandomNormalV2", |n| make(n, Dist::Normal, true));
    r.add("StatelessTruncatedNormalV2", |n| make(n, Dist::Truncated, true));
    r.add("StatelessRandomUniformIntV2", |n| make(n, Dist::UniformInt, true));
    r.add("StatelessRandomUniformFullIntV2", |n| make(n, Dist::FullInt, true));
    r.add("StatelessRandomUniform", |n| make(n, Dist::Uniform, false));
    r.add("StatelessRandomNormal", |n| make(n, Dist::Normal, false));
    r.add("StatelessTruncatedNormal", |n| make(n, Dist::Truncated, false));
    r.add("StatelessRandomUniformInt", |n| make(n, Dist::UniformInt, false));
    r.add("StatelessRandomUniformFullInt", |n| make(n, Dist::FullInt, false));
}
