//! Graph plumbing kernels: Const, Placeholder, PlaceholderWithDefault, Identity, IdentityN,
//! Snapshot, StopGradient, PreventGradient, NoOp.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor};

use crate::array::tf_type_name;
use crate::{KernelRegistry, OpContext, OpKernel};

op_kernel! {
    struct Const { value: Tensor }
    fn compute(&self, ctx) {
        ctx.set_output(0, self.value.clone())
    }
}

fn const_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let value = n.attr_tensor("value")?;
    let dtype = n.attr_type("dtype")?;
    if value.dtype() != dtype {
        return Err(n.node_error(format!(
            "Type mismatch between value ({}) and dtype ({})",
            tf_type_name(value.dtype()),
            tf_type_name(dtype)
        )));
    }
    Ok(Box::new(Const { value }))
}

op_kernel! {
    struct Placeholder { message: String }
    fn compute(&self, ctx) {
        // The message names the placeholder already (TensorFlow's text).
        Err(Status::invalid_argument(self.message.clone()).with_node(&ctx.node().name))
    }
}

/// TensorFlow's `PartialTensorShape::DebugString`: `[?,784]`, `<unknown>`.
pub fn partial_shape_str(dims: Option<&[i64]>) -> String {
    match dims {
        None => "<unknown>".into(),
        Some(d) => {
            let v: Vec<String> = d.iter().map(|&x| if x < 0 { "?".into() } else { x.to_string() }).collect();
            format!("[{}]", v.join(","))
        }
    }
}

fn placeholder_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = n.attr_type("dtype")?;
    let shape = if n.has_attr("shape") { n.attr_shape("shape")? } else { None };
    let mut message =
        format!("You must feed a value for placeholder tensor '{}' with dtype {}", n.name, tf_type_name(dtype));
    if let Some(d) = shape.as_deref().filter(|d| !d.is_empty()) {
        message.push_str(&format!(" and shape {}", partial_shape_str(Some(d))));
    }
    Ok(Box::new(Placeholder { message }))
}

op_kernel! {
    /// Forwards every input to the output of the same index (Identity, IdentityN, Snapshot,
    /// StopGradient, PreventGradient, PlaceholderWithDefault). With `alias_refs` a reference
    /// to a ref-variable is forwarded as that reference: as in TensorFlow, where the output
    /// shares the variable's buffer, a consumer that runs after an in-place update of the
    /// variable (`AssignAdd` under a control dependency) reads the new value. `Snapshot`
    /// (TensorFlow's explicit copy) reads the value now.
    struct Forward { alias_refs: bool }
    fn compute(&self, ctx) {
        for i in 0..ctx.num_inputs() {
            if self.alias_refs {
                if let crate::Value::Ref(v) = ctx.input_value(i)? {
                    let v = crate::Value::Ref(v.clone());
                    ctx.set_output_value(i, v)?;
                    continue;
                }
            }
            let t = ctx.take_input(i)?;
            ctx.set_output(i, t)?;
        }
        Ok(())
    }
}

/// Does nothing (`NoOp`, and `ControlTrigger`, which the executor runs even when dead).
pub(super) struct NoOp;

impl OpKernel for NoOp {
    fn compute(&self, _ctx: &mut OpContext) -> Result<(), Status> {
        Ok(())
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("Const", const_factory);
    r.add_cheap("Placeholder", placeholder_factory);
    r.add_cheap("PlaceholderV2", placeholder_factory);
    for op in ["Identity", "IdentityN", "StopGradient", "PreventGradient", "PlaceholderWithDefault", "GuaranteeConst"] {
        r.add_cheap(op, |_| Ok(Box::new(Forward { alias_refs: true })));
    }
    r.add_cheap("Snapshot", |_| Ok(Box::new(Forward { alias_refs: false })));
    r.add_cheap("NoOp", |_| Ok(Box::new(NoOp)));
}
