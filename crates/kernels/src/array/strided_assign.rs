//! Writing through a strided slice: `StridedSliceAssign` (a reference variable,
//! `ref_var[1:3].assign(x)`), `ResourceStridedSliceAssign` (a resource variable,
//! `var[::2, 1].assign(x)`) and `TensorStridedSliceUpdate` (a new tensor with the slice
//! replaced). The value is broadcast to the slice's shape, as TensorFlow does; the slice
//! spec (begin, end, strides and the five masks) is `StridedSlice`'s.

use ferroflow_core::{Shape, Status, Tensor};

use super::strided::strided_scatter;
use super::strided_slice::{read_spec, Masks};
use super::tile::broadcast_tensor;
use crate::state::handle::{handle_input, lookup_var, tf_type_name, uninitialized_use};
use crate::{KernelRegistry, OpContext, Value};

/// Writes `value` into `target` through the slice given by inputs 1-3.
fn assign_slice(ctx: &OpContext, target: &mut Tensor, value: &Tensor, masks: Masks) -> Result<(), Status> {
    if value.dtype() != target.dtype() {
        return Err(ctx.error(format!(
            "value is {} but the sliced tensor is {}",
            tf_type_name(value.dtype()),
            tf_type_name(target.dtype())
        )));
    }
    let dims = target.dims().to_vec();
    let spec = read_spec(ctx, 1, &dims, masks)?;
    let value = if value.dims() == spec.final_dims.as_slice() {
        value.clone()
    } else {
        broadcast_tensor(value, &spec.final_dims).map_err(|_| {
            ctx.error(format!(
                "Cannot broadcast input shape {} into sliced shape {}",
                value.shape(),
                Shape::new(spec.final_dims.clone())
            ))
        })?
    };
    let (offset, strides) = spec.view(&dims);
    ferroflow_core::with_dtype!(value.dtype(), T => {
        strided_scatter(target.data_mut::<T>()?, offset, &spec.processing, &strides, value.as_slice::<T>()?);
        Ok::<(), Status>(())
    })
}

op_kernel! {
    struct StridedSliceAssign { masks: Masks }
    fn compute(&self, ctx) {
        let value = ctx.input(4)?;
        let var = ctx.input_ref(0)?;
        {
            let mut g = var.value.write().unwrap_or_else(|e| e.into_inner());
            let Some(t) = g.as_mut() else { return Err(uninitialized_use(ctx, &var)) };
            assign_slice(ctx, t, &value, self.masks)?;
        }
        ctx.set_output_value(0, Value::Ref(var))
    }
}

op_kernel! {
    struct ResourceStridedSliceAssign { masks: Masks }
    fn compute(&self, ctx) {
        let value = ctx.input(4)?;
        let h = handle_input(ctx, 0)?;
        let var = lookup_var(ctx, &h).map_err(|e| ctx.error(e.message))?;
        let mut g = var.value.write().unwrap_or_else(|e| e.into_inner());
        let Some(t) = g.as_mut() else { return Err(uninitialized_use(ctx, &var)) };
        assign_slice(ctx, t, &value, self.masks)
    }
}

op_kernel! {
    struct TensorStridedSliceUpdate { masks: Masks }
    fn compute(&self, ctx) {
        let mut out = ctx.input(0)?;
        let value = ctx.input(4)?;
        assign_slice(ctx, &mut out, &value, self.masks)?;
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StridedSliceAssign", |n| Ok(Box::new(StridedSliceAssign { masks: Masks::from_node(n)? })));
    r.add("ResourceStridedSliceAssign", |n| Ok(Box::new(ResourceStridedSliceAssign { masks: Masks::from_node(n)? })));
    r.add("TensorStridedSliceUpdate", |n| Ok(Box::new(TensorStridedSliceUpdate { masks: Masks::from_node(n)? })));
}
