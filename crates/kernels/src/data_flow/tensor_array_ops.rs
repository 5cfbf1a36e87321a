//! TensorArray kernels (TensorFlow's V3 ops, as `tf.compat.v1` loops, `tf.map_fn`,
//! `tf.scan` and their gradients build them): `TensorArrayV3` creates an array in the
//! step's container, `TensorArrayGradV3` / `TensorArrayGradWithShape` its gradient array
//! (shared by every gradient op naming the same `source`), `TensorArrayWriteV3`,
//! `TensorArrayReadV3`, `TensorArraySizeV3`, `TensorArrayCloseV3`. The bulk ops (gather,
//! scatter, concat, split) are in `tensor_array_bulk`. Every op passes its `flow` through.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, ResourceHandle, Status, Tensor};

use super::handles::node_err;
use super::tensor_array::{TensorArray, TensorArrayOptions};
use crate::array::util::{index_scalar, index_vec, tf_type_name};
use crate::state::handle::handle_input;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Container of TensorArrays in a step's resource manager (TensorFlow's).
pub const TENSOR_ARRAY_CONTAINER: &str = "_tensor_arrays";

/// TensorFlow's type name of TensorArrays in resource handles.
const TYPE_NAME: &str = "N10tensorflow11TensorArrayE";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The TensorArray named by input 0.
pub(super) fn array(ctx: &OpContext) -> Result<Arc<TensorArray>, Status> {
    let h = handle_input(ctx, 0)?;
    ctx.step().step_container.lookup::<TensorArray>(TENSOR_ARRAY_CONTAINER, &h.name).map_err(|_| {
        ctx.error_with(Status::not_found(format!(
            "Container {TENSOR_ARRAY_CONTAINER} does not exist. (Could not find resource: \
             {TENSOR_ARRAY_CONTAINER}/{}); a TensorArray lives for one step, on the task that created it",
            h.name
        )))
    })
}

fn set_handle(ctx: &mut OpContext, name: &str) -> Result<(), Status> {
    let h = ResourceHandle::new(ctx.device(), TENSOR_ARRAY_CONTAINER, name, TYPE_NAME);
    ctx.set_output(0, Tensor::scalar(h))
}

/// The float scalar flow input `i`, passed to output `o`.
pub(super) fn pass_flow(ctx: &mut OpContext, i: usize, o: usize) -> Result<(), Status> {
    let f = ctx.input(i)?;
    ctx.set_output(o, f)
}

/// The array of handle input 0, which must hold `want` (what the op's dtype attr says; else
/// InvalidArgument, worded for a write when `writing`).
pub(super) fn typed_array(ctx: &OpContext, want: DataType, writing: bool) -> Result<Arc<TensorArray>, Status> {
    let ta = array(ctx)?;
    if ta.dtype == want {
        return Ok(ta);
    }
    let what = if writing { "is trying to write dtype" } else { "requested dtype" };
    Err(ctx.error(format!("TensorArray dtype is {} but Op {what} {}.", tf_type_name(ta.dtype), tf_type_name(want))))
}

/// [`typed_array`] and the element index of input 1, for a single-element read or write.
fn array_and_index(ctx: &OpContext, want: DataType, writing: bool) -> Result<(Arc<TensorArray>, i64), Status> {
    let ta = typed_array(ctx, want, writing)?;
    let index = index_scalar(&ctx.input(1)?).map_err(|e| node_err(ctx, e))?;
    Ok((ta, index))
}

op_kernel! {
    struct Create {
        dtype: DataType,
        element_shape: Option<Vec<i64>>,
        dynamic_size: bool,
        clear_after_read: bool,
        identical_element_shapes: bool,
        base_name: String,
    }
    fn compute(&self, ctx) {
        let size_t = ctx.input(0)?;
        if size_t.dtype() != DataType::Int32 || size_t.rank() != 0 {
            return Err(ctx.error(format!("TensorArray size must be scalar, but had shape: {}", size_t.shape())));
        }
        let size = size_t.scalar_value::<i32>()?;
        if size < 0 {
            return Err(ctx.error("Size should be >= 0."));
        }
        let name = format!("{}_{}", self.base_name, COUNTER.fetch_add(1, Ordering::Relaxed));
        let ta = TensorArray::new(
            &name,
            TensorArrayOptions {
                dtype: self.dtype,
                size: size as usize,
                dynamic_size: self.dynamic_size,
                multiple_writes_aggregate: false,
                is_grad: false,
                clear_after_read: self.clear_after_read,
                identical_element_shapes: self.identical_element_shapes,
                element_shape: self.element_shape.clone(),
            },
        )
        .map_err(|e| node_err(ctx, e))?;
        ctx.step().step_container.lookup_or_create(TENSOR_ARRAY_CONTAINER, &name, || Ok(ta))?;
        set_handle(ctx, &name)?;
        ctx.set_output(1, Tensor::scalar(0f32))
    }
}

fn create(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let given = n.attr_string("tensor_array_name")?;
    Ok(Box::new(Create {
        dtype: n.attr_type("dtype")?,
        element_shape: n.attr_shape("element_shape")?,
        dynamic_size: n.attr_bool("dynamic_size")?,
        clear_after_read: n.attr_bool("clear_after_read")?,
        identical_element_shapes: n.attr_bool("identical_element_shapes")?,
        base_name: if given.is_empty() { n.name.clone() } else { given },
    }))
}

op_kernel! {
    struct Grad { source: String, with_shape: bool }
    fn compute(&self, ctx) {
        let fwd = array(ctx)?;
        let prepend = if self.with_shape {
            let t = ctx.input(2)?;
            let v = index_vec(&t).map_err(|e| node_err(ctx, e))?;
            if t.rank() != 1 || v.iter().any(|&d| d < 0) {
                return Err(ctx.error(format!("shape_to_prepend must be a vector of sizes >= 0, got {v:?}")));
            }
            Some(v.iter().map(|&d| d as usize).collect::<Vec<_>>())
        } else {
            None
        };
        let name = match &prepend {
            Some(p) => format!("{}@{}:{p:?}", fwd.name, self.source),
            None => format!("{}@{}", fwd.name, self.source),
        };
        ctx.step()
            .step_container
            .lookup_or_create(TENSOR_ARRAY_CONTAINER, &name, || fwd.make_grad(&name, prepend.as_deref()))
            .map_err(|e| node_err(ctx, e))?;
        set_handle(ctx, &name)?;
        pass_flow(ctx, 1, 1)
    }
}

op_kernel! {
    struct Write { dtype: DataType }
    fn compute(&self, ctx) {
        let (ta, index) = array_and_index(ctx, self.dtype, true)?;
        let value = ctx.input(2)?;
        ta.write(index, value).map_err(|e| node_err(ctx, e))?;
        pass_flow(ctx, 3, 0)
    }
}

op_kernel! {
    struct Read { dtype: DataType }
    fn compute(&self, ctx) {
        let (ta, index) = array_and_index(ctx, self.dtype, false)?;
        let v = ta.read(index).map_err(|e| node_err(ctx, e))?;
        ctx.set_output(0, v)
    }
}

op_kernel! {
    struct Size;
    fn compute(&self, ctx) {
        let n = array(ctx)?.size().map_err(|e| node_err(ctx, e))?;
        ctx.set_output(0, Tensor::scalar(i32::try_from(n).unwrap_or(i32::MAX)))
    }
}

op_kernel! {
    struct Close;
    fn compute(&self, ctx) {
        array(ctx)?.close();
        Ok(())
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("TensorArrayV3", create);
    r.add_cheap("TensorArrayGradV3", |n| Ok(Box::new(Grad { source: n.attr_string("source")?, with_shape: false })));
    r.add_cheap("TensorArrayGradWithShape", |n| {
        Ok(Box::new(Grad { source: n.attr_string("source")?, with_shape: true }))
    });
    r.add("TensorArrayWriteV3", |n| Ok(Box::new(Write { dtype: n.attr_type("T")? })));
    r.add("TensorArrayReadV3", |n| Ok(Box::new(Read { dtype: n.attr_type("dtype")? })));
    r.add_cheap("TensorArraySizeV3", |_| Ok(Box::new(Size)));
    r.add_cheap("TensorArrayCloseV3", |_| Ok(Box::new(Close)));
    super::tensor_array_bulk::register(r);
}
