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

use super::bcast::map_unary;
use super::cast_wide::{f2i32, f2i64, FromVal, ToVal, Val};
use super::common::{kernel_type, typed};
use super::dtypes::CAST_TYPES;
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
const DIRECT_TYPES: &[DataType] =
    &[DataType::Float, DataType::Double, DataType::Int32, DataType::Int64, DataType::UInt8, DataType::Bool];

struct Cast {
    src: DataType,
    dst: DataType,
    truncate: bool,
}

/// Any castable pair, through [`Val`].
fn cast_wide(ctx: &mut OpContext, src: DataType, dst: DataType, truncate: bool) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let vals: Vec<Val> = dispatch!(
        src,
        ctx,
        [
            f32, f64, i32, i64, u8, bool, f16, bf16, i8, i16, u16, u32, u64, C64, C128, QInt8, QUInt8, QInt16, QUInt16,
            QInt32
        ],
        |S| Ok::<_, Status>(map_unary(typed::<S>(ctx, &x)?, S::to_val))
    )?;
    let out = dispatch!(
        dst,
        ctx,
        [
            f32, f64, i32, i64, u8, bool, f16, bf16, i8, i16, u16, u32, u64, C64, C128, QInt8, QUInt8, QInt16, QUInt16,
            QInt32
        ],
        |D| Tensor::new(x.shape().clone(), map_unary(&vals, |v| D::from_val(v, truncate)))
    )?;
    ctx.set_output(0, out)
}

fn cast_run<S, D>(ctx: &mut OpContext) -> Result<(), Status>
where
    S: CastTo<D> + ferroflow_core::TensorType + Sync,
    D: ferroflow_core::TensorType + Copy + Default + Send,
{
    let x = ctx.input(0)?;
    let out = map_unary(typed::<S>(ctx, &x)?, |v: S| v.cast_to());
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

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn cast(x: Tensor, dst: DataType) -> Result<Tensor, Status> {
        let n =
            node("Cast", &[("SrcT", attr::ty(x.dtype())), ("DstT", attr::ty(dst)), ("Truncate", attr::bool(false))]);
        run_kernel(n, vec![x], 1).map(|mut v| v.remove(0))
    }

    #[test]
    fn conversions() {
        let f = Tensor::vec(vec![f32::NAN, 1e10, -1e10, 2.7, -2.7, 300., -1.]);
        let i = cast(f.clone(), DataType::Int32).unwrap();
        assert_eq!(i.as_slice::<i32>().unwrap(), &[i32::MIN, i32::MIN, i32::MIN, 2, -2, 300, -1]);
        let u = cast(f.clone(), DataType::UInt8).unwrap();
        assert_eq!(u.as_slice::<u8>().unwrap(), &[0, 0, 0, 2, 254, 44, 255]);
        let l = cast(Tensor::vec(vec![1e20f64, 3.9]), DataType::Int64).unwrap();
        assert_eq!(l.as_slice::<i64>().unwrap(), &[i64::MIN, 3]);
        let b = cast(Tensor::vec(vec![f32::NAN, 0., -0., 0.1]), DataType::Bool).unwrap();
        assert_eq!(b.as_slice::<bool>().unwrap(), &[true, false, false, true]);
        let w = cast(Tensor::vec(vec![(1i64 << 40) + 5, -(1i64 << 33) - 1]), DataType::Int32).unwrap();
        assert_eq!(w.as_slice::<i32>().unwrap(), &[5, -1]);
        let fl = cast(Tensor::vec(vec![true, false]), DataType::Double).unwrap();
        assert_eq!(fl.as_slice::<f64>().unwrap(), &[1., 0.]);
        let d = cast(Tensor::vec(vec![1e300f64]), DataType::Float).unwrap();
        assert_eq!(d.as_slice::<f32>().unwrap(), &[f32::INFINITY]);
        let same = Tensor::vec(vec![1.5f32]);
        assert!(cast(same.clone(), DataType::Float).unwrap().shares_buffer(&same));
    }

    #[test]
    fn direct_and_wide_paths_agree() {
        let samples = || {
            vec![
                Tensor::vec(vec![f32::NAN, 1e10, -1e10, 2.7, -2.7, 300., -1., 0.0]),
                Tensor::vec(vec![1e300f64, -3.5, 255.9, 256.0, f64::NEG_INFINITY, 0.0]),
                Tensor::vec(vec![i32::MIN, -1, 0, 300, i32::MAX]),
                Tensor::vec(vec![i64::MIN, -1, 0, 1 << 40, i64::MAX]),
                Tensor::vec(vec![0u8, 1, 255]),
                Tensor::vec(vec![true, false]),
            ]
        };
        for x in samples() {
            for &d in DIRECT_TYPES {
                let src = x.dtype();
                let direct = cast(x.clone(), d).unwrap();
                let n = node("Cast", &[("SrcT", attr::ty(src)), ("DstT", attr::ty(d))]);
                let step = crate::testutil::test_step(std::sync::Arc::new(crate::ResourceMgr::new()));
                let mut ctx = OpContext::new(std::sync::Arc::new(n), vec![crate::Value::Tensor(x.clone())], 1, step);
                cast_wide(&mut ctx, src, d, false).unwrap();
                let wide = ctx.take_outputs().unwrap().remove(0).tensor().unwrap();
                assert_eq!(direct.raw_bytes(), wide.raw_bytes(), "{src} -> {d}");
            }
        }
    }

    #[test]
    fn errors() {
        assert_eq!(cast(Tensor::vec(vec![1.0f32]), DataType::String).unwrap_err().code, Code::NotFound);
        let n = node(
            "Cast",
            &[
                ("SrcT", attr::ty(DataType::Int32)),
                ("DstT", attr::ty(DataType::Float)),
                ("Truncate", attr::bool(false)),
            ],
        );
        let e = run_kernel(n, vec![Tensor::vec(vec![1.0f32])], 1).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
    }
}
