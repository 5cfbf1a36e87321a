//! ReverseSequence: for every batch entry `b`, the first `seq_lengths[b]` slices along
//! `seq_dim` reversed (the rest kept), as bidirectional RNNs over padded sequences use.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor, TensorType};

use super::util::{index_vec, product};
use crate::{KernelRegistry, OpContext, OpKernel};

struct ReverseSequence {
    seq_dim: i64,
    batch_dim: i64,
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let batch_dim = if n.has_attr("batch_dim") { n.attr_int("batch_dim")? } else { 0 };
    Ok(Box::new(ReverseSequence { seq_dim: n.attr_int("seq_dim")?, batch_dim }))
}

/// The source position of output element `i`.
fn source_index<'a>(dims: &'a [usize], seq: usize, batch: usize, lens: &'a [usize]) -> impl Fn(usize) -> usize + 'a {
    let strides: Vec<usize> = (0..dims.len()).map(|d| product(&dims[d + 1..])).collect();
    move |i| {
        let b = (i / strides[batch]) % dims[batch];
        let s = (i / strides[seq]) % dims[seq];
        let len = lens[b];
        if s < len {
            let from = len - 1 - s;
            i - s * strides[seq] + from * strides[seq]
        } else {
            i
        }
    }
}

/// The elements of `x` (`src`), each from its source position.
fn gather_at<T: TensorType>(x: &Tensor, src: &[T], at: impl Fn(usize) -> usize) -> Result<Vec<T>, Status> {
    let mut out = ferroflow_core::alloc::with_capacity(x.dims())?;
    out.extend((0..src.len()).map(|i| src[at(i)].clone()));
    Ok(out)
}

impl OpKernel for ReverseSequence {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let lens_t = ctx.input(1)?;
        let r = x.rank() as i64;
        let (seq, batch) = (self.seq_dim, self.batch_dim);
        let norm = |d: i64| if d < 0 { d + r } else { d };
        let (seq, batch) = (norm(seq), norm(batch));
        if !(0..r).contains(&batch) {
            return Err(ctx.error(format!("Invalid batch_dim {}", self.batch_dim)));
        }
        if !(0..r).contains(&seq) {
            return Err(ctx.error(format!("Invalid seq_dim {}", self.seq_dim)));
        }
        if seq == batch {
            return Err(ctx.error(format!("seq_dim == batch_dim == {seq}")));
        }
        let (seq, batch) = (seq as usize, batch as usize);
        if lens_t.rank() != 1 {
            return Err(ctx.error(format!("seq_lengths must be 1-dim, not {}", lens_t.rank())));
        }
        let lens = index_vec(&lens_t).map_err(|e| ctx.error(e.message))?;
        if lens.len() != x.dims()[batch] {
            return Err(ctx.error(format!(
                "Length of seq_lengths != input.dims({batch}), ({} vs. {})",
                lens.len(),
                x.dims()[batch]
            )));
        }
        let max = x.dims()[seq] as i64;
        for (b, &l) in lens.iter().enumerate() {
            if l < 0 {
                return Err(ctx.error(format!("seq_lengths({b}) < 0")));
            }
            if l > max {
                return Err(ctx.error(format!("seq_lengths({b}) > input.dims({seq}), ({l} vs. {max})")));
            }
        }
        let lens: Vec<usize> = lens.iter().map(|&l| l as usize).collect();
        let at = source_index(x.dims(), seq, batch, &lens);
        let out = ferroflow_core::with_dtype!(x.dtype(), T => Tensor::new(x.shape().clone(), gather_at(&x, x.as_slice::<T>()?, &at)?))?;
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ReverseSequence", make);
}
