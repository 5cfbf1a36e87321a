//! `UnsortedSegmentJoin` (`tf.strings.unsorted_segment_join`): the strings of each segment
//! joined in input order with `separator`; segments nobody names stay empty. As in
//! TensorFlow, the separator goes before a string only when the segment's result so far is
//! non-empty (so leading empty strings leave no separator behind).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Shape, Status};

use super::{string_tensor, strings};
use crate::array::util::index_vec;
use crate::{KernelRegistry, OpKernel};

op_kernel! {
    struct UnsortedSegmentJoin { separator: Vec<u8> }
    fn compute(&self, ctx) {
        let (x, ids_t, n_t) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let v = strings(ctx, "inputs", &x)?;
        if n_t.num_elements() == 0 {
            return Err(ctx.error("Number of segments cannot be empty."));
        }
        let num = index_vec(&n_t)?[0];
        if ids_t.rank() == 0 {
            return Err(ctx.error("Segment_id cannot have rank 0"));
        }
        if ids_t.rank() > x.rank() {
            return Err(Status::out_of_range(format!(
                "Invalid segment_id rank {} for input with {} dimension(s)",
                ids_t.rank(),
                x.rank()
            ))
            .in_node(&ctx.node().name, &ctx.node().op));
        }
        for (i, (&s, &d)) in ids_t.dims().iter().zip(x.dims()).enumerate() {
            if s != d {
                return Err(
                    ctx.error(format!("Segment dimension is {s} while input dimension is {} in rank {i}", x.rank()))
                );
            }
        }
        if num < 0 {
            return Err(ctx.error(format!("num_segments must be >= 0, got {num}")));
        }
        let ids = index_vec(&ids_t)?;
        if ids.iter().any(|&i| i < 0 || i >= num) {
            return Err(ctx.error("segment_ids are not allowed to exceed num_segments or to have negative values."));
        }
        let inner: usize = x.dims()[ids_t.rank()..].iter().product();
        let mut out_dims = vec![num as usize];
        out_dims.extend_from_slice(&x.dims()[ids_t.rank()..]);
        ferroflow_core::check_tensor_alloc(&out_dims, ferroflow_core::DataType::String)
            .map_err(|e| ctx.error_with(e))?;
        let bytes = v.iter().map(Vec::len).sum::<usize>().checked_add(self.separator.len().saturating_mul(v.len()));
        ferroflow_core::check_alloc_bytes(bytes.map(|b| b as u64), || {
            format!("the strings UnsortedSegmentJoin makes of {} elements", v.len())
        })?;
        let total = num as usize * inner;
        let mut out: Vec<Vec<u8>> = vec![Vec::new(); total];
        for j in 0..inner {
            for (i, &id) in ids.iter().enumerate() {
                let o = &mut out[id as usize * inner + j];
                if !o.is_empty() {
                    o.extend_from_slice(&self.separator);
                }
                o.extend_from_slice(&v[i * inner + j]);
            }
        }
        ctx.set_output(0, string_tensor(Shape::new(out_dims), out)?)
    }
}

fn make(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(UnsortedSegmentJoin { separator: node.attr_string("separator")?.into_bytes() }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("UnsortedSegmentJoin", make);
}
