//! `StatelessRandomBinomial` (`tf.random.stateless_binomial`) and `StatefulRandomBinomial`
//! (`tf.random.Generator.binomial`): binomial(counts, probs)
//! samples of `shape`, which must end with the broadcast shape of `counts` and `probs`; the
//! leading dimensions are the samples of each (count, prob) pair.
//!
//! TensorFlow's numbers: the success probability `p` is `probs` or, above 0.5, `1 - probs`
//! (the result then `count - k`); where `count * p < 10` (computed in the parameters' type)
//! the sample is the number of geometric(p) gaps that fit in `count` (inversion, each
//! element's stream 42 Philox calls apart), else Hörmann's BTRS transformed rejection
//! ("The generation of binomial random variates", 1993; 256 calls apart) with Stirling
//! tails for the log-factorials. `count <= 0` or `p <= 0` give 0, `p >= 1` gives `count`, a
//! NaN `p` gives NaN. Uniform doubles as in `rejection`.

use ferroflow_core::half::f16;
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::ops::shape_from_tensor;
use super::philox::Philox;
use super::rejection::{
    check_type, draw_sample_major, ends_with, stream_at, to_tensor, type_list, Buffered, MAX_TRIES, RESERVED_PER_OUTPUT,
};
use super::rng_state::{read_and_skip, Algs};
use super::stateless::{key_counter_from_seed, seed_of};
use crate::math::bcast::broadcast_shape;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Philox calls between the streams of two elements sampled by inversion.
const INVERSION_PER_OUTPUT: u64 = 42;
/// Types of `counts` and `probs`.
const PARAM_TYPES: [DataType; 3] = [DataType::Half, DataType::Float, DataType::Double];
/// Output types.
const OUT_TYPES: [DataType; 5] = [DataType::Half, DataType::Float, DataType::Double, DataType::Int32, DataType::Int64];

/// Binomial inversion: how many geometric(prob) gaps fit in `count`.
fn inversion(count: f64, prob: f64, gen: &mut Philox) -> f64 {
    if count.is_nan() {
        // TensorFlow's loop never ends.
        return f64::NAN;
    }
    let mut uniforms = Buffered::default();
    let log_q = (-prob).ln_1p();
    let (mut sum, mut n) = (0.0, 0.0);
    for _ in 0..MAX_TRIES {
        sum += (uniforms.uniform(gen).ln() / log_q).ceil();
        if sum > count {
            return n;
        }
        n += 1.0;
    }
    f64::NAN
}

/// `ln k! - (k + 1/2) ln(k + 1) + (k + 1) - ln sqrt(2 pi)`: the tail of Stirling's series.
fn stirling_tail(k: f64) -> f64 {
    const SMALL: [f64; 10] = [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.0104112652619720,
        0.00925546218271273,
        0.00833056343336287,
    ];
    if k <= 9.0 {
        // `k` is a whole number in [0, 9] here (a NaN `k` never reaches this).
        return SMALL[k.max(0.0) as usize];
    }
    let kp1sq = (k + 1.0) * (k + 1.0);
    (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / 1260.0 / kp1sq) / kp1sq) / (k + 1.0)
}

/// Hörmann's BTRS (for `count * prob >= 10`, `prob <= 0.5`).
fn btrs(count: f64, prob: f64, gen: &mut Philox) -> f64 {
    let stddev = (count * prob * (1.0 - prob)).sqrt();
    let b = 1.15 + 2.53 * stddev;
    let a = -0.0873 + 0.0248 * b + 0.01 * prob;
    let c = count * prob + 0.5;
    let v_r = 0.92 - 4.2 / b;
    let r = prob / (1.0 - prob);
    let alpha = (2.83 + 5.1 / b) * stddev;
    let m = ((count + 1.0) * prob).floor();
    let mut uniforms = Buffered::default();
    for _ in 0..MAX_TRIES {
        let u = uniforms.uniform(gen) - 0.5;
        let v = uniforms.uniform(gen);
        let us = 0.5 - u.abs();
        let k = ((2.0 * a / us + b) * u + c).floor();
        if us >= 0.07 && v <= v_r {
            return k;
        }
        if k < 0.0 || k > count {
            continue;
        }
        let v = (v * alpha / (a / (us * us) + b)).ln();
        let bound = (m + 0.5) * ((m + 1.0) / (r * (count - m + 1.0))).ln()
            + (count + 1.0) * ((count - m + 1.0) / (count - k + 1.0)).ln()
            + (k + 0.5) * (r * (count - k + 1.0) / (k + 1.0)).ln()
            + stirling_tail(m)
            + stirling_tail(count - m)
            - stirling_tail(k)
            - stirling_tail(count - k);
        if v <= bound {
            return k;
        }
    }
    f64::NAN
}

/// Rounds to the parameters' type: TensorFlow compares `count * prob` and computes
/// `1 - prob` in it (half arithmetic rounds float results to half).
fn round_to(t: DataType, x: f64) -> f64 {
    match t {
        DataType::Half => f16::from_f32(x as f32).to_f64(),
        DataType::Float => x as f32 as f64,
        _ => x,
    }
}

/// One sample for `count` and `prob` (values of type `t`); `index` is the element's position
/// in parameter-major order.
fn binomial_sample(count: f64, prob: f64, t: DataType, base: Philox, index: usize) -> f64 {
    if count <= 0.0 || prob <= 0.0 {
        return 0.0;
    }
    if prob >= 1.0 {
        return count;
    }
    if prob.is_nan() {
        return f64::NAN;
    }
    let (p, flip) = if prob <= 0.5 { (prob, false) } else { (round_to(t, 1.0 - prob), true) };
    let k = if round_to(t, count * p) >= 10.0 {
        btrs(count, p, &mut stream_at(base, RESERVED_PER_OUTPUT, index))
    } else {
        inversion(count, p, &mut stream_at(base, INVERSION_PER_OUTPUT, index))
    };
    if flip {
        count - k
    } else {
        k
    }
}

/// For each element of the broadcast shape `out`, the flat index it reads of an operand of
/// shape `dims` (NumPy broadcasting).
fn broadcast_index(dims: &[usize], out: &[usize]) -> Vec<usize> {
    let n: usize = out.iter().product();
    let lead = out.len() - dims.len();
    let mut strides = vec![0usize; out.len()];
    let mut s = 1;
    for (i, &d) in dims.iter().enumerate().rev() {
        strides[lead + i] = if d == 1 { 0 } else { s };
        s *= d;
    }
    (0..n)
        .map(|mut flat| {
            let mut idx = 0;
            for (axis, &d) in out.iter().enumerate().rev() {
                idx += (flat % d) * strides[axis];
                flat /= d;
            }
            idx
        })
        .collect()
}

struct StatelessBinomial {
    t: DataType,
    out: DataType,
}

/// How a binomial op's generator is found once the output is planned: from a seed, or from
/// a state variable it advances (given the batches and the samples per batch).
type GenOf<'a> = &'a dyn Fn(&OpContext, usize, usize) -> Result<Philox, Status>;

/// Checks `counts` and `probs` (inputs `first` and `first + 1`) against the `shape` input
/// and draws the samples of the generator `gen_of` gives (TensorFlow's order of checks;
/// a stateful op's state moves even for an empty output).
fn binomial_op(
    ctx: &mut OpContext,
    t: DataType,
    out: DataType,
    shape_at: usize,
    first: usize,
    gen_of: GenOf<'_>,
) -> Result<(), Status> {
    let (counts, probs) = (ctx.input(first)?, ctx.input(first + 1)?);
    for (x, what) in [(&counts, "counts"), (&probs, "probs")] {
        if x.dtype() != t {
            return Err(ctx.error(format!("{what} must be {}, got {}", t.tf_name(), x.dtype().tf_name())));
        }
    }
    let bcast = broadcast_shape(counts.dims(), probs.dims()).ok_or_else(|| {
        ctx.error(format!(
            "counts and probs must have compatible batch dimensions: {} vs. {}",
            counts.shape(),
            probs.shape()
        ))
    })?;
    let shape_t = ctx.input(shape_at)?;
    if shape_t.rank() != 1 {
        return Err(ctx.error(format!("Input shape should be a vector, got shape: {}", shape_t.shape())));
    }
    let shape = shape_from_tensor(ctx, &shape_t)?;
    if !ends_with(shape.dims(), &bcast) {
        return Err(ctx.error(format!(
            "Shape passed in must end with broadcasted shape: shape {} does not end with [{}]",
            shape,
            bcast.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",")
        )));
    }
    ferroflow_core::check_tensor_alloc(shape.dims(), out).map_err(|e| ctx.error_with(e))?;
    let batches: usize = bcast.iter().product();
    let per_batch = shape.num_elements().checked_div(batches).unwrap_or(0);
    let base = gen_of(ctx, batches, per_batch)?;
    if shape.num_elements() == 0 {
        return ctx.set_output(0, Tensor::zeros(out, shape)?);
    }
    let (cv, pv) = (counts.to_f64_vec()?, probs.to_f64_vec()?);
    let (ci, pi) = (broadcast_index(counts.dims(), &bcast), broadcast_index(probs.dims(), &bcast));
    let v = draw_sample_major(batches, per_batch, |i| {
        let b = i / per_batch;
        binomial_sample(cv[ci[b]], pv[pi[b]], t, base, i)
    });
    ctx.set_output(0, to_tensor(out, shape, v)?)
}

impl OpKernel for StatelessBinomial {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let seed = seed_of(ctx, &ctx.input(1)?)?;
        binomial_op(ctx, self.t, self.out, 0, 2, &|_, _, _| Ok(key_counter_from_seed(seed)))
    }
}

op_kernel! {
    /// `StatefulRandomBinomial` (`tf.random.Generator.binomial`): the samples of the Philox
    /// state of input 0, whose counter moves `256 * (batches * 200 * (per_batch + 3) / 4)`
    /// calls ahead (TensorFlow's reservation).
    struct StatefulBinomial { t: DataType, out: DataType }
    fn compute(&self, ctx) {
        let alg_t = ctx.input(1)?;
        if alg_t.rank() != 0 || alg_t.dtype() != DataType::Int64 {
            return Err(ctx.error(format!(
                "algorithm must be an int64 scalar, not {} {}",
                alg_t.dtype(),
                alg_t.shape()
            )));
        }
        let alg = alg_t.scalar_value::<i64>()?;
        binomial_op(ctx, self.t, self.out, 2, 3, &|ctx, batches, per_batch| {
            let reserve = (batches as u64).wrapping_mul(200).wrapping_mul(per_batch as u64 + 3) / 4;
            Ok(read_and_skip(ctx, alg, Algs { auto_select: false, threefry_unimplemented: false }, reserve)?.0)
        })
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let t = n.attr_type("T")?;
    if matches!(t, DataType::Int32 | DataType::Int64) {
        // The op allows integer parameters, but TensorFlow registers no kernel for them.
        return Err(Status::not_found(format!(
            "no CPU kernel for T={} (counts and probs must be {})",
            t.tf_name(),
            type_list(&PARAM_TYPES)
        ))
        .in_node(&n.name, &n.op));
    }
    let (t, out) = (check_type(n, "T", &PARAM_TYPES)?, check_type(n, "dtype", &OUT_TYPES)?);
    Ok(if n.op == "StatefulRandomBinomial" {
        Box::new(StatefulBinomial { t, out })
    } else {
        Box::new(StatelessBinomial { t, out })
    })
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StatelessRandomBinomial", make);
    r.add("StatefulRandomBinomial", make);
}
