//! `SparseApplyAdagrad` / `ResourceSparseApplyAdagrad`: Adagrad on the rows `indices` of
//! `var` and `accum` only (the update of an embedding table from the rows a batch used).
//! For every i: `accum[indices[i]] += grad[i]²` (if `update_slots`), then
//! `var[indices[i]] -= lr · grad[i] / sqrt(accum[indices[i]])`. A repeated index is applied
//! once per occurrence, in order (TensorFlow's optimizers sum duplicates first).

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status};

use super::Real;
use crate::array::{dims_str, index_vec};
use crate::state::handle::{uninitialized_use, var_inputs};
use crate::state::lock::lock_all;
use crate::{KernelRegistry, OpContext, OpKernel, Value, Var};

struct SparseApplyAdagrad {
    resource: bool,
    update_slots: bool,
    dtype: DataType,
}

impl SparseApplyAdagrad {
    fn run<T: Real>(&self, ctx: &mut OpContext, vars: &[Arc<Var>]) -> Result<(), Status> {
        let lr_t = ctx.input(2)?;
        let grad = ctx.input(3)?;
        let indices = ctx.input(4)?;
        for (name, t) in [("lr", &lr_t), ("grad", &grad)] {
            if t.dtype() != T::DTYPE {
                return Err(ctx.error(format!("{name} is {} but T is {}", t.dtype(), T::DTYPE)));
            }
        }
        if lr_t.rank() != 0 {
            return Err(ctx.error(format!("lr is not a scalar: {}", lr_t.shape())));
        }
        let lr = lr_t.scalar_value::<T>()?;
        if indices.rank() != 1 {
            return Err(ctx.error(format!("indices must be one-dimensional, got shape {}", indices.shape())));
        }
        let idx = index_vec(&indices).map_err(|e| ctx.error(e.message))?;
        let mut guards = lock_all(ctx, vars, &["var", "accum"])?;
        for (g, var) in guards.iter().zip(vars) {
            match g.as_ref() {
                None => return Err(uninitialized_use(ctx, var)),
                Some(t) if t.dtype() != T::DTYPE => {
                    return Err(ctx.error(format!("variable {} is {} but T is {}", var.name, t.dtype(), T::DTYPE)))
                }
                Some(_) => {}
            }
        }
        let (var_dims, acc_dims) = match (guards[0].as_ref(), guards[1].as_ref()) {
            (Some(v), Some(a)) => (v.dims().to_vec(), a.dims().to_vec()),
            _ => return Err(Status::internal("sparse Adagrad: variables vanished under their locks")),
        };
        if var_dims != acc_dims {
            return Err(ctx.error(format!(
                "var and accum do not have the same shape{} {}",
                dims_str(&var_dims),
                dims_str(&acc_dims)
            )));
        }
        if var_dims.is_empty() {
            return Err(ctx.error("var must be at least 1 dimensional"));
        }
        let mut want = vec![idx.len()];
        want.extend_from_slice(&var_dims[1..]);
        if grad.dims() != want.as_slice() {
            return Err(ctx.error(format!(
                "grad must be the slices of var at indices: shape {} expected, got {} (var {})",
                dims_str(&want),
                dims_str(grad.dims()),
                dims_str(&var_dims)
            )));
        }
        let rows = var_dims[0] as i64;
        if let Some(i) = idx.iter().position(|&r| r < 0 || r >= rows) {
            return Err(ctx.error(format!("Index {} at offset {i} in indices is out of range [0, {rows})", idx[i])));
        }
        let inner: usize = var_dims[1..].iter().product();
        let g = grad.as_slice::<T>()?;
        let (gv, ga) = guards.split_at_mut(1);
        let (Some(vt), Some(at)) = (gv[0].as_mut(), ga[0].as_mut()) else {
            return Err(Status::internal("sparse Adagrad: variables vanished under their locks"));
        };
        let (v, a) = (vt.data_mut::<T>()?, at.data_mut::<T>()?);
        for (i, &r) in idx.iter().enumerate() {
            let rows = r as usize * inner..(r as usize + 1) * inner;
            for ((v, a), &g) in v[rows.clone()].iter_mut().zip(&mut a[rows]).zip(&g[i * inner..(i + 1) * inner]) {
                if self.update_slots {
                    *a += g * g;
                }
                *v -= g * lr * (T::ONE / a.sqrt());
            }
        }
        Ok(())
    }
}

impl OpKernel for SparseApplyAdagrad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let vars = var_inputs(ctx, 2, self.resource)?;
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

fn make(n: &NodeDef, resource: bool) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = n.attr_type("T")?;
    let update_slots = if n.has_attr("update_slots") { n.attr_bool("update_slots")? } else { true };
    Ok(Box::new(SparseApplyAdagrad { resource, update_slots, dtype }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SparseApplyAdagrad", |n| make(n, false));
    r.add("ResourceSparseApplyAdagrad", |n| make(n, true));
}
