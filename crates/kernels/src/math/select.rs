//! Select (TensorFlow 1 semantics: a scalar condition picks a whole tensor, a vector
//! condition picks rows, otherwise shapes match elementwise) and SelectV2 (the condition,
//! `t` and `e` broadcast together).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor, TensorType};

use super::bcast::{par_runs, Plan};
use super::common::{kernel_type, typed};
use super::dtypes::SELECT_TYPES;
use crate::array::util::collect_vec;
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Elements that Select can pick.
trait Elem: TensorType + Clone + Default + Send + Sync {}
impl<T: TensorType + Clone + Default + Send + Sync> Elem for T {}

struct Select {
    ty: DataType,
    v2: bool,
}

fn select_v1<T: Elem>(ctx: &mut OpContext) -> Result<(), Status> {
    let (c, t, e) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    let cond = typed::<bool>(ctx, &c)?;
    let (tv, ev) = (typed::<T>(ctx, &t)?, typed::<T>(ctx, &e)?);
    let same_te = || -> Result<(), Status> {
        if t.shape() != e.shape() {
            return Err(ctx.error(format!(
                "'then' and 'else' must have the same size.  but received: {} vs. {}",
                t.shape(),
                e.shape()
            )));
        }
        Ok(())
    };
    if c.rank() == 0 {
        same_te()?;
        return ctx.set_output(0, if cond[0] { t.clone() } else { e.clone() });
    }
    if c.rank() == 1 && t.rank() != 1 {
        if t.rank() == 0 {
            return Err(ctx.error(format!("'then' must be at least a vector, but saw shape: {}", t.shape())));
        }
        if t.dims()[0] != c.dims()[0] {
            return Err(ctx.error(format!(
                "Number of batches of 'then' must match size of 'cond', but saw: {} vs. {}",
                t.dims()[0],
                c.dims()[0]
            )));
        }
        same_te()?;
        let row = if cond.is_empty() { 0 } else { tv.len() / cond.len() };
        let mut out = ferroflow_core::alloc::with_capacity(t.dims())?;
        for (i, &k) in cond.iter().enumerate() {
            out.extend_from_slice(if k { &tv[i * row..(i + 1) * row] } else { &ev[i * row..(i + 1) * row] });
        }
        return ctx.set_output(0, Tensor::new(t.shape().clone(), out)?);
    }
    for (i, (a, b)) in [(&c, &t), (&t, &e)].into_iter().enumerate() {
        if a.shape() != b.shape() {
            return Err(ctx.error(format!(
                "Inputs to operation Select of type Select must have the same size and shape.  Input {i}: {} != input {}: {}",
                a.shape(),
                i + 1,
                b.shape()
            )));
        }
    }
    let out = collect_vec(
        t.dims(),
        cond.iter().zip(tv.iter().zip(ev)).map(|(&k, (x, y))| if k { x.clone() } else { y.clone() }),
    )?;
    ctx.set_output(0, Tensor::new(t.shape().clone(), out)?)
}

fn select_v2<T: Elem>(ctx: &mut OpContext) -> Result<(), Status> {
    let (c, t, e) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    let plan = Plan::new([c.dims(), t.dims(), e.dims()]).ok_or_else(|| {
        ctx.error(format!("condition {}, then {}, and else {} must be broadcastable", c.shape(), t.shape(), e.shape()))
    })?;
    let cond = typed::<bool>(ctx, &c)?;
    let (tv, ev) = (typed::<T>(ctx, &t)?, typed::<T>(ctx, &e)?);
    if c.rank() == 0 && plan.out_shape() == t.dims() && plan.out_shape() == e.dims() {
        return ctx.set_output(0, if cond[0] { t.clone() } else { e.clone() });
    }
    let mut out = ferroflow_core::alloc::zeroed::<T>(plan.out_shape())?;
    par_runs(&plan, &mut out, |o, [oc, ot, oe], [sc, st, se]| {
        for (i, v) in o.iter_mut().enumerate() {
            *v = if cond[oc + i * sc] { tv[ot + i * st].clone() } else { ev[oe + i * se].clone() };
        }
    });
    ctx.set_output(0, Tensor::new(plan.out_shape(), out)?)
}

impl OpKernel for Select {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        if self.v2 {
            dispatch!(self.ty, ctx, [f32, f64, i32, i64, u8, bool, Vec<u8>], |T| select_v2::<T>(ctx))
        } else {
            dispatch!(self.ty, ctx, [f32, f64, i32, i64, u8, bool, Vec<u8>], |T| select_v1::<T>(ctx))
        }
    }
}

fn make(n: &NodeDef, v2: bool) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Select { ty: kernel_type(n, "T", SELECT_TYPES)?, v2 }))
}

/// Registers Select and SelectV2.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Select", |n| make(n, false));
    r.add("SelectV2", |n| make(n, true));
}
