//! Optimizers with TensorFlow 1.x's API: `minimize(loss, global_step)`,
//! `compute_gradients`, `apply_gradients`. Each one builds TensorFlow's own apply ops
//! (`ResourceApplyAdagrad`, `ApplyAdam`, …) so the graphs match TensorFlow's, with slot
//! variables named `<var>/<Optimizer>` and colocated with their variable.

mod adadelta;
mod adagrad;
mod adagrad_da;
mod adam;
mod ftrl;
mod gradient_descent;
mod learning_rate;
mod momentum;
mod proximal;
mod rmsprop;
mod slots;

pub use adadelta::Adadelta;
pub use adagrad::Adagrad;
pub use adagrad_da::AdagradDa;
pub use adam::Adam;
pub use ftrl::Ftrl;
pub use gradient_descent::GradientDescent;
pub use learning_rate::LearningRate;
pub use momentum::Momentum;
pub use proximal::{ProximalAdagrad, ProximalGradientDescent};
pub use rmsprop::RmsProp;
pub use slots::{hyper, slot};

use ferroflow_core::{attr, DataType, Status};
use ferroflow_graph::{
    gradients_with_options, indexed_slices, ops, trainable_variables, AsOpName, GradOptions, Operation, Output, Scope,
    Variable,
};

/// Implements [`Optimizer`] for an optimizer with a dense and a sparse apply op, both built
/// by its `build(s, var, grad, indices)` (`indices`: `None` for the dense update, else the
/// unique rows the gradient holds, after [`deduplicate`]).
macro_rules! dense_and_sparse_optimizer {
    ($t:ty, $name:literal) => {
        impl $crate::optimizer::Optimizer for $t {
            fn name(&self) -> &str {
                $name
            }
            fn apply_one(
                &self,
                s: &ferroflow_graph::Scope,
                grad: &ferroflow_graph::Output,
                var: &ferroflow_graph::Variable,
            ) -> Result<ferroflow_graph::Operation, ferroflow_core::Status> {
                self.build(s, var, grad.clone(), None)
            }
            fn apply_sparse_one(
                &self,
                s: &ferroflow_graph::Scope,
                g: $crate::optimizer::SparseGrad<'_>,
                var: &ferroflow_graph::Variable,
            ) -> Result<Option<ferroflow_graph::Operation>, ferroflow_core::Status> {
                let (grad, indices) = $crate::optimizer::deduplicate(s, g.values, g.indices);
                self.build(s, var, grad, Some(indices)).map(Some)
            }
        }
    };
}
pub(crate) use dense_and_sparse_optimizer;

/// A gradient and the variable it updates.
pub type GradAndVar = (Output, Variable);

/// INVALID_ARGUMENT (its message after `prefix`) unless gradient `g` has variable `v`'s dtype.
pub(crate) fn check_grad_dtype(prefix: &str, g: &Output, v: &Variable) -> Result<(), Status> {
    if g.dtype != v.dtype() {
        return Err(Status::invalid_argument(format!(
            "{prefix}gradient {g} is {} but variable {} is {}",
            g.dtype,
            v.name(),
            v.dtype()
        )));
    }
    Ok(())
}

/// The gradient of some rows of a variable (TensorFlow's IndexedSlices): `values[i]` is
/// the gradient of row `indices[i]`; indices may repeat (see [`deduplicate`]).
#[derive(Clone, Copy, Debug)]
pub struct SparseGrad<'a> {
    /// Gradient rows.
    pub values: &'a Output,
    /// The row of each gradient row.
    pub indices: &'a Output,
}

/// An optimizer: builds the update of one variable from its gradient.
pub trait Optimizer {
    /// Name used for the update scope and slot names (`Adagrad`, `Adam`, …).
    fn name(&self) -> &str;

    /// Creates slots and non-slot state for `vars` (called once before the updates).
    fn prepare(&self, _s: &Scope, _vars: &[Variable]) -> Result<(), Status> {
        Ok(())
    }

    /// Builds the update of one variable.
    fn apply_one(&self, s: &Scope, grad: &Output, var: &Variable) -> Result<Operation, Status>;

    /// Builds the update of the rows of one variable that `grad` holds, or `None` if the
    /// optimizer has no sparse update (the dense gradient is applied, which for Adam, whose
    /// every slot decays each step, is what TensorFlow's update does too).
    fn apply_sparse_one(
        &self,
        _s: &Scope,
        _grad: SparseGrad<'_>,
        _var: &Variable,
    ) -> Result<Option<Operation>, Status> {
        Ok(None)
    }

    /// Builds ops that run after every variable update (e.g. Adam's beta powers).
    fn finish(&self, s: &Scope, updates: &[Operation]) -> Result<Vec<Operation>, Status> {
        let _ = s;
        Ok(updates.to_vec())
    }

    /// Gradients of `loss` with respect to `vars` (default: the trainable variables).
    fn compute_gradients(
        &self,
        s: &Scope,
        loss: &Output,
        vars: Option<&[Variable]>,
    ) -> Result<Vec<(Option<Output>, Variable)>, Status> {
        let vars: Vec<Variable> = match vars {
            Some(v) => v.to_vec(),
            None => trainable_variables(s.graph())?,
        };
        if vars.is_empty() {
            return Err(Status::invalid_argument("no variables to optimize"));
        }
        // Variables are differentiated at their handle (the resource handle, or the
        // reference), as in TensorFlow: every read of the variable (its value, a gather of
        // some rows) passes its gradient there.
        let xs: Vec<Output> = vars.iter().map(Variable::handle).collect();
        // Gated per op, as TensorFlow's `minimize` (GATE_OP) does, where it matters: a ref
        // variable's reads alias it, so its update must wait until every gradient that
        // reads it is computed. Resource reads are values; gating them only costs (about a
        // quarter of an MLP step, measured) and changes no result.
        let gate_gradients = vars.iter().any(|v| !v.is_resource());
        let opts = GradOptions { gate_gradients, ..Default::default() };
        let gs = gradients_with_options(s, std::slice::from_ref(loss), &xs, None, &opts)?;
        Ok(gs.into_iter().zip(vars).collect())
    }

    /// Applies gradients; increments `global_step` (if given) after every update. The
    /// returned op is named `name` (TensorFlow's default for `minimize` is the optimizer name).
    fn apply_gradients(
        &self,
        s: &Scope,
        grads_and_vars: &[GradAndVar],
        global_step: Option<&Variable>,
        name: &str,
    ) -> Result<Operation, Status> {
        if grads_and_vars.is_empty() {
            return Err(Status::invalid_argument("no gradients provided for any variable"));
        }
        let vars: Vec<Variable> = grads_and_vars.iter().map(|(_, v)| v.clone()).collect();
        let us = s.sub(name);
        self.prepare(&us, &vars)?;
        let mut updates = Vec::new();
        for (g, v) in grads_and_vars {
            check_grad_dtype("", g, v)?;
            let vs = us.sub(&format!("update_{}", v.name().replace('/', "_"))).colocate_with(&v.handle());
            let sparse = match indexed_slices(s.graph(), g) {
                Some((values, indices)) => {
                    self.apply_sparse_one(&vs, SparseGrad { values: &values, indices: &indices }, v)?
                }
                None => None,
            };
            updates.push(match sparse {
                Some(op) => op,
                None => self.apply_one(&vs, g, v)?,
            });
        }
        let finals = self.finish(&us, &updates)?;
        let deps: Vec<&Operation> = finals.iter().collect();
        let op = match global_step {
            Some(gs) => {
                let cs = s.with_control_deps(&deps).colocate_with(&gs.handle());
                let one = ferroflow_graph::ops::constant(&cs.sub(name), ferroflow_core::Tensor::scalar(1i64));
                let one = if gs.dtype() == DataType::Int64 {
                    one
                } else {
                    cs.op("Cast")
                        .input(one)
                        .attr("DstT", attr::ty(gs.dtype()))
                        .attr("Truncate", attr::bool(false))
                        .build()
                        .output(0)
                };
                if gs.is_resource() {
                    cs.op("AssignAddVariableOp").name(name).input(gs.handle()).input(one).build()
                } else {
                    cs.op("AssignAdd")
                        .name(name)
                        .input(gs.handle())
                        .input(one)
                        .attr("use_locking", attr::bool(false))
                        .build()
                }
            }
            None => ferroflow_graph::ops::group_named(s, name, &deps),
        };
        s.status()?;
        Ok(op)
    }

    /// `compute_gradients` then `apply_gradients`; variables without a gradient are
    /// skipped (an error if none has one).
    fn minimize(
        &self,
        s: &Scope,
        loss: &Output,
        vars: Option<&[Variable]>,
        global_step: Option<&Variable>,
    ) -> Result<Operation, Status> {
        let gv = self.compute_gradients(s, loss, vars)?;
        let gv: Vec<GradAndVar> = gv.into_iter().filter_map(|(g, v)| g.map(|g| (g, v))).collect();
        if gv.is_empty() {
            return Err(Status::invalid_argument(format!("no gradients: {loss} does not depend on any variable")));
        }
        let name = self.name().to_string();
        self.apply_gradients(s, &gv, global_step, &name)
    }
}

/// Builds an apply op in the variable's style: `Resource<op>` with handles for resource
/// variables, `<op>` with refs otherwise; `inputs` follow `var` in TensorFlow's order.
pub(crate) fn apply_op(s: &Scope, op: &str, var: &Variable, inputs: Vec<Output>, attrs: &[(&str, bool)]) -> Operation {
    let name = if var.is_resource() { format!("Resource{op}") } else { op.to_string() };
    let mut all = vec![var.handle()];
    all.extend(inputs);
    ops::apply_training_op(s, &name, all, attrs)
}

/// Sums the rows of repeated indices (TensorFlow's `_deduplicate_indexed_slices`): the
/// unique indices and, for each, the sum of its rows. The sparse apply ops apply a repeated
/// index once per occurrence, which is not the update of the summed gradient.
pub fn deduplicate(s: &Scope, values: &Output, indices: &Output) -> (Output, Output) {
    let u = s.op("Unique").input(indices.clone()).attr("out_idx", attr::ty(DataType::Int32)).build();
    let (unique, positions) = (u.output(0), u.output(1));
    let count = ops::size(s, unique.clone(), DataType::Int32);
    (ops::unsorted_segment_sum(s, values.clone(), positions, count), unique)
}

/// A dependency-only helper used by optimizers' `finish`.
pub(crate) fn after<T: AsOpName>(s: &Scope, deps: &[T]) -> Scope {
    let refs: Vec<&T> = deps.iter().collect();
    s.with_control_deps(&refs)
}

/// A boxed optimizer (what `--optimizer` picks at run time) is an optimizer, so it can be
/// wrapped, e.g. by [`crate::sync_replicas::SyncReplicasOptimizer`]. The required methods
/// and the per-optimizer hooks are forwarded; `compute_gradients`, `apply_gradients` and
/// `minimize` are the provided ones, built on those (no optimizer overrides them).
impl Optimizer for Box<dyn Optimizer> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn prepare(&self, s: &Scope, vars: &[Variable]) -> Result<(), Status> {
        (**self).prepare(s, vars)
    }
    fn apply_one(&self, s: &Scope, grad: &Output, var: &Variable) -> Result<Operation, Status> {
        (**self).apply_one(s, grad, var)
    }
    fn apply_sparse_one(&self, s: &Scope, grad: SparseGrad<'_>, var: &Variable) -> Result<Option<Operation>, Status> {
        (**self).apply_sparse_one(s, grad, var)
    }
    fn finish(&self, s: &Scope, updates: &[Operation]) -> Result<Vec<Operation>, Status> {
        (**self).finish(s, updates)
    }
}
