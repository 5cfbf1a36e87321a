//! Comparisons (Greater, GreaterEqual, Less, LessEqual, Equal, NotEqual) and logic
//! (LogicalAnd, LogicalOr, LogicalNot), with broadcasting.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, QInt16, QInt32, QInt8, QUInt16, QUInt8, Status, Tensor, C128, C64};

use super::bcast::{bcast_apply_ref, is_unshared, map_inplace, map_unary, Plan};
use super::binary::{binary_to, plan2};
use super::common::{kernel_type, typed};
use super::dtypes::{EQ_TYPES, REAL};
use crate::dispatch::dispatch;
use crate::registry::by_variant;
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cmp {
    Greater,
    GreaterEqual,
    Less,
    LessEqual,
    Equal,
    NotEqual,
}

struct CmpKernel {
    op: Cmp,
    ty: DataType,
    /// Equal/NotEqual: whether non-broadcastable shapes are an error (else a scalar result).
    incompatible_shape_error: bool,
}

impl CmpKernel {
    fn make(n: &NodeDef, op: Cmp) -> Result<Box<dyn OpKernel>, Status> {
        let eq = matches!(op, Cmp::Equal | Cmp::NotEqual);
        let ty = kernel_type(n, "T", if eq { EQ_TYPES } else { REAL })?;
        let incompatible_shape_error =
            if eq && n.has_attr("incompatible_shape_error") { n.attr_bool("incompatible_shape_error")? } else { true };
        Ok(Box::new(CmpKernel { op, ty, incompatible_shape_error }))
    }
}

impl OpKernel for CmpKernel {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let ty = self.ty;
        match self.op {
            Cmp::Greater => dispatch!(ty, ctx, [f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64], |T| {
                binary_to(ctx, |a: T, b: T| a > b)
            }),
            Cmp::GreaterEqual => dispatch!(ty, ctx, [f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64], |T| {
                binary_to(ctx, |a: T, b: T| a >= b)
            }),
            Cmp::Less => dispatch!(ty, ctx, [f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64], |T| {
                binary_to(ctx, |a: T, b: T| a < b)
            }),
            Cmp::LessEqual => dispatch!(ty, ctx, [f32, f64, i32, i64, u8, f16, bf16, i8, i16, u16, u32, u64], |T| {
                binary_to(ctx, |a: T, b: T| a <= b)
            }),
            Cmp::Equal | Cmp::NotEqual => {
                let ne = self.op == Cmp::NotEqual;
                if !self.incompatible_shape_error {
                    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
                    if Plan::new([a.dims(), b.dims()]).is_none() {
                        // TensorFlow answers a scalar: "not equal" everywhere.
                        return ctx.set_output(0, Tensor::scalar(ne));
                    }
                }
                if ty == DataType::String {
                    return equal_strings(ctx, ne);
                }
                if ne {
                    dispatch!(
                        ty,
                        ctx,
                        [
                            f32, f64, i32, i64, u8, bool, f16, bf16, i8, i16, u16, u32, u64, C64, C128, QInt8, QUInt8,
                            QInt16, QUInt16, QInt32
                        ],
                        |T| binary_to(ctx, |a: T, b: T| a != b)
                    )
                } else {
                    dispatch!(
                        ty,
                        ctx,
                        [
                            f32, f64, i32, i64, u8, bool, f16, bf16, i8, i16, u16, u32, u64, C64, C128, QInt8, QUInt8,
                            QInt16, QUInt16, QInt32
                        ],
                        |T| binary_to(ctx, |a: T, b: T| a == b)
                    )
                }
            }
        }
    }
}

fn equal_strings(ctx: &mut OpContext, ne: bool) -> Result<(), Status> {
    let (a, b) = (ctx.input(0)?, ctx.input(1)?);
    let plan = plan2(ctx, &a, &b)?;
    let mut out = ferroflow_core::alloc::zeroed::<bool>(plan.out_shape())?;
    bcast_apply_ref(&plan, typed::<Vec<u8>>(ctx, &a)?, typed::<Vec<u8>>(ctx, &b)?, &mut out, |x, y| (x == y) != ne);
    ctx.set_output(0, Tensor::new(plan.out_shape(), out)?)
}

op_kernel! {
    /// LogicalAnd / LogicalOr.
    struct Logical { or: bool }
    fn compute(&self, ctx) {
        if self.or {
            binary_to(ctx, |a: bool, b: bool| a | b)
        } else {
            binary_to(ctx, |a: bool, b: bool| a & b)
        }
    }
}

op_kernel! {
    struct LogicalNot;
    fn compute(&self, ctx) {
        let x = ctx.take_input(0)?;
        typed::<bool>(ctx, &x)?;
        let out = if is_unshared(&x) {
            let mut x = x;
            map_inplace(x.data_mut::<bool>()?, |v| !v);
            x
        } else {
            Tensor::new(x.shape().clone(), map_unary(x.dims(), typed::<bool>(ctx, &x)?, |v| !v)?)?
        };
        ctx.set_output(0, out)
    }
}

/// Registers the comparison and logic kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    by_variant! { r, CmpKernel::make, Cmp "" [Greater, GreaterEqual, Less, LessEqual, Equal, NotEqual] }
    r.add("LogicalAnd", |_| Ok(Box::new(Logical { or: false })));
    r.add("LogicalOr", |_| Ok(Box::new(Logical { or: true })));
    r.add("LogicalNot", |_| Ok(Box::new(LogicalNot)));
}
