//! The sparse form of every optimizer that has one (`SparseApplyAdagrad`,
//! `ResourceSparseApplyMomentum`, …): the update of an embedding table from the rows a
//! batch used. The inputs are the dense op's with `indices` right after the gradient; the
//! gradient holds one row per index (`[len(indices)] + var.shape[1:]`), and the optimizer's
//! element-wise rule runs on the rows `indices` of `var` and its slots only. A repeated
//! index is applied once per occurrence, in order, as in TensorFlow (its optimizers sum
//! duplicate rows before calling these ops).

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status};

use super::apply::Optimizer;
use super::Real;
use crate::array::{dims_str, index_vec};
use crate::state::handle::{uninitialized_use, var_inputs};
use crate::state::lock::lock_all;
use crate::{KernelRegistry, OpContext, OpKernel, Value, Var};

struct SparseApplyKernel<O> {
    opt: O,
    resource: bool,
    dtype: DataType,
}

impl<O: Optimizer> SparseApplyKernel<O> {
    fn run<T: Real>(&self, ctx: &mut OpContext, vars: &[Arc<Var>]) -> Result<(), Status> {
        let n = O::SLOTS.len();
        // Input position of argument j: `indices` sits right after the gradient.
        let pos = |j: usize| n + j + usize::from(j > O::GRAD);
        let mut scalars = Vec::with_capacity(O::ARGS.len());
        let mut grad = None;
        for (j, name) in O::ARGS.iter().enumerate() {
            let t = ctx.input(pos(j))?;
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
        let indices = ctx.input(n + O::GRAD + 1)?;
        if indices.rank() != 1 {
            return Err(ctx.error(format!("indices must be one-dimensional, got shape {}", indices.shape())));
        }
        let idx = index_vec(&indices).map_err(|e| ctx.error(e.message))?;
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
        let dims: Vec<Vec<usize>> = guards.iter().filter_map(|g| g.as_ref().map(|t| t.dims().to_vec())).collect();
        for (i, d) in dims.iter().enumerate().skip(1) {
            if *d != dims[0] {
                return Err(ctx.error(format!(
                    "var and {} do not have the same shape{} {}",
                    O::SLOTS[i],
                    dims_str(&dims[0]),
                    dims_str(d)
                )));
            }
        }
        let var_dims = &dims[0];
        if var_dims.is_empty() {
            return Err(ctx.error("var must be at least 1 dimensional"));
        }
        let mut want = vec![idx.len()];
        want.extend_from_slice(&var_dims[1..]);
        if grad.dims() != want.as_slice() {
            return Err(ctx.error(format!(
                "{} must be the slices of var at indices: shape {} expected, got {} (var {})",
                O::ARGS[O::GRAD],
                dims_str(&want),
                dims_str(grad.dims()),
                dims_str(var_dims)
            )));
        }
        let rows = var_dims[0] as i64;
        if let Some(i) = idx.iter().position(|&r| r < 0 || r >= rows) {
            return Err(ctx.error(format!("Index {} at offset {i} in indices is out of range [0, {rows})", idx[i])));
        }
        let inner: usize = var_dims[1..].iter().product();
        let g = grad.as_slice::<T>()?;
        let mut slices: Vec<&mut [T]> = Vec::with_capacity(n);
        for guard in guards.iter_mut() {
            if let Some(t) = guard.as_mut() {
                slices.push(t.data_mut::<T>()?.as_mut_slice());
            }
        }
        for (i, &r) in idx.iter().enumerate() {
            let at = r as usize * inner..(r as usize + 1) * inner;
            let mut row: Vec<&mut [T]> = slices.iter_mut().map(|s| &mut s[at.clone()]).collect();
            self.opt.apply(&scalars, &mut row, &g[i * inner..(i + 1) * inner]);
        }
        Ok(())
    }
}

impl<O: Optimizer> OpKernel for SparseApplyKernel<O> {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let vars = var_inputs(ctx, O::SLOTS.len(), self.resource)?;
        match self.dtype {
            DataType::Float => self.run::<f32>(ctx, &vars)?,
            DataType::Double => self.run::<f64>(ctx, &vars)?,
            d => return Err(ctx.error(format!("T = {d} is not supported (float32 and float64 are)"))),
        }
        if !self.resource {
            ctx.set_output_value(0, Value::Ref(vars[0].clone()))?;
        }
        Ok(())
    }
}

fn make<O: Optimizer>(node: &NodeDef, resource: bool) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = node.attr_type("T")?;
    if !dtype.is_float() {
        return Err(Status::unimplemented(format!(
            "node '{}' (op {}): T = {dtype} is not supported (float32 and float64 are)",
            node.name, node.op
        )));
    }
    Ok(Box::new(SparseApplyKernel { opt: O::from_node(node)?, resource, dtype }))
}

/// Registers `SparseApply<name>` and `ResourceSparseApply<name>` for an optimizer.
pub fn register<O: Optimizer>(r: &mut KernelRegistry, sparse: &'static str, resource_sparse: &'static str) {
    r.add(sparse, |n| make::<O>(n, false));
    r.add(resource_sparse, |n| make::<O>(n, true));
}
