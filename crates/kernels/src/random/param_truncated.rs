//! `ParameterizedTruncatedNormal` and `StatelessParameterizedTruncatedNormal`: normal
//! samples of a given mean and standard deviation, truncated to `[minval, maxval]`, drawn as
//! TensorFlow draws them on one CPU shard.
//!
//! Per parameter set (a "batch"), bounds are normalised (`(bound - mean) / stddev`; when the
//! lower bound is -inf or the upper one is below the mean, both are mirrored so the finite or
//! nearer bound comes first), then one of three rejection samplers runs, chosen as
//! TensorFlow chooses: standard normals kept when inside the bounds (when at least 1.3
//! standard deviations of one side lie inside), uniform proposals on the interval accepted
//! with probability `exp((lower² or 0 - z²) / 2)` (narrow intervals), or an exponential
//! proposal shifted to the lower bound (Robert's method, intervals in a tail). Every batch
//! continues the same stream; a stateful node starts from its generator, which then moves
//! `batches * 2000 * (samples per batch + 3) / 4` calls on. TensorFlow splits large outputs
//! across threads, each skipping to its own part of the stream, so only outputs TensorFlow
//! draws in one shard (small ones) equal its values; larger ones follow the same law.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor, TensorType};

use super::distributions::{Distribution, NormalF32, NormalF64, UniformF32, UniformF64};
use super::guarded::GuardedPhilox;
use super::ops::shape_from_tensor;
use super::philox::Philox;
use super::stateless::{key_counter_from_seed, seed_of};
use crate::{KernelRegistry, OpContext, OpKernel};

/// Proposals (uniform or normal) without an acceptance before TensorFlow gives up.
const MAX_ITERATIONS: usize = 1000;

/// The float types of the samplers, with TensorFlow's uniform and normal draws.
trait Real: TensorType + Copy + PartialOrd + std::fmt::Display + Default {
    const RANDN_INSIDE: Self;
    fn c(v: f64) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn is_finite(self) -> bool;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn neg(self) -> Self;
    /// One generator call of uniform `[0, 1)` values (4 floats or 2 doubles).
    fn uniform(gen: &mut Philox, out: &mut [Self; 4]) -> usize;
    /// One generator call of standard normals (4 floats or 2 doubles).
    fn normal(gen: &mut Philox, out: &mut [Self; 4]) -> usize;
}

macro_rules! real {
    ($t:ty, $u:ident, $n:ident) => {
        impl Real for $t {
            const RANDN_INSIDE: $t = 1.3;
            fn c(v: f64) -> $t {
                v as $t
            }
            fn exp(self) -> $t {
                <$t>::exp(self)
            }
            fn ln(self) -> $t {
                <$t>::ln(self)
            }
            fn sqrt(self) -> $t {
                <$t>::sqrt(self)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn add(self, o: $t) -> $t {
                self + o
            }
            fn sub(self, o: $t) -> $t {
                self - o
            }
            fn mul(self, o: $t) -> $t {
                self * o
            }
            fn div(self, o: $t) -> $t {
                self / o
            }
            fn neg(self) -> $t {
                -self
            }
            fn uniform(gen: &mut Philox, out: &mut [$t; 4]) -> usize {
                let k = <$u as Distribution>::GROUP;
                $u.group(gen, &mut out[..k]);
                k
            }
            fn normal(gen: &mut Philox, out: &mut [$t; 4]) -> usize {
                let k = <$n as Distribution>::GROUP;
                $n.group(gen, &mut out[..k]);
                k
            }
        }
    };
}
real!(f32, UniformF32, NormalF32);
real!(f64, UniformF64, NormalF64);

/// One parameter set.
#[derive(Clone, Copy)]
struct Params<T> {
    mean: T,
    stddev: T,
    minval: T,
    maxval: T,
}

/// Draws `count` samples of `p` from `gen`, handing each to `put(i, value)`.
fn sample_batch<T: Real>(
    ctx: &OpContext,
    gen: &mut Philox,
    p: Params<T>,
    count: usize,
    mut put: impl FnMut(usize, T),
) -> Result<(), Status> {
    let Params { mean, mut stddev, mut minval, mut maxval } = p;
    let zero = T::c(0.0);
    if !(stddev > zero && minval < maxval && (minval.is_finite() || maxval.is_finite())) {
        return Err(ctx.error(format!(
            "Invalid parameters: stddev {stddev} must be positive, minval {minval} below maxval {maxval}, and one \
             bound finite"
        )));
    }
    if (!minval.is_finite() && minval < zero) || maxval < mean {
        std::mem::swap(&mut minval, &mut maxval);
        stddev = stddev.neg();
    }
    let lo = minval.sub(mean).div(stddev);
    let hi = maxval.sub(mean).div(stddev);
    let (two, four, half) = (T::c(2.0), T::c(4.0), T::c(0.5));
    let sqrt_factor = lo.mul(lo).add(four).sqrt();
    let cutoff = two.mul(half.add(lo.mul(lo.sub(sqrt_factor)).div(four)).exp()).div(lo.add(sqrt_factor));
    let diff = hi.sub(lo);
    let inside = T::RANDN_INSIDE;
    let (mut n, mut misses) = (0usize, 0usize);
    let mut r = [T::default(); 4];
    let failed = |what: &str| {
        ctx.error_with(Status::internal(format!("TruncatedNormal {what} rejection sampler failed to accept a sample")))
    };
    if (lo < inside.neg() && hi >= zero) || (hi > inside && lo <= zero) {
        while n < count {
            let size = T::normal(gen, &mut r);
            for &v in &r[..size] {
                if v >= lo && v <= hi {
                    put(n, v.mul(stddev).add(mean));
                    n += 1;
                    if n >= count {
                        break;
                    }
                    misses = 0;
                } else {
                    misses += 1;
                    if misses > MAX_ITERATIONS {
                        return Err(failed("randn"));
                    }
                }
            }
        }
    } else if diff < cutoff {
        let plus = if lo < zero { zero } else { lo.mul(lo) };
        let mut u = [T::default(); 4];
        let ok = accept_loop(
            count,
            |batch| {
                let size = T::uniform(gen, &mut r);
                T::uniform(gen, &mut u);
                for i in 0..size {
                    let z = r[i].mul(diff).add(lo);
                    let g = plus.sub(z.mul(z)).div(two);
                    batch[i] = (z, u[i] <= g.exp());
                }
                size
            },
            |k, z| put(k, z.mul(stddev).add(mean)),
        );
        if !ok {
            return Err(failed("uniform"));
        }
    } else {
        let alpha = lo.add(lo.mul(lo).add(four).sqrt()).div(two);
        let ok = accept_loop(
            count,
            |batch| {
                let size = T::uniform(gen, &mut r);
                for (k, i) in (0..size).step_by(2).enumerate() {
                    let z = r[i].ln().neg().div(alpha).add(lo);
                    let x = if lo < alpha { alpha.sub(z) } else { lo.sub(alpha) };
                    let g = x.neg().mul(x).div(two).exp();
                    batch[k] = (z, r[i + 1] <= g && z < hi);
                }
                size.div_ceil(2)
            },
            |k, z| put(k, z.mul(stddev).add(mean)),
        );
        if !ok {
            return Err(failed("exponential distribution"));
        }
    }
    Ok(())
}

/// The rejection loop of the uniform and exponential samplers: `propose` fills a batch with up
/// to four proposals `(z, accepted)` and returns how many; each accepted `z` goes to
/// `put(i, z)` until `count` are taken. False when a proposal is rejected the
/// `MAX_ITERATIONS`-th time in a row.
fn accept_loop<T: Real>(
    count: usize,
    mut propose: impl FnMut(&mut [(T, bool); 4]) -> usize,
    mut put: impl FnMut(usize, T),
) -> bool {
    let (mut n, mut misses) = (0usize, 0usize);
    let mut batch = [(T::default(), false); 4];
    while n < count {
        let size = propose(&mut batch);
        for &(z, accept) in &batch[..size] {
            if !accept {
                if misses + 1 >= MAX_ITERATIONS {
                    return false;
                }
                misses += 1;
                continue;
            }
            put(n, z);
            n += 1;
            if n >= count {
                break;
            }
            misses = 0;
        }
    }
    true
}

/// A float input of the sampler's dtype.
fn param<T: Real>(ctx: &OpContext, i: usize, what: &str) -> Result<(Vec<usize>, Vec<T>), Status> {
    let t = ctx.input(i)?;
    if t.dtype() != T::DTYPE {
        return Err(ctx.error(format!("{what} must be {}, got {}", T::DTYPE, t.dtype())));
    }
    Ok((t.dims().to_vec(), t.as_slice::<T>()?.to_vec()))
}

const NAMES: [&str; 4] = ["means", "stddevs", "minvals", "maxvals"];

struct Stateful {
    dtype: DataType,
    gen: GuardedPhilox,
}

impl Stateful {
    fn run<T: Real>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let shape_t = ctx.input(0)?;
        if shape_t.dims().len() != 1 {
            return Err(ctx.error(format!("Input shape should be a vector, got shape: {:?}", shape_t.dims())));
        }
        if shape_t.dims()[0] == 0 {
            return Err(ctx.error("Shape tensor must not be empty"));
        }
        let shape: Shape = shape_from_tensor(ctx, &shape_t)?;
        let dims = shape.dims().to_vec();
        let total = shape.num_elements();
        let mut batches = dims[0];
        let mut per_batch: usize = dims[1..].iter().product();
        let mut ps = Vec::with_capacity(4);
        for (k, name) in NAMES.iter().enumerate() {
            let (d, v) = param::<T>(ctx, k + 1, name)?;
            if d.len() > 1 {
                return Err(ctx.error(format!("Input {name} should be a scalar or vector, got shape: {d:?}")));
            }
            ps.push((d, v));
        }
        let single = |k: usize| ps[k].0.is_empty() || ps[k].0[0] == 1;
        if single(0) && single(1) && ps[2].0.is_empty() && ps[3].0.is_empty() {
            per_batch = 100;
            batches = total.div_ceil(per_batch);
        } else {
            for (k, name) in NAMES.iter().enumerate() {
                if !(ps[k].0.is_empty() || ps[k].0[0] == 1 || ps[k].0[0] == batches) {
                    return Err(
                        ctx.error(format!("Input {name} should have length 1 or shape[0], got shape: {:?}", ps[k].0))
                    );
                }
            }
        }
        let calls = (batches as u64).wrapping_mul(2 * MAX_ITERATIONS as u64).wrapping_mul(per_batch as u64 + 3) / 4;
        let mut gen = self.gen.reserve128(calls);
        let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        for b in 0..batches {
            let at = |k: usize| ps[k].1[if ps[k].1.len() == 1 { 0 } else { b }];
            let p = Params { mean: at(0), stddev: at(1), minval: at(2), maxval: at(3) };
            let start = b * per_batch;
            let count = ((b + 1) * per_batch).min(total).saturating_sub(start);
            sample_batch(ctx, &mut gen, p, count, |i, v| out[start + i] = v)?;
        }
        ctx.set_output(0, Tensor::new(dims, out)?)
    }
}

/// The broadcast of `shapes` (right-aligned), or `None` when they do not broadcast.
fn broadcast(shapes: &[Vec<usize>]) -> Option<Vec<usize>> {
    let rank = shapes.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[rank - s.len() + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return None;
            }
        }
    }
    Some(out)
}

/// The flat index into a tensor of `shape` of element `flat` of the broadcast `out`.
fn source_index(shape: &[usize], out: &[usize], mut flat: usize) -> usize {
    let (mut idx, mut stride) = (0, 1);
    for k in (0..out.len()).rev() {
        let coord = flat % out[k].max(1);
        flat /= out[k].max(1);
        if let Some(j) = (k + shape.len()).checked_sub(out.len()) {
            if shape[j] != 1 {
                idx += coord * stride;
            }
            stride *= shape[j];
        }
    }
    idx
}

struct Stateless {
    dtype: DataType,
}

impl Stateless {
    fn run<T: Real>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let seed = seed_of(ctx, &ctx.input(1)?)?;
        let mut ps = Vec::with_capacity(4);
        for (k, name) in NAMES.iter().enumerate() {
            ps.push(param::<T>(ctx, k + 2, name)?);
        }
        let shapes: Vec<Vec<usize>> = ps.iter().map(|p| p.0.clone()).collect();
        let Some(bshape) = broadcast(&shapes) else {
            return Err(ctx.error(format!(
                "means, stddevs, minvals, maxvals must have compatible batch dimensions: {:?} vs. {:?} vs. {:?} vs. \
                 {:?}",
                shapes[0], shapes[1], shapes[2], shapes[3]
            )));
        };
        let shape_t = ctx.input(0)?;
        if shape_t.dims().len() != 1 {
            return Err(ctx.error(format!("Input shape should be a vector, got shape: {:?}", shape_t.dims())));
        }
        let dims = shape_from_tensor(ctx, &shape_t)?.dims().to_vec();
        if dims.len() < bshape.len() || dims[dims.len() - bshape.len()..] != bshape[..] {
            return Err(ctx.error(format!(
                "Shape passed in must end with broadcasted shape: {dims:?} does not end with {bshape:?}"
            )));
        }
        let lead = dims.len() - bshape.len();
        let per_batch: usize = dims[..lead].iter().product();
        let batches: usize = dims[lead..].iter().product();
        let mut gen = key_counter_from_seed(seed);
        let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
        if per_batch > 0 {
            for b in 0..batches {
                let at = |k: usize| ps[k].1[source_index(&ps[k].0, &bshape, b)];
                let p = Params { mean: at(0), stddev: at(1), minval: at(2), maxval: at(3) };
                sample_batch(ctx, &mut gen, p, per_batch, |i, v| out[i * batches + b] = v)?;
            }
        }
        ctx.set_output(0, Tensor::new(dims, out)?)
    }
}

/// Both samplers run `run::<T>` for the dtype they were built for (float or double, as
/// `dtype_of` checked).
macro_rules! real_kernels {
    ($($k:ty),*) => {$(
        impl OpKernel for $k {
            fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
                match self.dtype {
                    DataType::Float => self.run::<f32>(ctx),
                    _ => self.run::<f64>(ctx),
                }
            }
        }
    )*};
}
real_kernels!(Stateful, Stateless);

fn dtype_of(n: &NodeDef) -> Result<DataType, Status> {
    let dtype = n.attr_type("dtype")?;
    if dtype != DataType::Float && dtype != DataType::Double {
        return Err(Status::unimplemented(format!(
            "dtype {dtype} is not supported on CPU by ferroflow (float and double are)"
        ))
        .in_node(&n.name, &n.op));
    }
    Ok(dtype)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ParameterizedTruncatedNormal", |n| {
        Ok(Box::new(Stateful { dtype: dtype_of(n)?, gen: GuardedPhilox::from_node(n)? }))
    });
    r.add("StatelessParameterizedTruncatedNormal", |n| Ok(Box::new(Stateless { dtype: dtype_of(n)? })));
}

#[cfg(test)]
#[path = "param_truncated_tests.rs"]
mod tests;
