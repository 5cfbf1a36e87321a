//! The state of `tf.random.Generator`: an int64 resource variable holding a Philox counter
//! (two words, low first) and key (one word), and the ops that read and advance it:
//! `RngReadAndSkip` (what TensorFlow 2's `Generator` emits before each stateless draw) and
//! `RngSkip`. A state serves draws of `n` elements by moving its 128-bit counter `n * 256`
//! Philox calls ahead (the product wraps at 64 bits, as TensorFlow's does).

use ferroflow_core::{DataType, Status, Tensor};

use super::philox::Philox;
use crate::state::handle::{existing_var, handle_input, uninitialized_use};
use crate::{KernelRegistry, OpContext};

/// `RNG_ALG_PHILOX`.
pub const ALG_PHILOX: i64 = 1;
/// `RNG_ALG_THREEFRY`: XLA devices only.
pub const ALG_THREEFRY: i64 = 2;
/// `RNG_ALG_AUTO_SELECT`: Philox on CPU.
pub const ALG_AUTO_SELECT: i64 = 3;
/// Philox calls reserved per output element (TensorFlow's multiplier; do not change).
pub const CALLS_PER_OUTPUT: u64 = 256;
/// int64 words of a Philox state: counter (2) and key (1).
const PHILOX_STATE_SIZE: usize = 3;

/// The generator of a Philox state's first three words.
pub fn philox_of_state(s: &[i64]) -> Philox {
    let (c0, c1, k) = (s[0] as u64, s[1] as u64, s[2] as u64);
    Philox::from_parts([c0 as u32, (c0 >> 32) as u32, c1 as u32, (c1 >> 32) as u32], [k as u32, (k >> 32) as u32])
}

/// Writes `g`'s counter and key to a state's first three words.
fn store(g: &Philox, s: &mut [i64]) {
    let (c, k) = (g.counter(), g.key());
    s[0] = (c[0] as u64 | (c[1] as u64) << 32) as i64;
    s[1] = (c[2] as u64 | (c[3] as u64) << 32) as i64;
    s[2] = (k[0] as u64 | (k[1] as u64) << 32) as i64;
}

/// The algorithms a state op accepts: Philox only (`auto_select` also takes id 3, and
/// ThreeFry is recognised to be refused as TensorFlow refuses it on CPU).
#[derive(Clone, Copy)]
pub struct Algs {
    pub auto_select: bool,
    pub threefry_unimplemented: bool,
}

/// Checks an algorithm id before the state is touched: InvalidArgument for an unknown one.
pub fn check_alg(ctx: &OpContext, alg: i64, algs: Algs) -> Result<(), Status> {
    let known = alg == ALG_PHILOX
        || (algs.auto_select && alg == ALG_AUTO_SELECT)
        || (algs.threefry_unimplemented && alg == ALG_THREEFRY);
    if !known {
        return Err(ctx.error(format!("Unsupported algorithm id: {alg}")));
    }
    Ok(())
}

/// Reads the Philox generator of the state variable of input 0 and advances its counter by
/// `delta * 256` calls, under the variable's lock; returns the generator and the first three
/// state words as they were. The errors are TensorFlow's, in its order: a missing variable
/// is FailedPrecondition; a state not a vector of int64, an algorithm not in `algs` or a
/// state shorter than 3 InvalidArgument; ThreeFry Unimplemented.
pub fn read_and_skip(ctx: &OpContext, alg: i64, algs: Algs, delta: u64) -> Result<(Philox, Vec<i64>), Status> {
    let h = handle_input(ctx, 0)?;
    let var = existing_var(ctx, &h)?;
    let mut g = var.value.write().unwrap_or_else(|e| e.into_inner());
    let Some(t) = g.as_mut() else { return Err(uninitialized_use(ctx, &var)) };
    if t.dtype() != DataType::Int64 {
        return Err(ctx.error(format!("dtype of RNG state variable must be int64, not {}", t.dtype().tf_name())));
    }
    if t.rank() != 1 {
        return Err(ctx.error(format!("RNG state must have one and only one dimension, not {}", t.rank())));
    }
    check_alg(ctx, alg, algs)?;
    if alg == ALG_THREEFRY {
        return Err(ctx.error_with(Status::unimplemented("Non-XLA devices don't support the ThreeFry algorithm.")));
    }
    if t.num_elements() < PHILOX_STATE_SIZE {
        return Err(ctx.error(format!(
            "For the Philox algorithm, the size of state must be at least {PHILOX_STATE_SIZE}; got {}",
            t.num_elements()
        )));
    }
    let s = t.data_mut::<i64>().map_err(|e| ctx.error_with(e))?;
    let before = s[..PHILOX_STATE_SIZE].to_vec();
    let gen = philox_of_state(s);
    let mut next = gen;
    next.skip(delta.wrapping_mul(CALLS_PER_OUTPUT));
    store(&next, s);
    Ok((gen, before))
}

/// A scalar input of exactly `dtype` (TensorFlow's `GetScalar` text otherwise).
pub fn scalar_input(ctx: &OpContext, i: usize, dtype: DataType) -> Result<Tensor, Status> {
    let t = ctx.input(i)?;
    if t.rank() != 0 {
        return Err(ctx.error(format!("input {i} (0-based) must have shape [], not {}", t.shape())));
    }
    if t.dtype() != dtype {
        return Err(ctx.error(format!(
            "dtype of input {i} (0-based) must be {}, not {}",
            dtype.tf_name(),
            t.dtype().tf_name()
        )));
    }
    Ok(t)
}

op_kernel! {
    /// `RngReadAndSkip(resource, alg: int32, delta: uint64) -> int64[3]`: the state before
    /// the skip (counter, then key).
    struct RngReadAndSkip;
    fn compute(&self, ctx) {
        let alg = i64::from(scalar_input(ctx, 1, DataType::Int32)?.scalar_value::<i32>()?);
        let delta = scalar_input(ctx, 2, DataType::UInt64)?.scalar_value::<u64>()?;
        let algs = Algs { auto_select: true, threefry_unimplemented: true };
        // The algorithm is checked before the state here.
        check_alg(ctx, alg, algs)?;
        let (_, before) = read_and_skip(ctx, alg, algs, delta)?;
        ctx.set_output(0, Tensor::vec(before))
    }
}

op_kernel! {
    /// `RngSkip(resource, algorithm: int64, delta: int64)`: the state advanced, nothing read.
    struct RngSkip;
    fn compute(&self, ctx) {
        let alg = scalar_input(ctx, 1, DataType::Int64)?.scalar_value::<i64>()?;
        let delta = scalar_input(ctx, 2, DataType::Int64)?.scalar_value::<i64>()?;
        read_and_skip(ctx, alg, Algs { auto_select: true, threefry_unimplemented: true }, delta as u64).map(|_| ())
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("RngReadAndSkip", |_| Ok(Box::new(RngReadAndSkip)));
    r.add_cheap("RngSkip", |_| Ok(Box::new(RngSkip)));
}
