//! `ReduceJoin` (`tf.strings.reduce_join`): joins the strings of `inputs` over the
//! `reduction_indices` axes with `separator`. The first listed axis varies fastest in the
//! joined order, as in TensorFlow (`[[a, b], [c, d]]` over `[0, 1]` is `acbd`, over
//! `[1, 0]` `abcd`); an empty list reduces nothing; a reduced axis of size 0 gives empty
//! strings. `keep_dims` keeps the reduced axes with size 1.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Shape, Status};

use super::{string_tensor, strings, StringsOut};
use crate::array::util::index_vec;
use crate::{KernelRegistry, OpKernel};

op_kernel! {
    struct ReduceJoin { keep_dims: bool, separator: Vec<u8> }
    fn compute(&self, ctx) {
        let (x, axes_t) = (ctx.input(0)?, ctx.input(1)?);
        let v = strings(ctx, "inputs", &x)?;
        let dims = x.dims().to_vec();
        let rank = dims.len() as i64;
        let mut axes = Vec::new();
        for a in index_vec(&axes_t)? {
            if a < -rank || a >= rank {
                return Err(ctx.error(format!("Invalid reduction dimension {a} for input with {rank} dimensions.")));
            }
            let a = a.rem_euclid(rank.max(1)) as usize;
            if axes.contains(&a) {
                return Err(ctx.error(format!("Duplicate reduction dimension {a}")));
            }
            axes.push(a);
        }
        // Row-major strides of the input.
        let mut strides = vec![1usize; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * dims[d + 1];
        }
        // Offsets of the reduced elements of one output: each listed axis loops outside the
        // ones before it, so the first varies fastest.
        let kept: Vec<usize> = (0..dims.len()).filter(|d| !axes.contains(d)).collect();
        let out_n: usize = kept.iter().map(|&d| dims[d]).product();
        let out_dims: Vec<usize> = if self.keep_dims {
            (0..dims.len()).map(|d| if axes.contains(&d) { 1 } else { dims[d] }).collect()
        } else {
            kept.iter().map(|&d| dims[d]).collect()
        };
        ferroflow_core::check_tensor_alloc(&out_dims, ferroflow_core::DataType::String)
            .map_err(|e| ctx.error_with(e))?;
        let mut offsets = vec![0usize];
        // (With no output, the reduced dims' product may exceed the input's size.)
        for &a in axes.iter().filter(|_| out_n > 0) {
            let step = strides[a];
            offsets = (0..dims[a]).flat_map(|i| offsets.iter().map(move |&o| o + i * step)).collect();
        }
        // The joined bytes first: a long separator repeated for every element can make the
        // output far larger than the input.
        let seps = offsets.len().saturating_sub(1).checked_mul(self.separator.len());
        let bytes = seps
            .and_then(|s| s.checked_add(std::mem::size_of::<Vec<u8>>()))
            .and_then(|s| s.checked_mul(out_n))
            .and_then(|b| b.checked_add(if out_n == 0 { 0 } else { v.iter().map(Vec::len).sum::<usize>() }));
        ferroflow_core::check_alloc_bytes(bytes.map(|b| b as u64), || {
            format!("the {out_n} strings ReduceJoin makes of {} elements", v.len())
        })?;
        let mut out = StringsOut::new(&out_dims, "ReduceJoin")?;
        let mut coord = vec![0usize; kept.len()];
        for _ in 0..out_n {
            let base: usize = kept.iter().zip(&coord).map(|(&d, &c)| c * strides[d]).sum();
            let mut s = Vec::new();
            for (k, &o) in offsets.iter().enumerate() {
                if k > 0 {
                    s.extend_from_slice(&self.separator);
                }
                s.extend_from_slice(&v[base + o]);
            }
            out.push(s)?;
            for i in (0..kept.len()).rev() {
                coord[i] += 1;
                if coord[i] < dims[kept[i]] {
                    break;
                }
                coord[i] = 0;
            }
        }
        ctx.set_output(0, string_tensor(Shape::new(out_dims), out.into_vec())?)
    }
}

fn make(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(ReduceJoin {
        keep_dims: node.attr_bool("keep_dims")?,
        separator: node.attr_string("separator")?.into_bytes(),
    }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ReduceJoin", make);
}
