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
    let mut out = vec![false; plan.len()];
    bcast_apply_ref(&plan, typed::<Vec<u8>>(ctx, &a)?, typed::<Vec<u8>>(ctx, &b)?, &mut out, |x, y| (x == y) != ne);
    ctx.set_output(0, Tensor::new(plan.out_shape(), out)?)
}

/// LogicalAnd / LogicalOr.
struct Logical {
    or: bool,
}

impl OpKernel for Logical {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        if self.or {
            binary_to(ctx, |a: bool, b: bool| a | b)
        } else {
            binary_to(ctx, |a: bool, b: bool| a & b)
        }
    }
}

struct LogicalNot;

impl OpKernel for LogicalNot {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.take_input(0)?;
        typed::<bool>(ctx, &x)?;
        let out = if is_unshared(&x) {
            let mut x = x;
            map_inplace(x.data_mut::<bool>()?, |v| !v);
            x
        } else {
            Tensor::new(x.shape().clone(), map_unary(typed::<bool>(ctx, &x)?, |v| !v))?
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

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code, TensorType};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn t<T: TensorType>(shape: &[usize], v: Vec<T>) -> Tensor {
        Tensor::new(shape, v).unwrap()
    }

    fn bools(t: &Tensor) -> Vec<bool> {
        t.as_slice::<bool>().unwrap().to_vec()
    }

    #[test]
    fn comparisons_broadcast() {
        let n = node("Greater", &[("T", attr::ty(DataType::Float))]);
        let out =
            run_kernel(n, vec![t(&[2, 2], vec![1.0f32, 5., f32::NAN, 3.]), t(&[2], vec![2.0f32, 3.])], 1).unwrap();
        assert_eq!(out[0].dims(), &[2, 2]);
        assert_eq!(bools(&out[0]), vec![false, true, false, false]);
        let n = node("LessEqual", &[("T", attr::ty(DataType::UInt8))]);
        let out = run_kernel(n, vec![t(&[3], vec![1u8, 2, 3]), t(&[], vec![2u8])], 1).unwrap();
        assert_eq!(bools(&out[0]), vec![true, true, false]);
    }

    #[test]
    fn equality() {
        let eq = |op: &str, flag: bool, a: Tensor, b: Tensor| {
            let n = node(op, &[("T", attr::ty(a.dtype())), ("incompatible_shape_error", attr::bool(flag))]);
            run_kernel(n, vec![a, b], 1).map(|mut v| v.remove(0))
        };
        let o = eq("Equal", true, t(&[2], vec![true, false]), t(&[2], vec![true, true])).unwrap();
        assert_eq!(bools(&o), vec![true, false]);
        let o = eq("NotEqual", true, t(&[2], vec![b"a".to_vec(), b"b".to_vec()]), t(&[], vec![b"a".to_vec()])).unwrap();
        assert_eq!(bools(&o), vec![false, true]);
        let o = eq("NotEqual", false, t(&[2], vec![1i32, 2]), t(&[3], vec![1i32, 2, 3])).unwrap();
        assert_eq!((o.rank(), bools(&o)), (0, vec![true]));
        let o = eq("Equal", false, t(&[2], vec![1i32, 2]), t(&[3], vec![1i32, 2, 3])).unwrap();
        assert_eq!(bools(&o), vec![false]);
        let e = eq("Equal", true, t(&[2], vec![1i32, 2]), t(&[3], vec![1i32, 2, 3])).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("Incompatible shapes: [2] vs. [3]"));
    }

    #[test]
    fn logic() {
        let n = node("LogicalAnd", &[]);
        let out = run_kernel(n, vec![t(&[2], vec![true, false]), t(&[2, 1], vec![true, false])], 1).unwrap();
        assert_eq!(bools(&out[0]), vec![true, false, false, false]);
        let n = node("LogicalOr", &[]);
        let out = run_kernel(n, vec![t(&[2], vec![true, false]), t(&[], vec![false])], 1).unwrap();
        assert_eq!(bools(&out[0]), vec![true, false]);
        let out = run_kernel(node("LogicalNot", &[]), vec![t(&[2], vec![true, false])], 1).unwrap();
        assert_eq!(bools(&out[0]), vec![false, true]);
        let e = run_kernel(node("LogicalNot", &[]), vec![t(&[1], vec![1.0f32])], 1).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
    }
}
