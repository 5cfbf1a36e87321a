//! What TensorFlow's per-element samplers (gamma, Poisson, binomial) share: every output
//! element draws from its own region of the Philox stream (the stream skipped
//! `reserved * index` calls, `index` counting the elements parameter by parameter), takes
//! uniform and normal doubles from one Philox call at a time, last value first (TensorFlow's
//! `UNIFORM` macro and `RandomSampleBuffer`), and computes in f64; the results are then
//! written sample-major (`out[sample * params + param]`) and converted to the output type
//! as TensorFlow converts them.
//!
//! Rejection loops stop after [`MAX_TRIES`] rejections. TensorFlow's loop never ends for the
//! inputs that reach that bound (a NaN Poisson rate, a rate far above the output type's
//! largest value); ferroflow returns NaN there instead of hanging.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::{DataType, Shape, Status, Tensor};
use rayon::prelude::*;

use super::philox::{box_muller_f64, u64_to_f64, Philox};

/// Philox calls TensorFlow reserves per output element of the gamma and Poisson samplers
/// and of the binomial's rejection sampler.
pub(crate) const RESERVED_PER_OUTPUT: u64 = 256;

/// Rejections after which a sampler gives up (returns NaN). TensorFlow accepts a draw with
/// probability above 0.2 wherever its loop ends at all, so this bound is never reached
/// where TensorFlow returns.
pub(crate) const MAX_TRIES: u32 = 1 << 16;

/// Elements above which a sampler fills its output in parallel.
const PAR_MIN: usize = 2048;

/// Two doubles per Philox call, handed out last first.
#[derive(Default)]
pub(crate) struct Buffered {
    vals: [f64; 2],
    left: usize,
}

impl Buffered {
    /// The next uniform double in `[0, 1)` (two per call: TensorFlow's
    /// `UniformDistribution<PhiloxRandom, double>`).
    #[inline]
    pub(crate) fn uniform(&mut self, gen: &mut Philox) -> f64 {
        if self.left == 0 {
            let s = gen.next4();
            self.vals = [u64_to_f64(s[0], s[1]), u64_to_f64(s[2], s[3])];
            self.left = 2;
        }
        self.left -= 1;
        self.vals[self.left]
    }

    /// The next standard normal double (two per call, Box-Muller: TensorFlow's
    /// `NormalDistribution<PhiloxRandom, double>`).
    #[inline]
    pub(crate) fn normal(&mut self, gen: &mut Philox) -> f64 {
        if self.left == 0 {
            let s = gen.next4();
            let (a, b) = box_muller_f64(s[0], s[1], s[2], s[3]);
            self.vals = [a, b];
            self.left = 2;
        }
        self.left -= 1;
        self.vals[self.left]
    }
}

/// The stream of element `index`: `base` skipped `per_output * index` calls.
#[inline]
pub(crate) fn stream_at(base: Philox, per_output: u64, index: usize) -> Philox {
    let mut g = base;
    g.skip(per_output.wrapping_mul(index as u64));
    g
}

/// Draws `groups * per_group` values, element `i` (group `i / per_group`) by `f(i)`, and
/// writes them sample-major: element `g * per_group + s` goes to `s * groups + g`.
pub(crate) fn draw_sample_major(groups: usize, per_group: usize, f: impl Fn(usize) -> f64 + Sync) -> Vec<f64> {
    let n = groups * per_group;
    let drawn: Vec<f64> = if n >= PAR_MIN {
        (0..n).into_par_iter().with_min_len(256).map(&f).collect()
    } else {
        (0..n).map(&f).collect()
    };
    if groups == 1 {
        return drawn;
    }
    let mut out = vec![0f64; n];
    for (g, chunk) in drawn.chunks(per_group.max(1)).enumerate() {
        for (s, &v) in chunk.iter().enumerate() {
            out[s * groups + g] = v;
        }
    }
    out
}

/// The largest finite value of an output type, as a double (TensorFlow's
/// `NumTraits<U>::highest()`).
pub(crate) fn highest(dtype: DataType) -> f64 {
    match dtype {
        DataType::Half => f16::MAX.to_f64(),
        DataType::BFloat16 => bf16::MAX.to_f64(),
        DataType::Float => f32::MAX as f64,
        DataType::Int32 => i32::MAX as f64,
        DataType::Int64 => i64::MAX as f64,
        _ => f64::MAX,
    }
}

/// Eigen's `NumTraits<U>::infinity()` of an output type, as a double: infinity for the
/// floating types, 0 for the integers.
pub(crate) fn infinity(dtype: DataType) -> f64 {
    match dtype {
        DataType::Int32 | DataType::Int64 => 0.0,
        _ => f64::INFINITY,
    }
}

/// A double truncated to i32 as x86's conversion does it: NaN and values out of range give
/// `i32::MIN` (what TensorFlow's `static_cast` yields on x86-64 where it is undefined).
#[inline]
fn to_i32(x: f64) -> i32 {
    if !(-2_147_483_649.0 < x && x < 2_147_483_648.0) {
        i32::MIN
    } else {
        x as i32
    }
}

/// A double truncated to i64, out-of-range values and NaN giving `i64::MIN` (see [`to_i32`]).
#[inline]
fn to_i64(x: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if !(-LIMIT..LIMIT).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// The values as a tensor of `dtype`, converted as TensorFlow converts a double: through
/// float to half and bfloat16 (Eigen's constructors), rounded to float, truncated to
/// integers.
pub(crate) fn to_tensor(dtype: DataType, shape: Shape, v: Vec<f64>) -> Result<Tensor, Status> {
    match dtype {
        DataType::Half => Tensor::new(shape, v.into_iter().map(|x| f16::from_f32(x as f32)).collect::<Vec<_>>()),
        DataType::BFloat16 => Tensor::new(shape, v.into_iter().map(|x| bf16::from_f32(x as f32)).collect::<Vec<_>>()),
        DataType::Float => Tensor::new(shape, v.into_iter().map(|x| x as f32).collect::<Vec<_>>()),
        DataType::Double => Tensor::new(shape, v),
        DataType::Int32 => Tensor::new(shape, v.into_iter().map(to_i32).collect::<Vec<_>>()),
        DataType::Int64 => Tensor::new(shape, v.into_iter().map(to_i64).collect::<Vec<_>>()),
        d => Err(Status::internal(format!("sampler output type {d} is not supported"))),
    }
}

/// Whether `dims` ends with `suffix` (TensorFlow's `TensorShapeUtils::EndsWith`).
pub(crate) fn ends_with(dims: &[usize], suffix: &[usize]) -> bool {
    suffix.len() <= dims.len() && dims[dims.len() - suffix.len()..] == *suffix
}

/// The dtype names a kernel accepts, for its error message.
pub(crate) fn type_list(types: &[DataType]) -> String {
    types.iter().map(|t| t.tf_name()).collect::<Vec<_>>().join(", ")
}

/// `Ok(dtype)` if `dtype` is one of `allowed`, else TensorFlow's InvalidArgument naming
/// the attr and the allowed types.
pub(crate) fn check_type(
    node: &ferroflow_core::proto::NodeDef,
    attr: &str,
    allowed: &[DataType],
) -> Result<DataType, Status> {
    use ferroflow_core::NodeAttrs;
    crate::array::util::type_attr_in(node, attr, allowed, |t| {
        node.node_error(format!("attr '{attr}' is {}, which is not one of {}", t.tf_name(), type_list(allowed)))
    })
}
