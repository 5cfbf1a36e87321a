//! Pack (`tf.stack`) and Unpack (`tf.unstack`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor};

use super::concat::concat_typed;
use super::util::product;
use crate::{KernelRegistry, OpContext, OpKernel};

op_kernel! {
    struct Pack { axis: i64 }
    fn compute(&self, ctx) {
        let n = ctx.num_inputs();
        let inputs: Vec<Tensor> = (0..n).map(|i| ctx.input(i)).collect::<Result<_, _>>()?;
        let first = &inputs[0];
        let r = first.rank() as i64 + 1;
        if self.axis < -r || self.axis >= r {
            return Err(ctx.error(format!("axis = {} not in [{}, {r})", self.axis, -r)));
        }
        let axis = if self.axis < 0 { self.axis + r } else { self.axis } as usize;
        let mut expanded = first.dims().to_vec();
        expanded.insert(axis, 1);
        let mut parts = Vec::with_capacity(n);
        for (i, t) in inputs.iter().enumerate() {
            if t.shape() != first.shape() {
                return Err(ctx.error(format!(
                    "Shapes of all inputs must match: values[0].shape = {} != values[{i}].shape = {}",
                    first.shape(),
                    t.shape()
                )));
            }
            if t.dtype() != first.dtype() {
                return Err(ctx.error(format!("values[{i}] is {} but values[0] is {}", t.dtype(), first.dtype())));
            }
            parts.push(t.reshape(expanded.clone())?);
        }
        let mut out_dims = expanded;
        out_dims[axis] = n;
        let out = ferroflow_core::with_dtype!(first.dtype(), T => Tensor::new(out_dims.clone(), concat_typed::<T>(&parts, axis, &out_dims)?))?;
        ctx.set_output(0, out)
    }
}

fn pack_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Pack { axis: n.attr_int("axis")? }))
}

struct Unpack {
    num: i64,
    axis: i64,
}

fn unpack_typed<T: ferroflow_core::TensorType>(
    x: &Tensor,
    axis: usize,
    out_dims: &[usize],
) -> Result<Vec<Tensor>, Status> {
    let src = x.as_slice::<T>()?;
    let num = x.dims()[axis];
    let outer = product(&x.dims()[..axis]);
    let inner = product(&x.dims()[axis + 1..]);
    (0..num)
        .map(|i| {
            let mut v = ferroflow_core::alloc::with_capacity(out_dims)?;
            for o in 0..outer {
                let s = (o * num + i) * inner;
                v.extend_from_slice(&src[s..s + inner]);
            }
            Tensor::new(out_dims.to_vec(), v)
        })
        .collect()
}

impl OpKernel for Unpack {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let r = x.rank() as i64;
        if self.axis < -r || self.axis >= r {
            return Err(ctx.error(format!("axis = {} not in [{}, {r})", self.axis, -r)));
        }
        let axis = if self.axis < 0 { self.axis + r } else { self.axis } as usize;
        if x.dims()[axis] as i64 != self.num {
            return Err(ctx.error(format!("Input shape axis {axis} must equal {}, got shape {}", self.num, x.shape())));
        }
        let mut out_dims = x.dims().to_vec();
        out_dims.remove(axis);
        let outs = ferroflow_core::with_dtype!(x.dtype(), T => unpack_typed::<T>(&x, axis, &out_dims))?;
        for (i, t) in outs.into_iter().enumerate() {
            ctx.set_output(i, t)?;
        }
        Ok(())
    }
}

fn unpack_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let num = n.attr_int("num")?;
    if num < 0 {
        return Err(n.node_error(format!("attr 'num' must be >= 0, got {num}")));
    }
    Ok(Box::new(Unpack { num, axis: n.attr_int("axis")? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Pack", pack_factory);
    r.add("Unpack", unpack_factory);
}
