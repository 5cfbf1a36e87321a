//! TensorFlow's list ops on `DT_VARIANT` TensorLists: `EmptyTensorList`,
//! `TensorListReserve`, `TensorListFromTensor`, `TensorListPushBack`, `TensorListPopBack`,
//! `TensorListSetItem`, `TensorListGetItem`, `TensorListStack`, `TensorListLength`,
//! `TensorListElementShape`. `tf.while_loop` gradients accumulate their intermediate
//! values with them and `tf.TensorArray` is built on them in TensorFlow 2 graphs.

use std::sync::Arc;

use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor, TensorList, TensorType, Variant};

use crate::array::util::{check_alloc, index_vec, scratch_vec, FnKernel};
use crate::{KernelRegistry, OpContext};

/// The list in input `i` (a scalar variant).
pub(super) fn list_input(ctx: &OpContext, i: usize) -> Result<Arc<TensorList>, Status> {
    let t = ctx.input(i)?;
    if t.dtype() != DataType::Variant || t.rank() != 0 {
        return Err(ctx.error(format!(
            "input {i} must be a scalar variant (a TensorList), got {} {}",
            t.dtype(),
            t.shape()
        )));
    }
    let v = t.as_slice::<Variant>()?[0].clone();
    let l = v.as_list().map_err(|e| ctx.error(e.message))?.clone();
    let want = ctx.node().attr_type("element_dtype")?;
    if l.element_dtype != want {
        return Err(ctx.error(format!("Invalid data types; op elements {want} but list elements {}", l.element_dtype)));
    }
    Ok(l)
}

pub(super) fn set_list(ctx: &mut OpContext, i: usize, l: TensorList) -> Result<(), Status> {
    ctx.set_output(i, Tensor::scalar(Variant::TensorList(Arc::new(l))))
}

/// An element-shape input: a scalar -1 means unknown rank, a vector lists the dimensions
/// (-1 unknown).
pub(super) fn shape_input(ctx: &OpContext, i: usize) -> Result<Option<Vec<i64>>, Status> {
    let t = ctx.input(i)?;
    let v = index_vec(&t).map_err(|e| ctx.error(format!("element_shape: {}", e.message)))?;
    match t.rank() {
        0 if v[0] == -1 => Ok(None),
        1 => Ok(Some(v)),
        _ => Err(ctx.error(format!("element_shape must be -1 or a vector, got shape {}", t.shape()))),
    }
}

pub(super) fn check_element(ctx: &OpContext, l: &TensorList, t: &Tensor, what: &str) -> Result<(), Status> {
    if t.dtype() != l.element_dtype {
        return Err(ctx.error(format!("{what} is {} but the list holds {}", t.dtype(), l.element_dtype)));
    }
    if !l.shape_fits(t.shape().dims()) {
        return Err(ctx.error(format!(
            "Tried to add an element of shape {} to a list whose elements have shape {}",
            t.shape(),
            l.shape_text()
        )));
    }
    Ok(())
}

/// An unset element read back: zeros if its shape is known from the list or `shape`.
pub(super) fn zeros_for(
    ctx: &OpContext,
    l: &TensorList,
    shape: Option<Vec<i64>>,
    index: usize,
) -> Result<Tensor, Status> {
    let dims = match (&l.element_shape, shape) {
        (Some(d), _) if d.iter().all(|&x| x >= 0) => d.clone(),
        (_, Some(d)) if d.iter().all(|&x| x >= 0) => d,
        _ => {
            return Err(ctx.error(format!(
                "Trying to read an uninitialized tensor at index {index} of a list whose element shape {} is not \
                 fully defined",
                l.shape_text()
            )))
        }
    };
    Tensor::zeros(l.element_dtype, Shape::from_i64(&dims)?)
}

/// Most bytes of element slots one list may take (2 GiB: ~67 million elements), so that
/// remote input cannot exhaust a server's memory with one `TensorListReserve`.
const MAX_LIST_BYTES: usize = 1 << 31;

fn check_len(ctx: &OpContext, n: usize) -> Result<(), Status> {
    match n.checked_mul(std::mem::size_of::<Option<Tensor>>()) {
        Some(b) if b <= MAX_LIST_BYTES => Ok(()),
        _ => Err(ctx.error_with(Status::resource_exhausted(format!(
            "a list of {n} elements is larger than ferroflow's limit of {} GiB of element slots",
            MAX_LIST_BYTES >> 30
        )))),
    }
}

fn empty_tensor_list(ctx: &mut OpContext) -> Result<(), Status> {
    let shape = shape_input(ctx, 0)?;
    let max = ctx.input(1)?.scalar_value::<i32>().map_err(|e| ctx.error(e.message))?;
    if max < -1 {
        return Err(ctx.error(format!("max_num_elements must be -1 or non-negative, got {max}")));
    }
    let dtype = ctx.node().attr_type("element_dtype")?;
    set_list(ctx, 0, TensorList::new(dtype, shape, max as i64))
}

fn reserve(ctx: &mut OpContext) -> Result<(), Status> {
    let shape = shape_input(ctx, 0)?;
    let n = ctx.input(1)?.scalar_value::<i32>().map_err(|e| ctx.error(e.message))?;
    if n < 0 {
        return Err(ctx.error(format!("The num_elements to reserve must be a non negative number, but got {n}")));
    }
    check_len(ctx, n as usize)?;
    let dtype = ctx.node().attr_type("element_dtype")?;
    let mut l = TensorList::new(dtype, shape, -1);
    l.tensors = scratch_vec(n as usize, "list element slots")?;
    l.tensors.resize(n as usize, None);
    set_list(ctx, 0, l)
}

fn from_tensor(ctx: &mut OpContext) -> Result<(), Status> {
    let t = ctx.input(0)?;
    let shape = shape_input(ctx, 1)?;
    if t.rank() == 0 {
        return Err(ctx.error("Tensor must be at least a vector, but saw shape: []"));
    }
    let dims = t.shape().dims().to_vec();
    let l = TensorList { tensors: Vec::new(), element_dtype: t.dtype(), element_shape: shape, max_num_elements: -1 };
    if !l.shape_fits(&dims[1..]) {
        return Err(ctx.error(format!(
            "Tensor of shape {} does not have elements of shape {}",
            t.shape(),
            l.shape_text()
        )));
    }
    let rows = ferroflow_core::with_dtype!(t.dtype(), T => split_rows::<T>(&t))?;
    set_list(ctx, 0, TensorList { tensors: rows.into_iter().map(Some).collect(), ..l })
}

fn push_back(ctx: &mut OpContext) -> Result<(), Status> {
    let l = list_input(ctx, 0)?;
    let t = ctx.input(1)?;
    check_element(ctx, &l, &t, "the pushed tensor")?;
    if l.max_num_elements >= 0 && l.tensors.len() as i64 >= l.max_num_elements {
        return Err(ctx.error(format!(
            "Tried to push item into a full list list size: {}, max_num_elements: {}",
            l.tensors.len(),
            l.max_num_elements
        )));
    }
    let mut l = Arc::unwrap_or_clone(l);
    l.tensors.push(Some(t));
    set_list(ctx, 0, l)
}

fn pop_back(ctx: &mut OpContext) -> Result<(), Status> {
    let l = list_input(ctx, 0)?;
    let shape = shape_input(ctx, 1)?;
    let mut l = Arc::unwrap_or_clone(l);
    let item = match l.tensors.pop() {
        None => return Err(ctx.error("Trying to pop from an empty list.")),
        Some(Some(t)) => t,
        Some(None) => zeros_for(ctx, &l, shape, l.tensors.len())?,
    };
    set_list(ctx, 0, l)?;
    ctx.set_output(1, item)
}

fn index_input(ctx: &OpContext, i: usize, len: usize) -> Result<usize, Status> {
    let idx = ctx.input(i)?.scalar_value::<i32>().map_err(|e| ctx.error(e.message))?;
    if idx < 0 || idx as usize >= len {
        return Err(ctx.error(format!("Trying to access element {idx} in a list with {len} elements.")));
    }
    Ok(idx as usize)
}

fn set_item(ctx: &mut OpContext) -> Result<(), Status> {
    let l = list_input(ctx, 0)?;
    let resize = ctx.node().has_attr("resize_if_index_out_of_bounds")
        && ctx.node().attr_bool("resize_if_index_out_of_bounds")?;
    let raw = ctx.input(1)?.scalar_value::<i32>().map_err(|e| ctx.error(e.message))?;
    let mut l = Arc::unwrap_or_clone(l);
    if resize && raw >= 0 && raw as usize >= l.tensors.len() {
        check_len(ctx, raw as usize + 1)?;
        let mut slots = scratch_vec(raw as usize + 1, "list element slots")?;
        slots.append(&mut l.tensors);
        slots.resize(raw as usize + 1, None);
        l.tensors = slots;
    }
    let idx = index_input(ctx, 1, l.tensors.len())?;
    let t = ctx.input(2)?;
    check_element(ctx, &l, &t, "the item")?;
    l.tensors[idx] = Some(t);
    set_list(ctx, 0, l)
}

fn get_item(ctx: &mut OpContext) -> Result<(), Status> {
    let l = list_input(ctx, 0)?;
    let idx = index_input(ctx, 1, l.tensors.len())?;
    let shape = shape_input(ctx, 2)?;
    let item = match &l.tensors[idx] {
        Some(t) => t.clone(),
        None => zeros_for(ctx, &l, shape, idx)?,
    };
    ctx.set_output(0, item)
}

fn stack(ctx: &mut OpContext) -> Result<(), Status> {
    let l = list_input(ctx, 0)?;
    let shape = shape_input(ctx, 1)?;
    let want = ctx.node().attr_int("num_elements").unwrap_or(-1);
    if want != -1 && want as usize != l.tensors.len() {
        return Err(ctx.error(format!(
            "Operation expected a list with {want} elements but got a list with {} elements.",
            l.tensors.len()
        )));
    }
    // Unset items share one zero tensor: 2^14 of them are one buffer, not 2^14.
    let mut zero: Option<Tensor> = None;
    let mut items = Vec::with_capacity(l.tensors.len());
    for (i, t) in l.tensors.iter().enumerate() {
        items.push(match (t, &zero) {
            (Some(t), _) => t.clone(),
            (None, Some(z)) => z.clone(),
            (None, None) => {
                let z = zeros_for(ctx, &l, shape.clone(), i)?;
                zero = Some(z.clone());
                z
            }
        });
    }
    let out = stack_items(ctx, &l, &items, &shape, Stacking::Stack)?;
    ctx.set_output(0, out)
}

/// Which op [`stack_items`] serves, for TensorFlow's error messages.
#[derive(Clone, Copy)]
pub(super) enum Stacking {
    Stack,
    Gather,
}

/// Stacks `items` (elements of `l`, read or zero-filled) into one `[n, element...]`
/// tensor. The element shape is the first item's; with no items, the list's (or `shape`,
/// the op's element_shape input) when fully defined.
pub(super) fn stack_items(
    ctx: &OpContext,
    l: &TensorList,
    items: &[Tensor],
    shape: &Option<Vec<i64>>,
    op: Stacking,
) -> Result<Tensor, Status> {
    let elem: Vec<usize> = match (items.first(), &l.element_shape, shape) {
        (Some(t), _, _) => t.dims().to_vec(),
        (None, Some(d), _) | (None, None, Some(d)) if d.iter().all(|&x| x >= 0) => {
            d.iter().map(|&x| x as usize).collect()
        }
        _ => {
            let shape = l.shape_text();
            return Err(ctx.error(match op {
                Stacking::Stack => {
                    format!("Tried to stack elements of an empty list with non-fully-defined element_shape: {shape}")
                }
                Stacking::Gather => {
                    format!("Tried to gather 0 elements from a list with non-fully-defined shape: {shape}")
                }
            }));
        }
    };
    if let Some(bad) = items.iter().find(|t| t.dims() != elem.as_slice()) {
        return Err(ctx.error(match op {
            Stacking::Stack => format!("Tried to stack elements of different shapes: {elem:?} and {}", bad.shape()),
            Stacking::Gather => {
                format!(
                    "Tried to gather elements of different shapes: {} and {}",
                    Shape::new(elem.clone()),
                    bad.shape()
                )
            }
        }));
    }
    let mut dims = vec![items.len()];
    dims.extend(&elem);
    check_alloc(&dims, l.element_dtype)?;
    let out = ferroflow_core::with_dtype!(l.element_dtype, T => stack_rows::<T>(Shape(dims.clone()), items))?;
    Ok(out)
}

fn length(ctx: &mut OpContext) -> Result<(), Status> {
    let t = ctx.input(0)?;
    let v = t.as_slice::<Variant>().map_err(|e| ctx.error(e.message))?;
    let l = v.first().ok_or_else(|| ctx.error("input_handle is empty"))?.as_list().map_err(|e| ctx.error(e.message))?;
    ctx.set_output(0, Tensor::scalar(l.tensors.len() as i32))
}

fn element_shape(ctx: &mut OpContext) -> Result<(), Status> {
    let t = ctx.input(0)?;
    let v = t.as_slice::<Variant>().map_err(|e| ctx.error(e.message))?;
    let l = v.first().ok_or_else(|| ctx.error("input_handle is empty"))?.as_list().map_err(|e| ctx.error(e.message))?;
    let int64 = ctx.node().attr_type("shape_type")? == DataType::Int64;
    let out = match &l.element_shape {
        None if int64 => Tensor::scalar(-1i64),
        None => Tensor::scalar(-1i32),
        Some(d) if int64 => Tensor::vec(d.clone()),
        Some(d) => Tensor::vec(d.iter().map(|&x| x as i32).collect::<Vec<_>>()),
    };
    ctx.set_output(0, out)
}

/// `AddN` of TensorLists (how the gradients of a list used twice are summed, e.g. a
/// `tf.TensorArray` read in a loop): lists of one length, added element by element; an
/// unset element takes the other list's.
pub(crate) struct AddNLists;

impl crate::OpKernel for AddNLists {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let mut acc: Option<TensorList> = None;
        for i in 0..ctx.num_inputs() {
            let t = ctx.input(i)?;
            if t.rank() != 0 {
                return Err(ctx.error(format!("input {i} must be a scalar variant, got shape {}", t.shape())));
            }
            let l = match &t.as_slice::<Variant>()?[0] {
                // An empty variant adds nothing (a gradient that was never set).
                Variant::Empty => continue,
                Variant::TensorList(l) => l.clone(),
                Variant::Opaque(o) => return Err(ctx.error(format!("cannot add a {} variant", o.type_name))),
                Variant::Tensor(_) => return Err(ctx.error("cannot add a boxed-tensor variant to a TensorList")),
            };
            let Some(a) = acc.as_mut() else {
                acc = Some(Arc::unwrap_or_clone(l));
                continue;
            };
            if a.tensors.len() != l.tensors.len() || a.element_dtype != l.element_dtype {
                return Err(ctx.error(format!(
                    "Trying to add two lists of tensors with different lengths or dtypes, one is {} {} and the other \
                     is {} {}",
                    a.tensors.len(),
                    a.element_dtype,
                    l.tensors.len(),
                    l.element_dtype
                )));
            }
            for (x, y) in a.tensors.iter_mut().zip(&l.tensors) {
                *x = match (x.take(), y) {
                    (None, y) => y.clone(),
                    (Some(x), None) => Some(x),
                    (Some(x), Some(y)) => Some(add(ctx, &x, y)?),
                };
            }
        }
        match acc {
            Some(sum) => set_list(ctx, 0, sum),
            None => ctx.set_output(0, Tensor::scalar(Variant::Empty)),
        }
    }
}

fn add(ctx: &OpContext, x: &Tensor, y: &Tensor) -> Result<Tensor, Status> {
    if x.shape() != y.shape() {
        return Err(ctx.error(format!(
            "Trying to add two tensors of different shapes in lists: {} and {}",
            x.shape(),
            y.shape()
        )));
    }
    fn sum<T: TensorType + Copy + std::ops::Add<Output = T>>(x: &Tensor, y: &Tensor) -> Result<Tensor, Status> {
        let v = x.as_slice::<T>()?.iter().zip(y.as_slice::<T>()?).map(|(&a, &b)| a + b).collect();
        Tensor::new(x.shape().clone(), v)
    }
    match x.dtype() {
        DataType::Float => sum::<f32>(x, y),
        DataType::Double => sum::<f64>(x, y),
        DataType::Int32 => sum::<i32>(x, y),
        DataType::Int64 => sum::<i64>(x, y),
        d => Err(ctx.error(format!("adding list elements of {d} is not supported"))),
    }
}

/// The rows of `t` (its slices along the first dimension).
pub(super) fn split_rows<T: TensorType>(t: &Tensor) -> Result<Vec<Tensor>, Status> {
    let dims = t.shape().dims();
    let inner: usize = dims[1..].iter().product();
    let data = t.as_slice::<T>()?;
    (0..dims[0]).map(|i| Tensor::new(dims[1..].to_vec(), data[i * inner..(i + 1) * inner].to_vec())).collect()
}

/// The items, of equal shapes, stacked into one tensor of shape `dims`.
pub(super) fn stack_rows<T: TensorType>(dims: Shape, items: &[Tensor]) -> Result<Tensor, Status> {
    let mut data = ferroflow_core::alloc::with_capacity(dims.dims())?;
    for t in items {
        data.extend_from_slice(t.as_slice::<T>()?);
    }
    Tensor::new(dims, data)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("EmptyTensorList", |_| Ok(FnKernel::cheap(empty_tensor_list)));
    r.add("TensorListReserve", |_| Ok(FnKernel::cheap(reserve)));
    r.add("TensorListFromTensor", |_| Ok(FnKernel::expensive(from_tensor)));
    r.add("TensorListPushBack", |_| Ok(FnKernel::cheap(push_back)));
    r.add("TensorListPopBack", |_| Ok(FnKernel::cheap(pop_back)));
    r.add("TensorListSetItem", |_| Ok(FnKernel::cheap(set_item)));
    r.add("TensorListGetItem", |_| Ok(FnKernel::cheap(get_item)));
    r.add("TensorListStack", |_| Ok(FnKernel::expensive(stack)));
    r.add("TensorListLength", |_| Ok(FnKernel::cheap(length)));
    r.add("TensorListElementShape", |_| Ok(FnKernel::cheap(element_shape)));
}
