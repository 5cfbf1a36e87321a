//! The kernel shared by every optimizer: gathers the variables (ref inputs or resource
//! handles), the scalar hyper-parameters and the gradient, checks them as TensorFlow does,
//! locks the variables and runs the optimizer's element-wise update in place.

use crate::dispatch::dispatch;
use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status};

use super::sparse_apply;
use crate::real::Real;
use crate::state::handle::{uninitialized_use, var_inputs};
use crate::state::lock::lock_all;
use crate::state::par;
use crate::{KernelRegistry, OpContext, OpKernel, Value, Var};

/// An optimizer's update rule and input layout.
pub trait UpdateRule: Send + Sync + Sized + 'static {
    /// Names of the variable inputs, in order (`var` first, then its slots).
    const SLOTS: &'static [&'static str];
    /// Names of the other inputs, in order.
    const ARGS: &'static [&'static str];
    /// Index in [`UpdateRule::ARGS`] of the gradient (a full tensor; the rest are scalars).
    const GRAD: usize;
    /// Index in [`UpdateRule::ARGS`] of an int64 scalar (AdagradDA's `global_step`), which
    /// reaches [`UpdateRule::apply`] converted to `T` among the other scalars.
    const STEP: Option<usize> = None;
    /// Parses the optimizer's attrs.
    fn from_node(node: &NodeDef) -> Result<Self, Status>;
    /// Checks the scalars (in [`UpdateRule::ARGS`] order without the gradient) as
    /// TensorFlow does; the error says which one is out of range.
    fn check<T: Real>(&self, _scalars: &[T]) -> Result<(), String> {
        Ok(())
    }
    /// Updates `slots` (one slice per [`UpdateRule::SLOTS`] entry, equal lengths) given the
    /// scalars (in [`UpdateRule::ARGS`] order without the gradient) and the gradient.
    fn apply<T: Real>(&self, scalars: &[T], slots: &mut [&mut [T]], grad: &[T]);
}

struct ApplyKernel<O> {
    opt: O,
    resource: bool,
    /// The `SparseApply*` form: `indices` follows the gradient, which holds their rows.
    sparse: bool,
    dtype: DataType,
}

impl<O: UpdateRule> ApplyKernel<O> {
    fn run<T: Real>(&self, ctx: &mut OpContext, vars: &[Arc<Var>]) -> Result<(), Status> {
        let n = O::SLOTS.len();
        // Input position of argument j (a sparse op's `indices` sits right after the gradient).
        let pos = |j: usize| n + j + usize::from(self.sparse && j > O::GRAD);
        let mut scalars = Vec::with_capacity(O::ARGS.len());
        let mut grad = None;
        for (j, name) in O::ARGS.iter().enumerate() {
            let t = ctx.input(pos(j))?;
            if O::STEP == Some(j) {
                if t.dtype() != DataType::Int64 || t.rank() != 0 {
                    return Err(ctx.error(format!("{name} is not an int64 scalar: {} {}", t.dtype(), t.shape())));
                }
                scalars.push(T::from_f64(t.scalar_value::<i64>()? as f32 as f64));
                continue;
            }
            if t.dtype() != T::DTYPE {
                return Err(ctx.error(format!("{name} is {} but T is {}", t.dtype(), T::DTYPE)));
            }
            if j == O::GRAD {
                grad = Some(t);
            } else {
                if t.rank() != 0 {
                    return Err(ctx.error(format!("{name} is not a scalar: {}", t.shape())));
                }
                scalars.push(t.scalar_value::<T>()?);
            }
        }
        let grad = grad.ok_or_else(|| Status::internal(format!("{}: no gradient input", ctx.node().op)))?;
        self.opt.check(&scalars).map_err(|e| ctx.error(e))?;
        let indices = if self.sparse { Some(sparse_apply::indices(ctx, n + O::GRAD + 1)?) } else { None };
        let mut guards = lock_all(ctx, vars, O::SLOTS)?;
        for (g, var) in guards.iter().zip(vars) {
            match g.as_ref() {
                None => return Err(uninitialized_use(ctx, var)),
                Some(t) if t.dtype() != T::DTYPE => {
                    return Err(ctx.error(format!("variable {} is {} but T is {}", var.name, t.dtype(), T::DTYPE)))
                }
                Some(_) => {}
            }
        }
        let shapes: Vec<_> = guards.iter().filter_map(|g| g.as_ref().map(|t| t.shape().clone())).collect();
        for (i, s) in shapes.iter().enumerate().skip(1) {
            if *s != shapes[0] {
                return Err(ctx.error(format!("var and {} do not have the same shape{} {s}", O::SLOTS[i], shapes[0])));
            }
        }
        if indices.is_none() && *grad.shape() != shapes[0] {
            return Err(ctx.error(format!(
                "var and {} do not have the same shape{} {}",
                O::ARGS[O::GRAD],
                shapes[0],
                grad.shape()
            )));
        }
        let var_dims = shapes[0].0.clone();
        // A dense update of a variable whose buffer is still read elsewhere (its value is
        // being sent to a peer, or a tensor of a step holds it) writes a new buffer, each part
        // updated right after it was copied rather than copied whole first.
        let fresh = match (&indices, guards.first_mut().and_then(|g| g.as_mut())) {
            (None, Some(t)) if is_shared(t) => Some(t),
            _ => None,
        };
        if let Some(t) = fresh {
            let old = t.clone();
            let mut out = ferroflow_core::alloc::with_capacity::<T>(&var_dims)?;
            let grad = grad.as_slice::<T>()?;
            let mut rest: Vec<par::Ptr<T>> = Vec::with_capacity(n - 1);
            for g in guards.iter_mut().skip(1) {
                if let Some(t) = g.as_mut() {
                    rest.push(par::Ptr::of(t.data_mut::<T>()?.as_mut_slice()));
                }
            }
            par::copy_then(old.as_slice::<T>()?, &mut out, |s, part| {
                let l = part.len();
                let mut slices: Vec<&mut [T]> = Vec::with_capacity(n);
                slices.push(part);
                // SAFETY: the parts `copy_then` hands out are disjoint and each comes once,
                // and the other slots' buffers (borrowed through `guards`) outlive it.
                slices.extend(rest.iter().map(|p| unsafe { p.slice(s, l) }));
                self.opt.apply(&scalars, &mut slices, &grad[s..s + l]);
            });
            if let Some(t) = guards.first_mut().and_then(|g| g.as_mut()) {
                *t = ferroflow_core::Tensor::new(shapes[0].clone(), out)?;
            }
            return Ok(());
        }
        let mut slices: Vec<&mut [T]> = Vec::with_capacity(n);
        for g in guards.iter_mut() {
            if let Some(t) = g.as_mut() {
                slices.push(t.data_mut::<T>()?.as_mut_slice());
            }
        }
        match indices {
            None => self.opt.apply(&scalars, &mut slices, grad.as_slice::<T>()?),
            Some(idx) => sparse_apply::apply_rows(ctx, &self.opt, &scalars, &mut slices, &var_dims, &grad, &idx)?,
        }
        Ok(())
    }
}

/// Whether `t`'s buffer is held elsewhere too (writing it in place would copy it first).
fn is_shared(t: &ferroflow_core::Tensor) -> bool {
    Arc::strong_count(t.storage_arc()) > 1 || Arc::weak_count(t.storage_arc()) > 0
}

impl<O: UpdateRule> OpKernel for ApplyKernel<O> {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let n = O::SLOTS.len();
        let vars = var_inputs(ctx, n, self.resource)?;
        dispatch!(self.dtype, ctx, [f32, f64], |T| self.run::<T>(ctx, &vars))?;
        if !self.resource {
            ctx.set_output_value(0, Value::Ref(vars[0].clone()))?;
        }
        Ok(())
    }
}

fn make<O: UpdateRule>(node: &NodeDef, resource: bool, sparse: bool) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = node.attr_type("T")?;
    if !dtype.is_float() {
        return Err(Status::unimplemented(format!("T = {dtype} is not supported (float32 and float64 are)"))
            .in_node(&node.name, &node.op));
    }
    Ok(Box::new(ApplyKernel { opt: O::from_node(node)?, resource, sparse, dtype }))
}

/// Registers `SparseApply<name>` and `ResourceSparseApply<name>` for an optimizer.
pub fn register_sparse<O: UpdateRule>(r: &mut KernelRegistry, sparse: &'static str, resource_sparse: &'static str) {
    r.add(sparse, |n| make::<O>(n, false, true));
    r.add(resource_sparse, |n| make::<O>(n, true, true));
}

/// Registers the ref and resource forms of an optimizer.
pub fn register<O: UpdateRule>(r: &mut KernelRegistry, apply: &'static str, resource_apply: &'static str) {
    r.add(apply, |n| make::<O>(n, false, false));
    r.add(resource_apply, |n| make::<O>(n, true, false));
}

/// Registers an optimizer TensorFlow has only in the resource form (`resource_sparse`: its
/// sparse form, if it has one).
pub fn register_resource<O: UpdateRule>(
    r: &mut KernelRegistry,
    resource: &'static str,
    resource_sparse: Option<&'static str>,
) {
    r.add(resource, |n| make::<O>(n, true, false));
    if let Some(name) = resource_sparse {
        r.add(name, |n| make::<O>(n, true, true));
    }
}
