//! TensorList ops that move many elements at once, as TensorFlow 2's `tf.TensorArray`
//! builds them in graphs: `TensorListGather` (`gather`), `TensorListScatterIntoExistingList`
//! (`scatter`), `TensorListSplit` (`split`) and `TensorListConcatV2` (`concat`).

use ferroflow_core::{Shape, Status, Tensor, TensorList};

use super::tensor_array::concat_rows;
use super::tensor_list::{check_element, list_input, set_list, shape_input, stack_items, zeros_for, Stacking};
use crate::array::util::{index_vec, split_rows, FnKernel};
use crate::{KernelRegistry, OpContext};

fn gather(ctx: &mut OpContext) -> Result<(), Status> {
    let l = list_input(ctx, 0)?;
    let indices = index_vec(&ctx.input(1)?).map_err(|e| ctx.error(e.message))?;
    let shape = shape_input(ctx, 2)?;
    let mut items = Vec::with_capacity(indices.len());
    for &i in &indices {
        let Some(slot) = usize::try_from(i).ok().and_then(|u| l.tensors.get(u)) else {
            return Err(ctx.error(format!("Trying to gather element {i} in a list with {} elements.", l.tensors.len())));
        };
        items.push(match slot {
            Some(t) => t.clone(),
            None => zeros_for(ctx, &l, shape.clone(), i as usize)?,
        });
    }
    let out = stack_items(ctx, &l, &items, &shape, Stacking::Gather)?;
    ctx.set_output(0, out)
}

fn scatter_into(ctx: &mut OpContext) -> Result<(), Status> {
    let l = list_input(ctx, 0)?;
    let t = ctx.input(1)?;
    let indices = index_vec(&ctx.input(2)?).map_err(|e| ctx.error(e.message))?;
    if t.rank() == 0 {
        return Err(ctx.error(format!("Tensor must be at least a vector, but saw shape: {}", t.shape())));
    }
    if indices.len() != t.dims()[0] {
        return Err(ctx.error(format!(
            "Invalid number of rows in input tensor. Expected: {} Actual: {}",
            indices.len(),
            t.dims()[0]
        )));
    }
    let rows = split_rows(&t, &vec![1; indices.len()])?;
    let mut out = (*l).clone();
    for (&i, r) in indices.iter().zip(rows) {
        let r = r.reshape(Shape::new(t.dims()[1..].to_vec()))?;
        check_element(ctx, &out, &r, "the scattered element")?;
        let Some(slot) = usize::try_from(i).ok().and_then(|u| out.tensors.get_mut(u)) else {
            return Err(ctx.error(format!("Trying to modify element {i} in a list with {} elements.", l.tensors.len())));
        };
        *slot = Some(r);
    }
    set_list(ctx, 0, out)
}

fn split(ctx: &mut OpContext) -> Result<(), Status> {
    let t = ctx.input(0)?;
    let shape = shape_input(ctx, 1)?;
    let lens = index_vec(&ctx.input(2)?).map_err(|e| ctx.error(e.message))?;
    if t.rank() == 0 {
        return Err(ctx.error(format!("Tensor must be at least a vector, but saw shape: {}", t.shape())));
    }
    let sum = lens.iter().try_fold(0i64, |a, &x| if x < 0 { None } else { a.checked_add(x) });
    if sum != Some(t.dims()[0] as i64) {
        return Err(ctx.error(format!(
            "Unable to split tensor of shape {} into lengths {lens:?}: the lengths must be non-negative and sum to {}",
            t.shape(),
            t.dims()[0]
        )));
    }
    let ulens: Vec<usize> = lens.iter().map(|&x| x as usize).collect();
    let parts = split_rows(&t, &ulens)?;
    let mut l = TensorList::new(t.dtype(), shape, -1);
    l.tensors = parts.into_iter().map(Some).collect();
    set_list(ctx, 0, l)
}

fn concat(ctx: &mut OpContext) -> Result<(), Status> {
    let l = list_input(ctx, 0)?;
    let shape = shape_input(ctx, 1)?;
    let mut items = Vec::with_capacity(l.tensors.len());
    for (i, t) in l.tensors.iter().enumerate() {
        let t = match t {
            Some(t) => t.clone(),
            None => zeros_for(ctx, &l, shape.clone(), i)?,
        };
        if t.rank() == 0 {
            return Err(ctx.error("Concat requires elements to be at least vectors, found scalars instead."));
        }
        items.push(t);
    }
    let rest: Vec<usize> = match (items.first(), &shape) {
        (Some(t), _) => t.dims()[1..].to_vec(),
        (None, Some(d)) if d.len() > 1 && d[1..].iter().all(|&x| x >= 0) => {
            d[1..].iter().map(|&x| x as usize).collect()
        }
        _ => {
            return Err(ctx.error(format!(
                "All except the first dimension must be fully defined when concating an empty tensor list. \
                 element_shape: {}",
                l.shape_text()
            )))
        }
    };
    if let Some(bad) = items.iter().find(|t| t.dims()[1..] != rest[..]) {
        return Err(ctx.error(format!(
            "Tried to concat tensors with unequal shapes: {} vs {}",
            Shape::new(rest.clone()),
            bad.shape()
        )));
    }
    let lengths: Vec<i64> = items.iter().map(|t| t.dims()[0] as i64).collect();
    let mut dims = vec![lengths.iter().sum::<i64>() as usize];
    dims.extend(rest);
    let out = concat_rows(l.element_dtype, dims, &items)?;
    ctx.set_output(0, out)?;
    ctx.set_output(1, Tensor::vec(lengths))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("TensorListGather", |_| Ok(FnKernel::expensive(gather)));
    r.add("TensorListScatterIntoExistingList", |_| Ok(FnKernel::expensive(scatter_into)));
    r.add("TensorListSplit", |_| Ok(FnKernel::expensive(split)));
    r.add("TensorListConcatV2", |_| Ok(FnKernel::expensive(concat)));
}
