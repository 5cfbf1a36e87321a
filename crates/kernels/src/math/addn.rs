//! AddN: the elementwise sum of N tensors of one shape, in input order.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};
use rayon::prelude::*;

use super::bcast::{chunk_len, is_unshared, PAR_THRESHOLD};
use super::common::{kernel_type, typed};
use super::dtypes::NUMERIC;
use super::elem::Num;
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

struct AddN {
    ty: DataType,
}

fn add_n<T: Num>(ctx: &mut OpContext) -> Result<(), Status> {
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
        acc = Tensor::new(acc.shape().clone(), acc.as_slice::<T>()?.to_vec())?;
    }
    {
        let others: Vec<&[T]> = rest.iter().map(|t| typed::<T>(ctx, t)).collect::<Result<_, _>>()?;
        let out = acc.data_mut::<T>()?;
        let sum_chunk = |start: usize, o: &mut [T]| {
            let n = o.len();
            for x in &others {
                o.iter_mut().zip(&x[start..start + n]).for_each(|(v, &y)| *v = v.add(y));
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
        dispatch!(self.ty, ctx, [f32, f64, i32, i64, u8], |T| add_n::<T>(ctx))
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
    Ok(Box::new(AddN { ty: kernel_type(n, "T", NUMERIC)? }))
}

/// Registers AddN.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("AddN", make);
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code};

    use super::*;
    use crate::testutil::{node, run_kernel};

    fn run(xs: Vec<Tensor>) -> Result<Tensor, Status> {
        let n = node("AddN", &[("T", attr::ty(xs[0].dtype())), ("N", attr::int(xs.len() as i64))]);
        run_kernel(n, xs, 1).map(|mut v| v.remove(0))
    }

    #[test]
    fn sums() {
        let a = Tensor::vec(vec![1.0f32, 2.]);
        let out = run(vec![a.clone(), a.clone(), Tensor::vec(vec![10.0f32, 20.])]).unwrap();
        assert_eq!(out.as_slice::<f32>().unwrap(), &[12., 24.]);
        assert_eq!(a.as_slice::<f32>().unwrap(), &[1., 2.]);
        let out = run(vec![Tensor::vec(vec![200u8]), Tensor::vec(vec![100u8])]).unwrap();
        assert_eq!(out.as_slice::<u8>().unwrap(), &[44]);
        let one = run(vec![Tensor::vec(vec![7i64])]).unwrap();
        assert_eq!(one.as_slice::<i64>().unwrap(), &[7]);
        let big: Vec<Tensor> = (0..3).map(|k| Tensor::vec(vec![k as f64; 100_000])).collect();
        assert_eq!(run(big).unwrap().as_slice::<f64>().unwrap()[99_999], 3.);
    }

    #[test]
    fn shape_mismatch() {
        let e = run(vec![Tensor::new(vec![2usize, 2], vec![1.0f32; 4]).unwrap(), Tensor::vec(vec![1.0f32; 2])]);
        let e = e.unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("Input 0: [2,2] != input 1: [2]"), "{e}");
    }
}
