//! TensorArray kernels that move many elements at once: `TensorArrayGatherV3` (`stack()`
//! is a gather of every index), `TensorArrayScatterV3` (`unstack()`),
//! `TensorArrayConcatV3` and `TensorArraySplitV3`, with TensorFlow's checks and messages.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor};

use super::handles::node_err;
use super::tensor_array::{concat_rows, partial_text, stack_tensors};
use super::tensor_array_ops::{pass_flow, typed_array};
use crate::array::util::{check_alloc, index_vec, split_rows};
use crate::{KernelRegistry, OpContext, OpKernel};

fn full(p: &Option<Vec<i64>>) -> Option<Vec<usize>> {
    match p {
        Some(d) if d.iter().all(|&x| x >= 0) => Some(d.iter().map(|&x| x as usize).collect()),
        _ => None,
    }
}

/// The element dims `known` that an op reading a zero-size array outputs; else TensorFlow's
/// Unimplemented: `what` (the attr `partial`) is not fully defined for `reading` it.
fn zero_size_elements(
    ctx: &OpContext,
    known: Option<Vec<usize>>,
    what: &str,
    partial: &Option<Vec<i64>>,
    reading: &str,
) -> Result<Vec<usize>, Status> {
    known.ok_or_else(|| {
        node_err(
            ctx,
            Status::unimplemented(format!(
                "TensorArray has size zero, but {what} {} is not fully defined. Currently only static shapes are \
                 supported when {reading} zero-size TensorArrays.",
                partial_text(partial)
            )),
        )
    })
}

/// The int vector input `i`; else InvalidArgument `"{expected}: {shape}"` (TensorFlow's
/// words for the op's indices or lengths).
fn int_vector(ctx: &OpContext, i: usize, expected: &str) -> Result<Vec<i64>, Status> {
    let t = ctx.input(i)?;
    if t.rank() != 1 {
        return Err(ctx.error(format!("{expected}: {}", t.shape())));
    }
    index_vec(&t).map_err(|e| node_err(ctx, e))
}

const INDICES_NOT_VECTOR: &str = "Expected indices to be a vector, but received shape";

/// The value input `i` of a scatter or split: at least a vector (its rows are the elements).
fn rows_value(ctx: &OpContext, i: usize) -> Result<Tensor, Status> {
    let value = ctx.input(i)?;
    if value.rank() == 0 {
        return Err(ctx.error(format!("Expected value to be at least a vector, but received shape: {}", value.shape())));
    }
    Ok(value)
}

op_kernel! {
    struct Gather { dtype: DataType, element_shape: Option<Vec<i64>> }
    fn compute(&self, ctx) {
        let ta = typed_array(ctx, self.dtype, false)?;
        let indices = int_vector(ctx, 1, INDICES_NOT_VECTOR)?;
        if indices.is_empty() {
            let known = full(&self.element_shape).or_else(|| full(&ta.element_shape().ok().flatten()));
            let elem = zero_size_elements(ctx, known, "element shape", &self.element_shape, "packing")?;
            let out = stack_tensors(self.dtype, &Shape::new(elem), &[])?;
            return ctx.set_output(0, out);
        }
        let vals = ta.read_many(&indices).map_err(|e| node_err(ctx, e))?;
        let first = vals[0].shape().clone();
        for (i, v) in vals.iter().enumerate().skip(1) {
            if v.shape() != &first {
                return Err(ctx.error(format!(
                    "TensorArray has inconsistent shapes.  Index 0 has shape: {first} but index {i} has shape: {}",
                    v.shape()
                )));
            }
        }
        let out = stack_tensors(self.dtype, &first, &vals).map_err(|e| node_err(ctx, e))?;
        ctx.set_output(0, out)
    }
}

op_kernel! {
    struct Scatter { dtype: DataType }
    fn compute(&self, ctx) {
        let ta = typed_array(ctx, self.dtype, true)?;
        let indices = int_vector(ctx, 1, INDICES_NOT_VECTOR)?;
        let value = rows_value(ctx, 2)?;
        if value.dims()[0] != indices.len() {
            return Err(ctx.error(format!(
                "Expected len(indices) == values.shape[0], but saw: {} vs. {}",
                indices.len(),
                value.dims()[0]
            )));
        }
        if !ta.has_dynamic_size().map_err(|e| node_err(ctx, e))? {
            let size = ta.size().map_err(|e| node_err(ctx, e))? as i64;
            if let Some(&m) = indices.iter().max() {
                if m >= size {
                    return Err(ctx.error(format!("Max scatter index must be < array size ({m} vs. {size})")));
                }
            }
        }
        let rows = split_rows(&value, &vec![1; indices.len()])?;
        let rows: Vec<Tensor> =
            rows.into_iter().map(|r| r.reshape(Shape::new(value.dims()[1..].to_vec()))).collect::<Result<_, _>>()?;
        ta.write_many(&indices, rows).map_err(|e| node_err(ctx, e))?;
        pass_flow(ctx, 3, 0)
    }
}

op_kernel! {
    struct Concat { dtype: DataType, except0: Option<Vec<i64>> }
    fn compute(&self, ctx) {
        let ta = typed_array(ctx, self.dtype, false)?;
        let vals = ta.read_all().map_err(|e| node_err(ctx, e))?;
        if vals.is_empty() {
            let rest =
                zero_size_elements(ctx, full(&self.except0), "element_shape_except0", &self.except0, "concatenating")?;
            let mut dims = vec![0];
            dims.extend(rest);
            ctx.set_output(0, Tensor::zeros(self.dtype, Shape::new(dims))?)?;
            return ctx.set_output(1, Tensor::vec(Vec::<i64>::new()));
        }
        let mut lengths = Vec::with_capacity(vals.len());
        let mut rest0: Option<Vec<usize>> = None;
        for (i, v) in vals.iter().enumerate() {
            if v.rank() == 0 {
                return Err(ctx.error(format!(
                    "Concat saw a scalar shape at index {i} but requires at least vectors.  Did you mean to call \
                     .stack() instead?"
                )));
            }
            let rest = v.dims()[1..].to_vec();
            match &rest0 {
                None => rest0 = Some(rest),
                Some(r) if *r != rest => {
                    return Err(ctx.error(format!(
                        "TensorArray has inconsistent shapes.  Index 0 has (exclusive of first dimension) shape: {} \
                         but index {i} has (exclusive of first dimension) shape: {}",
                        Shape::new(r.clone()),
                        Shape::new(rest)
                    )))
                }
                _ => {}
            }
            lengths.push(v.dims()[0] as i64);
        }
        let mut dims = vec![lengths.iter().sum::<i64>() as usize];
        dims.extend(rest0.unwrap_or_default());
        check_alloc(&dims, self.dtype)?;
        let out = concat_rows(self.dtype, dims, &vals).map_err(|e| node_err(ctx, e))?;
        ctx.set_output(0, out)?;
        ctx.set_output(1, Tensor::vec(lengths))
    }
}

op_kernel! {
    struct Split { dtype: DataType }
    fn compute(&self, ctx) {
        let ta = typed_array(ctx, self.dtype, true)?;
        let value = rows_value(ctx, 1)?;
        let lens = int_vector(ctx, 2, "Expected lengths to be a vector, received shape")?;
        let sum = lens.iter().try_fold(0i64, |a, &l| if l < 0 { None } else { a.checked_add(l) });
        if sum != Some(value.dims()[0] as i64) {
            return Err(ctx.error(format!(
                "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is: {} and value's shape \
                 is: {}",
                lens.iter().fold(0i64, |a, &l| a.wrapping_add(l)),
                value.shape()
            )));
        }
        let size = ta.size().map_err(|e| node_err(ctx, e))?;
        if !ta.has_dynamic_size().map_err(|e| node_err(ctx, e))? && size != lens.len() {
            return Err(ctx.error(format!(
                "TensorArray's size is not equal to the size of lengths ({size} vs. {}), and the TensorArray is not \
                 marked as dynamically resizeable",
                lens.len()
            )));
        }
        let ulens: Vec<usize> = lens.iter().map(|&l| l as usize).collect();
        let parts = split_rows(&value, &ulens)?;
        let indices: Vec<i64> = (0..parts.len() as i64).collect();
        ta.write_many(&indices, parts).map_err(|e| node_err(ctx, e))?;
        pass_flow(ctx, 3, 0)
    }
}

fn gather(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Gather { dtype: n.attr_type("dtype")?, element_shape: n.attr_shape("element_shape")? }))
}

fn concat(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Concat { dtype: n.attr_type("dtype")?, except0: n.attr_shape("element_shape_except0")? }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("TensorArrayGatherV3", gather);
    r.add("TensorArrayScatterV3", |n| Ok(Box::new(Scatter { dtype: n.attr_type("T")? })));
    r.add("TensorArrayConcatV3", concat);
    r.add("TensorArraySplitV3", |n| Ok(Box::new(Split { dtype: n.attr_type("T")? })));
}
