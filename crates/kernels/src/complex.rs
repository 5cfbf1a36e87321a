//! Complex numbers from and to their parts, as TensorFlow's CPU kernels: `Complex` (real
//! and imaginary parts, broadcast), `Real`, `Imag`, `ComplexAbs` (the modulus, by `hypot`),
//! `Angle` (the argument, by `atan2`) and `Conj`, for `complex64` (`float` parts) and
//! `complex128` (`double` parts).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType, C128, C64};

use crate::math::bcast::{bcast_apply, map_unary, Plan};
use crate::{KernelRegistry, OpContext, OpKernel};

/// `f` of every element of `x`, by [`map_unary`] (in parallel for large tensors).
fn map<A: TensorType + Copy + Sync, O: TensorType + Copy + Default + Send>(
    x: &Tensor,
    f: impl Fn(A) -> O + Sync,
) -> Result<Tensor, Status> {
    Tensor::new(x.shape().clone(), map_unary(x.dims(), x.as_slice::<A>()?, f)?)
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Part {
    Real,
    Imag,
    Abs,
    Angle,
}

struct PartKernel(Part);

impl OpKernel for PartKernel {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let out = match (x.dtype(), self.0) {
            (DataType::Complex64, Part::Real) => map(&x, |c: C64| c.re),
            (DataType::Complex64, Part::Imag) => map(&x, |c: C64| c.im),
            (DataType::Complex64, Part::Abs) => map(&x, |c: C64| c.norm()),
            (DataType::Complex64, Part::Angle) => map(&x, |c: C64| c.arg()),
            (DataType::Complex128, Part::Real) => map(&x, |c: C128| c.re),
            (DataType::Complex128, Part::Imag) => map(&x, |c: C128| c.im),
            (DataType::Complex128, Part::Abs) => map(&x, |c: C128| c.norm()),
            (DataType::Complex128, Part::Angle) => map(&x, |c: C128| c.arg()),
            (t, _) => return Err(ctx.error(format!("no CPU kernel for T={t} (complex64 and complex128 are)"))),
        }
        .map_err(|e| ctx.error_with(e))?;
        ctx.set_output(0, out)
    }
}

/// The output type attr `Tout` of a complex ↔ real op, checked against the input type
/// `T` (`complex64` goes with `float`, `complex128` with `double`, as TensorFlow registers
/// its kernels).
fn check_pair(node: &NodeDef, complex_out: bool) -> Result<(), Status> {
    let (t, out) = (node.attr_type("T")?, node.attr_type("Tout")?);
    let (c, r) = if complex_out { (out, t) } else { (t, out) };
    let ok = matches!((c, r), (DataType::Complex64, DataType::Float) | (DataType::Complex128, DataType::Double));
    if ok {
        Ok(())
    } else {
        Err(Status::not_found(format!(
            "no CPU kernel for op {} with T={t}, Tout={out} (complex64 goes with float, complex128 with double)",
            node.op
        )))
    }
}

fn make_part(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    check_pair(node, false)?;
    let part = match node.op.as_str() {
        "Real" => Part::Real,
        "Imag" => Part::Imag,
        "ComplexAbs" => Part::Abs,
        _ => Part::Angle,
    };
    Ok(Box::new(PartKernel(part)))
}

fn complex_typed<R: TensorType + Copy + Sync, C: TensorType + Default + Send>(
    ctx: &OpContext,
    re: &Tensor,
    im: &Tensor,
    make: fn(R, R) -> C,
) -> Result<Tensor, Status> {
    let plan = Plan::new([re.dims(), im.dims()])
        .ok_or_else(|| ctx.error(format!("Incompatible shapes: {} vs. {}", re.shape(), im.shape())))?;
    let mut out = ferroflow_core::alloc::zeroed::<C>(plan.out_shape()).map_err(|e| ctx.error_with(e))?;
    bcast_apply(&plan, re.as_slice::<R>()?, im.as_slice::<R>()?, &mut out, make);
    Tensor::new(plan.out_shape(), out)
}

op_kernel! {
    struct ComplexKernel;
    fn compute(&self, ctx) {
        let (re, im) = (ctx.input(0)?, ctx.input(1)?);
        if re.dtype() != im.dtype() {
            return Err(ctx.error(format!(
                "real is {} but imag is {}: both must be of type T",
                re.dtype(),
                im.dtype()
            )));
        }
        let out = match re.dtype() {
            DataType::Float => complex_typed(ctx, &re, &im, C64::new)?,
            DataType::Double => complex_typed(ctx, &re, &im, C128::new)?,
            t => return Err(ctx.error(format!("no CPU kernel for T={t} (float and double are)"))),
        };
        ctx.set_output(0, out)
    }
}

fn conj(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let out = match x.dtype() {
        DataType::Complex64 => map(&x, |c: C64| c.conj()),
        DataType::Complex128 => map(&x, |c: C128| c.conj()),
        t => {
            return Err(Status::unimplemented(format!(
                "Conj of {t} is not supported by ferroflow (complex64 and complex128 are)"
            ))
            .in_node(&ctx.node().name, &ctx.node().op))
        }
    }
    .map_err(|e| ctx.error_with(e))?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    for op in ["Real", "Imag", "ComplexAbs", "Angle"] {
        r.add(op, make_part);
    }
    r.add("Complex", |n| {
        check_pair(n, true)?;
        Ok(Box::new(ComplexKernel))
    });
    r.add("Conj", |_| Ok(crate::array::util::FnKernel::expensive(conj)));
}
