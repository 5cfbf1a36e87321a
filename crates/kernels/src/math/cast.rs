//! Cast between float32, float64, int32, int64, uint8 and bool, with TensorFlow's CPU
//! (x86) conversions: float→int truncates toward zero and gives the integer minimum for NaN
//! and out-of-range values; float→uint8 converts through int32 and keeps the low byte;
//! integer narrowing wraps; x→bool is `x != 0` (NaN is true).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};

use super::bcast::map_unary;
use super::common::{dispatch, kernel_type, typed};
use crate::{KernelRegistry, OpContext, OpKernel};

/// One element conversion.
pub trait CastTo<D>: Copy {
    /// Converts with TensorFlow's semantics.
    fn cast_to(self) -> D;
}

/// float → int32 as x86 `cvttsd2si` does it.
#[inline(always)]
fn f2i32(x: f64) -> i32 {
    if x > -2147483649.0 && x < 2147483648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// float → int64 as x86 `cvttsd2si` (64-bit) does it.
#[inline(always)]
fn f2i64(x: f64) -> i64 {
    if (-9223372036854775808.0..9223372036854775808.0).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
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

const CAST_TYPES: &[DataType] =
    &[DataType::Float, DataType::Double, DataType::Int32, DataType::Int64, DataType::UInt8, DataType::Bool];

struct Cast {
    src: DataType,
    dst: DataType,
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
        dispatch!(self.src, ctx, [f32, f64, i32, i64, u8, bool], |S| {
            dispatch!(self.dst, ctx, [f32, f64, i32, i64, u8, bool], |D| cast_run::<S, D>(ctx))
        })
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    // `Truncate` only matters for half/bfloat16 targets, which ferroflow does not have.
    Ok(Box::new(Cast { src: kernel_type(n, "SrcT", CAST_TYPES)?, dst: kernel_type(n, "DstT", CAST_TYPES)? }))
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
