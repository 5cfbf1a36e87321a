//! `CountUpTo` (a reference variable) and `ResourceCountUpTo`: increments an int32/int64
//! scalar variable and outputs its value before the increment, failing with OutOfRange
//! ("Reached limit of N") once it has reached `limit`. This is how
//! `tf.compat.v1.train.limit_epochs` (and so `string_input_producer(num_epochs=...)`) ends
//! an input pipeline.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::handle::{handle_input, lookup_var, tf_type_name, uninitialized_use};
use crate::{KernelRegistry, OpContext, OpKernel, Var};

struct CountUpTo {
    limit: i64,
    dtype: DataType,
    resource: bool,
}

fn bump<T>(ctx: &OpContext, var: &Var, t: &mut Tensor, limit: i64) -> Result<Tensor, Status>
where
    T: ferroflow_core::TensorType + Copy + Into<i64> + TryFrom<i64>,
{
    let before: i64 = t.scalar_value::<T>()?.into();
    if before >= limit {
        return Err(Status::out_of_range(format!("Reached limit of {limit}")));
    }
    let next = T::try_from(before + 1)
        .map_err(|_| ctx.error(format!("variable {} would overflow past {before}", var.name)))?;
    let old = t.clone();
    *t = Tensor::scalar(next);
    Ok(old)
}

impl OpKernel for CountUpTo {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let var = if self.resource {
            let h = handle_input(ctx, 0)?;
            lookup_var(ctx, &h).map_err(|e| ctx.error(e.message))?
        } else {
            ctx.input_ref(0)?
        };
        if var.dtype != self.dtype {
            return Err(ctx.error(format!(
                "Variable {} has dtype {} but T is {}",
                var.name,
                tf_type_name(var.dtype),
                tf_type_name(self.dtype)
            )));
        }
        let mut g = var.value.write().unwrap_or_else(|e| e.into_inner());
        let Some(t) = g.as_mut() else { return Err(uninitialized_use(ctx, &var)) };
        if t.rank() != 0 {
            return Err(ctx.error(format!("input is not a scalar: {}", t.shape())));
        }
        let old = match self.dtype {
            DataType::Int32 => bump::<i32>(ctx, &var, t, self.limit)?,
            _ => bump::<i64>(ctx, &var, t, self.limit)?,
        };
        drop(g);
        ctx.set_output(0, old)
    }
}

fn count_up_to(n: &NodeDef, resource: bool) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = n.attr_type("T")?;
    if !matches!(dtype, DataType::Int32 | DataType::Int64) {
        return Err(n.node_error(format!("T must be int32 or int64, got {}", tf_type_name(dtype))));
    }
    Ok(Box::new(CountUpTo { limit: n.attr_int("limit")?, dtype, resource }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("CountUpTo", |n| count_up_to(n, false));
    r.add("ResourceCountUpTo", |n| count_up_to(n, true));
}
