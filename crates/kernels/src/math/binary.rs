//! Broadcasting arithmetic: Add, AddV2, Sub, Mul, RealDiv, Div, Maximum, Minimum, Pow,
//! FloorDiv, FloorMod, SquaredDifference, DivNoNan. Plus the shared drivers
//! [`binary_same`] / [`binary_to`] used by the comparison kernels.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{Status, Tensor, TensorType, C128, C64};

use super::bcast::{bcast_apply, bcast_apply_inplace_a, bcast_apply_inplace_b, is_unshared, Plan};
use super::common::{is_real_float, kernel_type, typed, ElemKernel};
use super::dtypes::{ADD_V1, FLOATS_AND_COMPLEX, FLOAT_COMPLEX, NUMBER, NUMERIC, REAL, SIGNED};
use super::elem::{Float, Int, Num};
use crate::dispatch::dispatch;
use crate::registry::by_variant;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Validates the right operand before computing (e.g. integer division by zero); returns the
/// TensorFlow error message.
pub(crate) type Check<T> = fn(&[T]) -> Result<(), &'static str>;

/// No validation.
pub(crate) fn no_check<T>(_: &[T]) -> Result<(), &'static str> {
    Ok(())
}

fn nonzero<T: Num>(b: &[T]) -> Result<(), &'static str> {
    if b.contains(&T::ZERO) {
        Err("Integer division by zero")
    } else {
        Ok(())
    }
}

fn nonnegative<T: Num>(b: &[T]) -> Result<(), &'static str> {
    if b.iter().any(|&v| v < T::ZERO) {
        Err("Integers to negative integer powers are not allowed")
    } else {
        Ok(())
    }
}

/// The broadcast plan of two inputs, or TensorFlow's "Incompatible shapes" error.
pub(crate) fn plan2(ctx: &OpContext, a: &Tensor, b: &Tensor) -> Result<Plan<2>, Status> {
    Plan::new([a.dims(), b.dims()])
        .ok_or_else(|| ctx.error(format!("Incompatible shapes: {} vs. {}", a.shape(), b.shape())))
}

/// Broadcasting `T × T → T` kernel body: reuses an unshared input buffer that already has
/// the output's shape.
pub(crate) fn binary_same<T: TensorType + Copy + Default + Send + Sync>(
    ctx: &mut OpContext,
    check: Check<T>,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<(), Status> {
    let a = ctx.take_input(0)?;
    let b = ctx.take_input(1)?;
    let plan = plan2(ctx, &a, &b)?;
    typed::<T>(ctx, &a)?;
    check(typed::<T>(ctx, &b)?).map_err(|m| ctx.error(m))?;
    let out = if a.num_elements() == plan.len() && is_unshared(&a) {
        let mut a = a;
        bcast_apply_inplace_a(&plan, a.data_mut::<T>()?, typed::<T>(ctx, &b)?, f);
        a.reshape(plan.out_shape())?
    } else if b.num_elements() == plan.len() && is_unshared(&b) {
        let mut b = b;
        bcast_apply_inplace_b(&plan, typed::<T>(ctx, &a)?, b.data_mut::<T>()?, f);
        b.reshape(plan.out_shape())?
    } else {
        let mut out = ferroflow_core::alloc::zeroed::<T>(plan.out_shape())?;
        bcast_apply(&plan, typed::<T>(ctx, &a)?, typed::<T>(ctx, &b)?, &mut out, f);
        Tensor::new(plan.out_shape(), out)?
    };
    ctx.set_output(0, out)
}

/// Broadcasting `T × T → O` kernel body (comparisons).
pub(crate) fn binary_to<T, O>(ctx: &mut OpContext, f: impl Fn(T, T) -> O + Sync) -> Result<(), Status>
where
    T: TensorType + Copy,
    O: TensorType + Copy + Default,
{
    let a = ctx.input(0)?;
    let b = ctx.input(1)?;
    let plan = plan2(ctx, &a, &b)?;
    let mut out = ferroflow_core::alloc::zeroed::<O>(plan.out_shape())?;
    bcast_apply(&plan, typed::<T>(ctx, &a)?, typed::<T>(ctx, &b)?, &mut out, f);
    ctx.set_output(0, Tensor::new(plan.out_shape(), out)?)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Arith {
    Add,
    Sub,
    Mul,
    RealDiv,
    Div,
    Maximum,
    Minimum,
    Pow,
    FloorDiv,
    FloorMod,
    SquaredDifference,
    DivNoNan,
}

fn floor_div_int<T: Int>(a: T, b: T) -> T {
    let q = a.div(b);
    if a.rem(b) != T::ZERO && (a.is_negative() != b.is_negative()) {
        q.sub(T::ONE)
    } else {
        q
    }
}

fn floor_mod<T: Num>(a: T, b: T) -> T {
    let r = a.rem(b);
    if r != T::ZERO && ((b < T::ZERO) != (r < T::ZERO)) {
        r.add(b)
    } else {
        r
    }
}

fn squared_difference<T: Num>(a: T, b: T) -> T {
    let d = a.sub(b);
    d.mul(d)
}

fn div_no_nan<T: Float>(a: T, b: T) -> T {
    if b == T::ZERO {
        T::ZERO
    } else {
        a / b
    }
}

impl ElemKernel<Arith> {
    fn make(n: &NodeDef, op: Arith) -> Result<Box<dyn OpKernel>, Status> {
        let allowed = match op {
            // TensorFlow's CPU registrations.
            Arith::Add if n.op == "Add" => ADD_V1,
            Arith::Add | Arith::Sub | Arith::Mul | Arith::Div => NUMBER,
            Arith::Maximum | Arith::Minimum => REAL,
            Arith::RealDiv => FLOAT_COMPLEX,
            // Not extended to the narrow types yet.
            Arith::DivNoNan => FLOATS_AND_COMPLEX,
            Arith::Pow | Arith::SquaredDifference => SIGNED,
            Arith::FloorDiv | Arith::FloorMod => NUMERIC,
        };
        Ok(Box::new(ElemKernel { op, ty: kernel_type(n, "T", allowed)? }))
    }

    /// complex64/complex128 (Add, Sub, Mul, Div, RealDiv, DivNoNan).
    fn compute_complex(&self, ctx: &mut OpContext) -> Result<(), Status> {
        dispatch!(self.ty, ctx, [C64, C128], |T| match self.op {
            Arith::Add => binary_same::<T>(ctx, no_check, |a: T, b: T| a + b),
            Arith::Sub => binary_same::<T>(ctx, no_check, |a: T, b: T| a - b),
            Arith::Mul => binary_same::<T>(ctx, no_check, |a: T, b: T| a * b),
            Arith::RealDiv | Arith::Div => binary_same::<T>(ctx, no_check, |a: T, b: T| a / b),
            Arith::DivNoNan => binary_same::<T>(ctx, no_check, |a: T, b: T| if b == T::default() { b } else { a / b }),
            op => Err(ctx.error(format!("{op:?} is not defined for {}", self.ty))),
        })
    }
}

impl OpKernel for ElemKernel<Arith> {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let ty = self.ty;
        if ty.is_complex() {
            return self.compute_complex(ctx);
        }
        let float = is_real_float(ty);
        match self.op {
            Arith::Add => dispatch!(ty, ctx, [f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64], |T| {
                binary_same::<T>(ctx, no_check, T::add)
            }),
            Arith::Sub => dispatch!(ty, ctx, [f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64], |T| {
                binary_same::<T>(ctx, no_check, T::sub)
            }),
            Arith::Mul => dispatch!(ty, ctx, [f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64], |T| {
                binary_same::<T>(ctx, no_check, T::mul)
            }),
            Arith::RealDiv | Arith::Div if float => {
                dispatch!(ty, ctx, [f32, f64, f16, bf16], |T| binary_same::<T>(ctx, no_check, T::div))
            }
            Arith::RealDiv => Err(ctx.error(format!("RealDiv is not defined for {ty}"))),
            Arith::Div => dispatch!(ty, ctx, [i32, i64, u8, i8, i16, u16, u32, u64], |T| {
                binary_same::<T>(ctx, nonzero::<T>, T::div)
            }),
            Arith::Maximum => dispatch!(ty, ctx, [f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64], |T| {
                binary_same::<T>(ctx, no_check, T::tf_max)
            }),
            Arith::Minimum => dispatch!(ty, ctx, [f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64], |T| {
                binary_same::<T>(ctx, no_check, T::tf_min)
            }),
            Arith::Pow if float => dispatch!(ty, ctx, [f32, f64], |T| binary_same::<T>(ctx, no_check, T::powf)),
            Arith::Pow => dispatch!(ty, ctx, [i32, i64], |T| binary_same::<T>(ctx, nonnegative::<T>, T::ipow)),
            Arith::FloorDiv if float => {
                dispatch!(ty, ctx, [f32, f64], |T| binary_same::<T>(ctx, no_check, |a: T, b: T| (a / b).floor()))
            }
            Arith::FloorDiv => {
                dispatch!(ty, ctx, [i32, i64, u8], |T| binary_same::<T>(ctx, nonzero::<T>, floor_div_int::<T>))
            }
            Arith::FloorMod if float => {
                dispatch!(ty, ctx, [f32, f64], |T| binary_same::<T>(ctx, no_check, floor_mod::<T>))
            }
            Arith::FloorMod => {
                dispatch!(ty, ctx, [i32, i64, u8], |T| binary_same::<T>(ctx, nonzero::<T>, floor_mod::<T>))
            }
            Arith::SquaredDifference => {
                dispatch!(ty, ctx, [f32, f64, i32, i64], |T| binary_same::<T>(ctx, no_check, squared_difference::<T>))
            }
            Arith::DivNoNan => dispatch!(ty, ctx, [f32, f64], |T| binary_same::<T>(ctx, no_check, div_no_nan::<T>)),
        }
    }
}

/// Registers the arithmetic kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    by_variant! { r, ElemKernel::<Arith>::make, Arith "" [
        Add, Sub, Mul, RealDiv, Div, Maximum, Minimum, Pow, FloorDiv, FloorMod, SquaredDifference,
        DivNoNan
    ] "AddV2" => Add }
}
