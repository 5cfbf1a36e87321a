//! AddN: the elementwise sum of N tensors of one shape, in input order.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType, C128, C64};
use rayon::prelude::*;

use super::bcast::{chunk_len, is_unshared, PAR_THRESHOLD};
use super::common::{kernel_type, typed};
use super::dtypes::NUMERIC_AND_COMPLEX;
use super::elem::Num;
use crate::array::util::copy_vec;
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

struct AddN {
    ty: DataType,
}

fn add_n<T: TensorType + Copy + Send + Sync>(
    ctx: &mut OpContext,
    add: impl Fn(T, T) -> T + Sync,
) -> Result<(), Status> {
    let n = ctx.num_inputs();
    if n == 0 {
        return Err(ctx.error("AddN needs at least one input"));
    }
    let mut xs = Vec::with_capacity(n);
    for i in 0..n {
        xs.push(ctx.take_input(i)?);
    }
    for (i, x) in xs.iter().enumerate() {
        typed::<T>(ctx, x)?;
        if x.shape() != xs[0].shape() {
            return Err(ctx.error(format!(
                "Inputs to operation AddN of type AddN must have the same size and shape.  Input 0: {} != input {i}: {}",
                xs[0].shape(),
                x.shape()
            )));
        }
    }
    let mut acc = xs.remove(0);
    let rest = xs;
    if !is_unshared(&acc) {
        acc = Tensor::new(acc.shape().clone(), copy_vec::<T>(&acc)?)?;
    }
    {
        let others: Vec<&[T]> = rest.iter().map(|t| typed::<T>(ctx, t)).collect::<Result<_, _>>()?;
        let out = acc.data_mut::<T>()?;
        let sum_chunk = |start: usize, o: &mut [T]| {
            let n = o.len();
            for x in &others {
                o.iter_mut().zip(&x[start..start + n]).for_each(|(v, &y)| *v = add(*v, y));
            }
        };
        if out.len() <= PAR_THRESHOLD {
            sum_chunk(0, out);
        } else {
            let c = chunk_len(out.len());
            out.par_chunks_mut(c).enumerate().for_each(|(i, o)| sum_chunk(i * c, o));
        }
    }
    drop(rest);
    ctx.set_output(0, acc)
}

impl OpKernel for AddN {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        if self.ty.is_complex() {
            return dispatch!(self.ty, ctx, [C64, C128], |T| add_n::<T>(ctx, |a: T, b: T| a + b));
        }
        dispatch!(self.ty, ctx, [f32, f64, i32, i64, u8], |T| add_n::<T>(ctx, T::add))
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let count = n.attr_int("N")?;
    if count < 1 {
        return Err(n.node_error(format!("attr N = {count} must be at least 1")));
    }
    if n.attr_type("T")? == ferroflow_core::DataType::Variant {
        return Ok(Box::new(crate::data_flow::tensor_list::AddNLists));
    }
    Ok(Box::new(AddN { ty: kernel_type(n, "T", NUMERIC_AND_COMPLEX)? }))
}

/// Registers AddN.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("AddN", make);
}
