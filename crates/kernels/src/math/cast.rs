//! Cast, with TensorFlow's CPU (x86) conversions: float→int truncates toward zero and gives
//! the integer minimum for NaN and out-of-range values; float→uint8 converts through int32
//! and keeps the low byte; integer narrowing wraps; x→bool is `x != 0` (NaN is true).
//!
//! Pairs of float32, float64, int32, int64, uint8 and bool convert directly (the common,
//! performance-relevant casts); every other pair of numeric, bool and quantized types goes
//! through [`super::cast_wide`]'s lossless intermediate, with the same semantics.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, QInt16, QInt32, QInt8, QUInt16, QUInt8, Status, Tensor, C128, C64};

use super::bcast::{map_into, map_unary};
use super::cast_wide::{f2i32, f2i64, FromVal, ToVal, Val};
use super::common::{kernel_type, typed};
use super::dtypes::CAST_TYPES;
use crate::array::util::scratch_vec;
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

/// One element conversion.
pub trait CastTo<D>: Copy {
    /// Converts with TensorFlow's semantics.
    fn cast_to(self) -> D;
}

macro_rules! cast_as {
    ($($s:ty => [$($d:ty),*]);*) => {$($(
        impl CastTo<$d> for $s {
            #[inline(always)]
            fn cast_to(self) -> $d {
                self as $d
            }
        }
    )*)*};
}
cast_as!(
    f32 => [f32, f64];
    f64 => [f32, f64];
    i32 => [f32, f64, i32, i64, u8];
    i64 => [f32, f64, i32, i64, u8];
    u8 => [f32, f64, i32, i64, u8];
    bool => [i32, i64, u8]
);

macro_rules! cast_with {
    ($($s:ty => $d:ty : |$x:ident| $e:expr);* $(;)?) => {$(
        impl CastTo<$d> for $s {
            #[inline(always)]
            fn cast_to(self) -> $d {
                let $x = self;
                $e
            }
        }
    )*};
}
cast_with!(
    f32 => i32: |x| f2i32(x as f64);
    f64 => i32: |x| f2i32(x);
    f32 => i64: |x| f2i64(x as f64);
    f64 => i64: |x| f2i64(x);
    f32 => u8: |x| f2i32(x as f64) as u8;
    f64 => u8: |x| f2i32(x) as u8;
    bool => f32: |x| x as u8 as f32;
    bool => f64: |x| x as u8 as f64;
    bool => bool: |x| x;
    f32 => bool: |x| x != 0.0;
    f64 => bool: |x| x != 0.0;
    i32 => bool: |x| x != 0;
    i64 => bool: |x| x != 0;
    u8 => bool: |x| x != 0;
);

/// The types with a direct conversion between every pair.
pub const DIRECT_TYPES: &[DataType] =
    &[DataType::Float, DataType::Double, DataType::Int32, DataType::Int64, DataType::UInt8, DataType::Bool];

struct Cast {
    src: DataType,
    dst: DataType,
    truncate: bool,
}

/// Any castable pair, through [`Val`].
pub fn cast_wide(ctx: &mut OpContext, src: DataType, dst: DataType, truncate: bool) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let vals: Vec<Val> = dispatch!(
        src,
        ctx,
        [
            f32, f64, i32, i64, u8, bool, f16, bf16, i8, i16, u16, u32, u64, C64, C128, QInt8, QUInt8, QInt16, QUInt16,
            QInt32
        ],
        |S| {
            let xs = typed::<S>(ctx, &x)?;
            let mut vals = scratch_vec(xs.len(), "widened values")?;
            vals.resize(xs.len(), Val::Int(0));
            map_into(&mut vals, xs, S::to_val);
            Ok::<_, Status>(vals)
        }
    )?;
    let out = dispatch!(
        dst,
        ctx,
        [
            f32, f64, i32, i64, u8, bool, f16, bf16, i8, i16, u16, u32, u64, C64, C128, QInt8, QUInt8, QInt16, QUInt16,
            QInt32
        ],
        |D| Tensor::new(x.shape().clone(), map_unary(x.dims(), &vals, |v| D::from_val(v, truncate))?)
    )?;
    ctx.set_output(0, out)
}

fn cast_run<S, D>(ctx: &mut OpContext) -> Result<(), Status>
where
    S: CastTo<D> + ferroflow_core::TensorType + Sync,
    D: ferroflow_core::TensorType + Copy + Default + Send,
{
    let x = ctx.input(0)?;
    let out = map_unary(x.dims(), typed::<S>(ctx, &x)?, |v: S| v.cast_to())?;
    ctx.set_output(0, Tensor::new(x.shape().clone(), out)?)
}

impl OpKernel for Cast {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        if self.src == self.dst {
            let x = ctx.take_input(0)?;
            if x.dtype() != self.src {
                return Err(ctx.error(format!("input is {} but SrcT is {}", x.dtype(), self.src)));
            }
            return ctx.set_output(0, x);
        }
        if !DIRECT_TYPES.contains(&self.src) || !DIRECT_TYPES.contains(&self.dst) {
            return cast_wide(ctx, self.src, self.dst, self.truncate);
        }
        dispatch!(self.src, ctx, [f32, f64, i32, i64, u8, bool], |S| {
            dispatch!(self.dst, ctx, [f32, f64, i32, i64, u8, bool], |D| cast_run::<S, D>(ctx))
        })
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    // `Truncate` only matters for half/bfloat16 targets.
    let truncate = n.has_attr("Truncate") && n.attr_bool("Truncate")?;
    Ok(Box::new(Cast { src: kernel_type(n, "SrcT", CAST_TYPES)?, dst: kernel_type(n, "DstT", CAST_TYPES)?, truncate }))
}

/// Registers Cast.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Cast", make);
}
