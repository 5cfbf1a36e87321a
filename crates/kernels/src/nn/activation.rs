//! Smooth and leaky activations and their gradient ops: `Softplus`, `SoftplusGrad`,
//! `Softsign`, `SoftsignGrad`, `Selu`, `SeluGrad`, `LeakyRelu`, `LeakyReluGrad` with
//! TensorFlow's formulas (Softplus's cut-offs at `ln(ε) + 2`, SELU's constants). float and
//! double run natively; half and bfloat16 compute in float32 and round once. Every kernel
//! overwrites its first input's buffer when it is not shared.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, TensorType};

use super::common::{for_chunks, zip_in_place};
use crate::array::util::unshared_mut;
use crate::math::elem::Float;
use crate::{OpContext, OpKernel};

/// SELU's scale λ and λα (Klambauer et al.; TensorFlow's constants).
pub const SELU_SCALE: f64 = 1.0507009873554804934193349852946;
pub const SELU_SCALE_ALPHA: f64 = 1.7580993408473768599402175208123;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Softplus,
    Softsign,
    Selu,
    LeakyRelu,
}

/// The constants of one kernel in its element type: softplus's threshold `ln(ε) + 2` (of
/// the tensor's type, so half cuts off where TensorFlow's half kernel does), SELU's
/// constants, LeakyReLU's alpha.
#[derive(Clone, Copy)]
struct Consts<T> {
    threshold: T,
    alpha: T,
    scale: T,
    scale_alpha: T,
}

impl<T: Float> Consts<T> {
    fn new(conv: impl Fn(f64) -> T, eps: f64, alpha: f32) -> Self {
        Consts {
            threshold: conv(eps.ln() + 2.0),
            alpha: conv(alpha as f64),
            scale: conv(SELU_SCALE),
            scale_alpha: conv(SELU_SCALE_ALPHA),
        }
    }
}

#[inline(always)]
fn softplus<T: Float>(x: T, k: &Consts<T>) -> T {
    if x > -k.threshold {
        x
    } else if x < k.threshold {
        x.exp()
    } else {
        x.exp().ln_1p()
    }
}

#[inline(always)]
fn forward<T: Float>(kind: Kind, x: T, k: &Consts<T>) -> T {
    match kind {
        Kind::Softplus => softplus(x, k),
        Kind::Softsign => x / (x.abs() + T::ONE),
        Kind::Selu if x < T::ZERO => k.scale_alpha * (x.exp() - T::ONE),
        Kind::Selu => k.scale * x,
        Kind::LeakyRelu if x > T::ZERO => x,
        Kind::LeakyRelu => x * k.alpha,
    }
}

/// The gradient from the incoming gradient `g` and the op's second input `f` (features, or
/// Selu's outputs).
#[inline(always)]
fn backward<T: Float>(kind: Kind, g: T, f: T, k: &Consts<T>) -> T {
    match kind {
        Kind::Softplus => g / ((-f).exp() + T::ONE),
        Kind::Softsign => {
            let d = T::ONE + f.abs();
            g / (d * d)
        }
        Kind::Selu if f < T::ZERO => g * (f + k.scale_alpha),
        Kind::Selu => g * k.scale,
        Kind::LeakyRelu if f > T::ZERO => g,
        Kind::LeakyRelu => g * k.alpha,
    }
}

struct Act {
    kind: Kind,
    ty: DataType,
    alpha: f32,
    grad: bool,
}

/// Runs the kernel for the storage type `S`, computing in `T` (`S` itself, or float32 for
/// half and bfloat16, converted by `up`/`down`).
fn run<S, T>(
    act: &Act,
    ctx: &mut OpContext,
    eps: f64,
    up: impl Fn(S) -> T + Sync + Copy,
    down: impl Fn(T) -> S + Sync + Copy,
    conv: impl Fn(f64) -> T,
) -> Result<(), Status>
where
    S: TensorType + Copy + Send + Sync,
    T: Float,
{
    let k = Consts::new(conv, eps, act.alpha);
    let kind = act.kind;
    let mut x = ctx.take_input(0)?;
    if !act.grad {
        x.as_slice::<S>().map_err(|e| ctx.error(e.message))?;
        for_chunks(unshared_mut::<S>(&mut x)?, 1, |_, c| {
            c.iter_mut().for_each(|v| *v = down(forward(kind, up(*v), &k)))
        });
        return ctx.set_output(0, x);
    }
    let other = ctx.input(1)?;
    if x.shape() != other.shape() {
        return Err(ctx.error(format!(
            "g and a must be the same size: gradients {} vs. {} {}",
            x.shape(),
            if kind == Kind::Selu { "outputs" } else { "features" },
            other.shape()
        )));
    }
    let f = other.as_slice::<S>().map_err(|e| ctx.error(e.message))?;
    x.as_slice::<S>().map_err(|e| ctx.error(e.message))?;
    zip_in_place(&mut x, f, |v, w| down(backward(kind, up(v), up(w), &k)))?;
    ctx.set_output(0, x)
}

impl OpKernel for Act {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        match self.ty {
            DataType::Float => run::<f32, f32>(self, ctx, f32::EPSILON as f64, |v| v, |v| v, |v| v as f32),
            DataType::Double => run::<f64, f64>(self, ctx, f64::EPSILON, |v| v, |v| v, |v| v),
            DataType::Half => run::<f16, f32>(self, ctx, f16::EPSILON.to_f64(), f16::to_f32, f16::from_f32, |v| {
                f16::from_f64(v).to_f32()
            }),
            _ => run::<bf16, f32>(self, ctx, bf16::EPSILON.to_f64(), bf16::to_f32, bf16::from_f32, |v| {
                bf16::from_f64(v).to_f32()
            }),
        }
    }
}

fn make(n: &NodeDef, kind: Kind, grad: bool) -> Result<Box<dyn OpKernel>, Status> {
    let ty = n.attr_type("T")?;
    if !matches!(ty, DataType::Float | DataType::Double | DataType::Half | DataType::BFloat16) {
        return Err(Status::not_found(format!(
            "node '{}': no CPU kernel for op {} with T={ty} (supported: float, double, half, bfloat16)",
            n.name, n.op
        ))
        .with_node(&n.name));
    }
    let alpha = if kind == Kind::LeakyRelu && n.has_attr("alpha") { n.attr_float("alpha")? } else { 0.2 };
    Ok(Box::new(Act { kind, ty, alpha, grad }))
}

/// Registers the kernels.
pub(crate) fn register(r: &mut crate::KernelRegistry) {
    macro_rules! add {
        ($($kind:ident),*) => {$(
            r.add(stringify!($kind), |n| make(n, Kind::$kind, false));
            r.add(concat!(stringify!($kind), "Grad"), |n| make(n, Kind::$kind, true));
        )*};
    }
    add!(Softplus, Softsign, Selu, LeakyRelu);
}
