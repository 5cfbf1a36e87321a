//! Reference-variable kernels (TensorFlow 1.x `tf.Variable` without resources):
//! `VariableV2`, `Assign`, `AssignAdd`, `AssignSub`, `IsVariableInitialized`.
//!
//! `VariableV2` outputs a [`Value::Ref`] to a [`Var`] kept in the task's resource manager
//! under (container, shared_name or node name), apart from resource variables; ops taking `Ref(T)` inputs update it in
//! place and forward the reference.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::handle::{tf_type_name, uninitialized_use};
use super::update::{add_in_place, assign_value, UpdateKind};
use crate::resource::LegacyVar;
use crate::{KernelRegistry, OpKernel, Value, Var};

op_kernel! {
    struct VariableV2 { container: String, name: String, dtype: DataType }
    fn compute(&self, ctx) {
        let var = ctx
            .resources()
            .lookup_or_create(&self.container, &self.name, || Ok(LegacyVar(Var::new(&self.name, self.dtype).into())))?
            .0
            .clone();
        if var.dtype != self.dtype {
            return Err(ctx.error(format!(
                "variable {} already exists with dtype {} but this node declares {}",
                self.name,
                tf_type_name(var.dtype),
                tf_type_name(self.dtype)
            )));
        }
        ctx.set_output_value(0, Value::Ref(var))
    }
}

fn variable_v2(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let shared = n.attr_string("shared_name")?;
    // The declared shape is checked at graph construction (Assign's shape function).
    n.attr_shape("shape")?;
    Ok(Box::new(VariableV2 {
        container: n.attr_string("container")?,
        name: if shared.is_empty() { n.name.clone() } else { shared },
        dtype: n.attr_type("dtype")?,
    }))
}

op_kernel! {
    struct Assign { validate_shape: bool }
    fn compute(&self, ctx) {
        let var = ctx.input_ref(0)?;
        let value = ctx.take_input(1)?;
        if value.dtype() != var.dtype {
            return Err(ctx.error(format!(
                "cannot assign a {} tensor to variable {} of type {}",
                tf_type_name(value.dtype()),
                var.name,
                tf_type_name(var.dtype)
            )));
        }
        assign_value(ctx, &var, value, self.validate_shape, |old, new| {
            format!("Assign requires shapes of both tensors to match. lhs shape= {old} rhs shape= {new}")
        })?;
        ctx.set_output_value(0, Value::Ref(var))
    }
}

op_kernel! {
    struct AssignUpdate { kind: UpdateKind }
    fn compute(&self, ctx) {
        let var = ctx.input_ref(0)?;
        let value = ctx.input(1)?;
        {
            let mut g = var.value.write().unwrap_or_else(|e| e.into_inner());
            let Some(t) = g.as_mut() else { return Err(uninitialized_use(ctx, &var)) };
            if t.dtype() != value.dtype() {
                return Err(ctx.error(format!(
                    "variable {} is {} but the update is {}",
                    var.name,
                    tf_type_name(t.dtype()),
                    tf_type_name(value.dtype())
                )));
            }
            if t.shape() != value.shape() {
                return Err(ctx.error(format!(
                    "Parameters and update must be the same size: {} vs {}",
                    t.shape(),
                    value.shape()
                )));
            }
            add_in_place(t, &value, self.kind).map_err(|e| ctx.error(e.message))?;
        }
        ctx.set_output_value(0, Value::Ref(var))
    }
}

op_kernel! {
    struct IsVariableInitialized;
    fn compute(&self, ctx) {
        let init = ctx.input_ref(0)?.is_initialized();
        ctx.set_output(0, Tensor::scalar(init))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("VariableV2", variable_v2);
    r.add("Assign", |n| Ok(Box::new(Assign { validate_shape: n.attr_bool("validate_shape")? })));
    r.add("AssignAdd", |_| Ok(Box::new(AssignUpdate { kind: UpdateKind::Add })));
    r.add("AssignSub", |_| Ok(Box::new(AssignUpdate { kind: UpdateKind::Sub })));
    r.add("IsVariableInitialized", |_| Ok(Box::new(IsVariableInitialized)));
}
