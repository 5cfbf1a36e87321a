//! Resource-variable kernels: `VarHandleOp`, `ReadVariableOp`, `AssignVariableOp`,
//! `AssignAddVariableOp`, `AssignSubVariableOp`, `VarIsInitializedOp`, `DestroyResourceOp`.
//!
//! As in TensorFlow 1.x graphs, `VarHandleOp` only names the variable; the first
//! `AssignVariableOp` creates it in the task's [`crate::ResourceMgr`].

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::handle::{handle_input, handle_tensor, make_var_handle, read_typed_var, tf_type_name, uninitialized_use};
use super::update::{add_in_place, assign_value, UpdateKind};
use crate::array::util::node_context;
use crate::{KernelRegistry, OpContext, OpKernel, Var};

struct VarHandleOp {
    container: String,
    name: String,
    dtype: DataType,
    shape: Option<Vec<i64>>,
}

/// The shared name TensorFlow's eager runtime gives a `VarHandleOp` whose variable belongs
/// to no name (`ResourceHandle::ANONYMOUS_NAME`): each run makes a new variable.
pub const ANONYMOUS_NAME: &str = "cd2c89b7-88b7-44c8-ad83-06c2a9158347";

static ANONYMOUS_VARS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl OpKernel for VarHandleOp {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let fresh;
        let name = if self.name == ANONYMOUS_NAME {
            let n = ANONYMOUS_VARS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            fresh = format!("{ANONYMOUS_NAME}_{n}");
            fresh.as_str()
        } else {
            self.name.as_str()
        };
        let h = make_var_handle(ctx, &self.container, name, self.dtype, self.shape.as_deref());
        ctx.set_output(0, handle_tensor(h))
    }
}

fn var_handle_op(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let shared = n.attr_string("shared_name")?;
    Ok(Box::new(VarHandleOp {
        container: n.attr_string("container")?,
        name: if shared.is_empty() { n.name.clone() } else { shared },
        dtype: n.attr_type("dtype")?,
        shape: n.attr_shape("shape")?,
    }))
}

op_kernel! {
    struct ReadVariableOp { dtype: DataType }
    fn compute(&self, ctx) {
        let want = tf_type_name(self.dtype);
        let (_, t) = read_typed_var(ctx, self.dtype, |var| {
            format!("Trying to read variable with wrong dtype. Expected {want} got {}", tf_type_name(var.dtype))
        })?;
        ctx.set_output(0, t)
    }
}

op_kernel! {
    struct AssignVariableOp { dtype: DataType, validate_shape: bool }
    fn compute(&self, ctx) {
        let h = handle_input(ctx, 0)?;
        let value = ctx.take_input(1)?;
        if value.dtype() != self.dtype {
            return Err(ctx.error(format!(
                "Variable and value dtypes don't match; respectively, {} and {}",
                tf_type_name(self.dtype),
                tf_type_name(value.dtype())
            )));
        }
        let var =
            ctx.resources().lookup_or_create(&h.container, &h.name, || Ok(Var::new(h.name.clone(), self.dtype)))?;
        if var.dtype != self.dtype {
            return Err(ctx.error(format!(
                "Trying to assign variable with wrong dtype. Expected {} got {}",
                tf_type_name(var.dtype),
                tf_type_name(self.dtype)
            )));
        }
        assign_value(ctx, &var, value, self.validate_shape, |old, new| {
            format!("Trying to assign to variable with tensor with wrong shape. Expected {old} got {new}")
        })
    }
}

op_kernel! {
    struct AssignUpdateVariableOp { dtype: DataType, kind: UpdateKind }
    fn compute(&self, ctx) {
        let h = handle_input(ctx, 0)?;
        let value = ctx.input(1)?;
        let var = super::handle::lookup_var(ctx, &h).map_err(|e| node_context(&ctx.node().name, e))?;
        if var.dtype != self.dtype || value.dtype() != self.dtype {
            return Err(ctx.error("DType of variable handle and value does not match."));
        }
        let mut g = var.value.write().unwrap_or_else(|e| e.into_inner());
        let Some(t) = g.as_mut() else { return Err(uninitialized_use(ctx, &var)) };
        if t.shape() != value.shape() {
            return Err(ctx.error(format!(
                "Cannot update variable with shape {} using a Tensor with shape {}, shapes must be equal.",
                t.shape(),
                value.shape()
            )));
        }
        add_in_place(t, &value, self.kind).map_err(|e| ctx.error(e.message))
    }
}

op_kernel! {
    struct VarIsInitializedOp;
    fn compute(&self, ctx) {
        let h = handle_input(ctx, 0)?;
        let init = super::handle::lookup_var(ctx, &h).map(|v| v.is_initialized()).unwrap_or(false);
        ctx.set_output(0, Tensor::scalar(init))
    }
}

op_kernel! {
    /// `VariableShape`: the shape of a resource variable's value (`out_type` int32 or int64).
    struct VariableShape;
    fn compute(&self, ctx) {
        let h = handle_input(ctx, 0)?;
        let var = super::handle::existing_var(ctx, &h)?;
        let value = var.read().map_err(|_| super::handle::uninitialized_read(ctx, &h))?;
        let dims = value.shape().dims();
        let int64 = ctx.node().has_attr("out_type") && ctx.node().attr_type("out_type")? == DataType::Int64;
        let out = if int64 {
            Tensor::vec(dims.iter().map(|&d| d as i64).collect::<Vec<_>>())
        } else {
            let mut v = Vec::with_capacity(dims.len());
            for &d in dims {
                v.push(i32::try_from(d).map_err(|_| ctx.error(format!("dimension {d} does not fit out_type int32")))?);
            }
            Tensor::vec(v)
        };
        ctx.set_output(0, out)
    }
}

op_kernel! {
    struct DestroyResourceOp { ignore_lookup_error: bool }
    fn compute(&self, ctx) {
        let h = handle_input(ctx, 0)?;
        match ctx.resources().delete::<Var>(&h.container, &h.name) {
            Err(e) if !self.ignore_lookup_error => Err(node_context(&ctx.node().name, e)),
            _ => Ok(()),
        }
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("VarHandleOp", var_handle_op);
    // A read shares the variable's buffer (the clone is a reference count), whatever the
    // variable's size: run inline, it saves a small ps read two thread hand-offs.
    r.add_cheap("ReadVariableOp", |n| Ok(Box::new(ReadVariableOp { dtype: n.attr_type("dtype")? })));
    r.add("AssignVariableOp", |n| {
        Ok(Box::new(AssignVariableOp { dtype: n.attr_type("dtype")?, validate_shape: n.attr_bool("validate_shape")? }))
    });
    r.add("AssignAddVariableOp", |n| {
        Ok(Box::new(AssignUpdateVariableOp { dtype: n.attr_type("dtype")?, kind: UpdateKind::Add }))
    });
    r.add("AssignSubVariableOp", |n| {
        Ok(Box::new(AssignUpdateVariableOp { dtype: n.attr_type("dtype")?, kind: UpdateKind::Sub }))
    });
    r.add("VarIsInitializedOp", |_| Ok(Box::new(VarIsInitializedOp)));
    r.add("VariableShape", |_| Ok(Box::new(VariableShape)));
    r.add("DestroyResourceOp", |n| {
        Ok(Box::new(DestroyResourceOp { ignore_lookup_error: n.attr_bool("ignore_lookup_error")? }))
    });
}
