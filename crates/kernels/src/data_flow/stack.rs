//! TensorFlow's per-step stacks (`StackV2`, `StackPushV2`, `StackPopV2`, `StackCloseV2`):
//! the gradient of a TensorFlow 1.x `tf.while_loop` pushes each iteration's forward values
//! and pops them in reverse in the gradient loop. `swap_memory` is accepted and ignored.
//! TensorFlow 1's `Stack`, `StackPush`, `StackPop`, `StackClose` (still run by TF 2.21) are
//! the same stacks behind a `Ref(string)` handle `[container, name]`, without a max size.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, ResourceHandle, Status, Tensor};

use super::handles::{handle_names, set_handle_output};
use crate::array::util::tf_type_name;
use crate::{KernelRegistry, OpContext, OpKernel};

const CONTAINER: &str = "_stacks";
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// One stack.
pub struct Stack {
    name: String,
    elem_type: DataType,
    max_size: Option<usize>,
    items: Mutex<(bool, Vec<Tensor>)>,
}

fn stack(ctx: &OpContext) -> Result<Arc<Stack>, Status> {
    // A resource handle (the V2 ops) or a string handle [container, name] (the V1 ops).
    let (_, name) = handle_names(ctx, 0)?;
    ctx.step()
        .step_container
        .lookup::<Stack>(CONTAINER, &name)
        .map_err(|_| ctx.error_with(Status::not_found(format!("stack {name} does not exist in this step",))))
}

op_kernel! {
    struct Create {
        elem_type: DataType,
        base: String,
        /// The V1 `Stack`: no max_size input, a `Ref(string)` handle.
        v1: bool,
    }
    fn compute(&self, ctx) {
        let max = if self.v1 {
            -1
        } else {
            let m = ctx.input(0)?;
            if m.dtype() != DataType::Int32 || m.rank() != 0 {
                return Err(ctx.error(format!("max_size must be an int32 scalar, got {} {}", m.dtype(), m.shape())));
            }
            m.scalar_value::<i32>()?
        };
        let name = format!("{}_{}", self.base, COUNTER.fetch_add(1, Ordering::Relaxed));
        let st = Stack {
            name: name.clone(),
            elem_type: self.elem_type,
            max_size: usize::try_from(max).ok(),
            items: Mutex::new((false, Vec::new())),
        };
        ctx.step().step_container.lookup_or_create(CONTAINER, &name, || Ok(st))?;
        if self.v1 {
            return set_handle_output(ctx, CONTAINER, &name, "", true);
        }
        let h = ResourceHandle::new(ctx.device(), CONTAINER, &name, "N10tensorflow5StackE");
        ctx.set_output(0, Tensor::scalar(h))
    }
}

op_kernel! {
    struct Push;
    fn compute(&self, ctx) {
        let s = stack(ctx)?;
        let v = ctx.input(1)?;
        if v.dtype() != s.elem_type {
            return Err(ctx.error(format!(
                "Stack[{}]: pushing a {} onto a stack of {}",
                s.name,
                tf_type_name(v.dtype()),
                tf_type_name(s.elem_type)
            )));
        }
        {
            let mut g = s.items.lock().unwrap_or_else(|e| e.into_inner());
            if g.0 {
                return Err(ctx.error(format!("Stack[{}] has already been closed.", s.name)));
            }
            if let Some(m) = s.max_size {
                if g.1.len() >= m {
                    return Err(ctx.error(format!("Stack[{}] overflowed its max_size ({m})", s.name)));
                }
            }
            g.1.push(v.clone());
        }
        ctx.set_output(0, v)
    }
}

op_kernel! {
    struct Pop;
    fn compute(&self, ctx) {
        let s = stack(ctx)?;
        let v = {
            let mut g = s.items.lock().unwrap_or_else(|e| e.into_inner());
            if g.0 {
                return Err(ctx.error(format!("Stack[{}] has already been closed.", s.name)));
            }
            g.1.pop()
        };
        match v {
            Some(v) => ctx.set_output(0, v),
            None => Err(ctx.error(format!("Stack[{}] is empty.", s.name))),
        }
    }
}

op_kernel! {
    struct Close;
    fn compute(&self, ctx) {
        let s = stack(ctx)?;
        let mut g = s.items.lock().unwrap_or_else(|e| e.into_inner());
        g.0 = true;
        g.1.clear();
        Ok(())
    }
}

fn create(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let given = if n.has_attr("stack_name") { n.attr_string("stack_name")? } else { String::new() };
    Ok(Box::new(Create {
        elem_type: n.attr_type("elem_type")?,
        base: if given.is_empty() { n.name.clone() } else { given },
        v1: n.op == "Stack",
    }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("StackV2", create);
    r.add_cheap("StackPushV2", |_| Ok(Box::new(Push)));
    r.add_cheap("StackPopV2", |_| Ok(Box::new(Pop)));
    r.add_cheap("StackCloseV2", |_| Ok(Box::new(Close)));
    r.add_cheap("Stack", create);
    r.add_cheap("StackPush", |_| Ok(Box::new(Push)));
    r.add_cheap("StackPop", |_| Ok(Box::new(Pop)));
    r.add_cheap("StackClose", |_| Ok(Box::new(Close)));
}
