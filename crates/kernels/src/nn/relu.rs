//! Rectifiers and their gradients: `Relu`, `ReluGrad`, `Relu6`, `Relu6Grad`, `Elu`, `EluGrad`.
//! All run in place on the first input's buffer when it is not shared.

use std::ops::Mul;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status};

use super::common::{check_dtype, for_chunks, unsupported_type, zip_in_place};
use crate::array::util::unshared_mut;
use crate::math::elem::Num;
use crate::real::Real;
use crate::{OpContext, OpKernel};

/// Element types of the rectifiers (TensorFlow's realnumbertype, restricted to ours).
trait Elem: Num + Mul<Output = Self> {
    const SIX: Self;
}

macro_rules! elem {
    ($($t:ty: $s:expr);*) => {$(
        impl Elem for $t {
            const SIX: Self = $s;
        }
    )*};
}
elem!(f32: 6.0; f64: 6.0; i32: 6; i64: 6);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Relu,
    Relu6,
    Elu,
}

/// `relu(x) = x < 0 ? 0 : x` (NaN stays NaN, like TensorFlow).
#[inline(always)]
fn relu<T: Elem>(x: T) -> T {
    if x < T::ZERO {
        T::ZERO
    } else {
        x
    }
}

#[inline(always)]
fn relu6<T: Elem>(x: T) -> T {
    if x < T::ZERO {
        T::ZERO
    } else if x > T::SIX {
        T::SIX
    } else {
        x
    }
}

#[inline(always)]
fn elu<T: Real>(x: T) -> T {
    if x < T::ZERO {
        x.exp() - T::ONE
    } else {
        x
    }
}

/// Gradients: `g * (f > 0)`, `g * (0 < f < 6)` (products, so a NaN or infinite gradient
/// propagates like in TensorFlow), and ELU's `o < 0 ? g * (o + 1) : g` from the outputs.
#[inline(always)]
fn relu_grad<T: Elem>(g: T, f: T) -> T {
    g * if f > T::ZERO { T::ONE } else { T::ZERO }
}

#[inline(always)]
fn relu6_grad<T: Elem>(g: T, f: T) -> T {
    g * if f > T::ZERO && f < T::SIX { T::ONE } else { T::ZERO }
}

#[inline(always)]
fn elu_grad<T: Real>(g: T, o: T) -> T {
    if o < T::ZERO {
        g * (o + T::ONE)
    } else {
        g
    }
}

fn types(node: &NodeDef, kind: Kind) -> Result<DataType, Status> {
    let dtype = node.attr_type("T")?;
    let ok = match kind {
        Kind::Elu => matches!(dtype, DataType::Float | DataType::Double),
        _ => matches!(dtype, DataType::Float | DataType::Double | DataType::Int32 | DataType::Int64),
    };
    if !ok {
        return Err(unsupported_type(node, dtype));
    }
    Ok(dtype)
}

struct Activation {
    kind: Kind,
    dtype: DataType,
}

/// Runs `$run::<T>(ctx, f)` with `f` the Relu, Relu6 or Elu function (of the list) of the
/// kernel's kind, for its dtype (Relu and Relu6: float, double, int32, int64; Elu: floats).
macro_rules! by_kind {
    ($k:expr, $ctx:expr, $run:ident, [$relu:ident, $relu6:ident, $elu:ident]) => {
        match ($k.kind, $k.dtype) {
            (Kind::Relu, DataType::Float) => $run::<f32>($ctx, $relu),
            (Kind::Relu, DataType::Double) => $run::<f64>($ctx, $relu),
            (Kind::Relu, DataType::Int32) => $run::<i32>($ctx, $relu),
            (Kind::Relu, DataType::Int64) => $run::<i64>($ctx, $relu),
            (Kind::Relu6, DataType::Float) => $run::<f32>($ctx, $relu6),
            (Kind::Relu6, DataType::Double) => $run::<f64>($ctx, $relu6),
            (Kind::Relu6, DataType::Int32) => $run::<i32>($ctx, $relu6),
            (Kind::Relu6, DataType::Int64) => $run::<i64>($ctx, $relu6),
            (Kind::Elu, DataType::Float) => $run::<f32>($ctx, $elu),
            (Kind::Elu, DataType::Double) => $run::<f64>($ctx, $elu),
            (_, d) => Err(unsupported_type($ctx.node(), d)),
        }
    };
}

// `f` is generic (not a `fn` pointer) so it is inlined into the loop and vectorized.
fn unary<T: Elem>(ctx: &mut OpContext, f: impl Fn(T) -> T + Sync) -> Result<(), Status> {
    let mut x = ctx.take_input(0)?;
    for_chunks(unshared_mut::<T>(&mut x)?, 1, |_, c| c.iter_mut().for_each(|v| *v = f(*v)));
    ctx.set_output(0, x)
}

impl OpKernel for Activation {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        check_dtype(ctx.node(), "features", ctx.input(0)?.dtype(), self.dtype)?;
        by_kind!(self, ctx, unary, [relu, relu6, elu])
    }
}

struct ActivationGrad {
    kind: Kind,
    dtype: DataType,
}

fn binary<T: Elem>(ctx: &mut OpContext, f: impl Fn(T, T) -> T + Sync) -> Result<(), Status> {
    let other = ctx.input(1)?;
    let mut g = ctx.take_input(0)?;
    if g.shape() != other.shape() {
        return Err(ctx.error(format!(
            "inputs must have the same size and shape. Input 0: {} != input 1: {}",
            g.shape(),
            other.shape()
        )));
    }
    zip_in_place(&mut g, other.as_slice::<T>()?, f)?;
    ctx.set_output(0, g)
}

impl OpKernel for ActivationGrad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        for i in 0..2 {
            check_dtype(ctx.node(), &format!("input {i}"), ctx.input(i)?.dtype(), self.dtype)?;
        }
        by_kind!(self, ctx, binary, [relu_grad, relu6_grad, elu_grad])
    }
}

macro_rules! factories {
    ($($name:ident, $grad:ident => $kind:expr);*) => {$(
        pub(crate) fn $name(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
            Ok(Box::new(Activation { kind: $kind, dtype: types(node, $kind)? }))
        }
        pub(crate) fn $grad(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
            Ok(Box::new(ActivationGrad { kind: $kind, dtype: types(node, $kind)? }))
        }
    )*};
}
factories!(relu_factory, relu_grad_factory => Kind::Relu; relu6_factory, relu6_grad_factory => Kind::Relu6;
    elu_factory, elu_grad_factory => Kind::Elu);
