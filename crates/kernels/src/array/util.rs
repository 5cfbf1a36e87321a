//! Helpers shared by the array kernels: dtype dispatch, index vectors, axis checks.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor, TensorType};

use crate::{OpContext, OpKernel};

/// TensorFlow's DataTypeString spelling (`float`, `double`, `int32` …) used in its messages.
pub fn tf_type_name(d: DataType) -> &'static str {
    d.tf_name()
}

/// TensorFlow's `TensorShape::DebugString` of concrete dims: `[2,3]`.
pub fn dims_str(d: &[usize]) -> String {
    let v: Vec<String> = d.iter().map(|x| x.to_string()).collect();
    format!("[{}]", v.join(","))
}

/// The elements of an int32 or int64 tensor as i64.
pub fn index_vec(t: &Tensor) -> Result<Vec<i64>, Status> {
    match t.dtype() {
        DataType::Int32 => Ok(t.as_slice::<i32>()?.iter().map(|&x| x as i64).collect()),
        DataType::Int64 => Ok(t.as_slice::<i64>()?.to_vec()),
        d => Err(Status::invalid_argument(format!("expected an int32 or int64 tensor, got {d}"))),
    }
}

/// The single element of an int32 or int64 tensor with exactly one element.
pub fn index_scalar(t: &Tensor) -> Result<i64, Status> {
    let v = index_vec(t)?;
    if v.len() != 1 {
        return Err(Status::invalid_argument(format!("expected a scalar, got shape {}", t.shape())));
    }
    Ok(v[0])
}

/// The integer scalar `t` (an input of the op), or the node's error `not_scalar(t)` when it
/// is not of rank 0.
pub(crate) fn checked_index_scalar(
    ctx: &OpContext,
    t: &Tensor,
    not_scalar: impl FnOnce(&Tensor) -> String,
) -> Result<i64, Status> {
    if t.rank() != 0 {
        return Err(ctx.error(not_scalar(t)));
    }
    index_scalar(t).map_err(|e| ctx.error(e.message))
}

/// An int32 or int64 tensor of the given dtype from i64 values (range-checked for int32).
pub fn index_tensor(dtype: DataType, shape: Vec<usize>, v: Vec<i64>) -> Result<Tensor, Status> {
    match dtype {
        DataType::Int32 => {
            let mut out = ferroflow_core::alloc::with_capacity(&shape)?;
            for x in v {
                out.push(
                    i32::try_from(x).map_err(|_| Status::invalid_argument(format!("value {x} does not fit int32")))?,
                );
            }
            Tensor::new(shape, out)
        }
        DataType::Int64 => Tensor::new(shape, v),
        d => Err(Status::invalid_argument(format!("index type must be int32 or int64, got {d}"))),
    }
}

/// Reads a type attr and checks it is int32 or int64.
pub fn index_type_attr(node: &NodeDef, name: &str) -> Result<DataType, Status> {
    type_attr_in(node, name, &[DataType::Int32, DataType::Int64], |t| {
        node.node_error(format!("attr '{name}' must be int32 or int64, got {t}"))
    })
}

/// Type attr `attr` of `n` when it is one of `allowed`; else the error `refuse` makes of
/// the type it holds.
pub(crate) fn type_attr_in(
    n: &NodeDef,
    attr: &str,
    allowed: &[DataType],
    refuse: impl FnOnce(DataType) -> Status,
) -> Result<DataType, Status> {
    let t = n.attr_type(attr)?;
    if allowed.contains(&t) {
        Ok(t)
    } else {
        Err(refuse(t))
    }
}

/// The int32/int64 values of input `i`, which must be a vector: `not_vector(t)` words the
/// error for a tensor `t` of another rank.
pub(crate) fn vector_input(
    ctx: &OpContext,
    i: usize,
    not_vector: impl FnOnce(&Tensor) -> String,
) -> Result<Vec<i64>, Status> {
    let t = ctx.input(i)?;
    if t.rank() != 1 {
        return Err(ctx.error(not_vector(&t)));
    }
    index_vec(&t).map_err(|e| ctx.error(e.message))
}

/// The shape given by input `i`, an int32/int64 vector (see [`vector_input`]).
pub(crate) fn shape_input(
    ctx: &OpContext,
    i: usize,
    not_vector: impl FnOnce(&Tensor) -> String,
) -> Result<Shape, Status> {
    let dims = vector_input(ctx, i, not_vector)?;
    Shape::from_i64(&dims).map_err(|e| ctx.error(e.message))
}

/// The output shape `dims` (each must be >= 0) of a new tensor of `dtype`, checked
/// against the task's memory limit.
pub(crate) fn output_shape(ctx: &OpContext, dims: &[i64], dtype: DataType) -> Result<Shape, Status> {
    if let Some(d) = dims.iter().find(|&&d| d < 0) {
        return Err(ctx.error(format!("Dimension {d} must be >= 0")));
    }
    let shape = Shape::from_i64(dims).map_err(|e| ctx.error(e.message))?;
    check_node_alloc(ctx, shape.dims(), dtype)?;
    Ok(shape)
}

/// Product of dims, `1` for none.
pub fn product(d: &[usize]) -> usize {
    d.iter().product()
}

/// Advances the row-major multi-index `idx` over `dims` by one (to all zeros after the last).
#[inline]
pub(crate) fn next_index(idx: &mut [usize], dims: &[usize]) {
    for k in (0..idx.len()).rev() {
        idx[k] += 1;
        if idx[k] < dims[k] {
            return;
        }
        idx[k] = 0;
    }
}

/// A kernel with no state, built by a plain compute function.
pub struct FnKernel {
    f: fn(&mut OpContext) -> Result<(), Status>,
    expensive: bool,
}

impl FnKernel {
    /// A cheap kernel (runs inline in the executor).
    pub fn cheap(f: fn(&mut OpContext) -> Result<(), Status>) -> Box<dyn OpKernel> {
        Box::new(FnKernel { f, expensive: false })
    }
    /// A kernel that may do real work (runs on the compute pool).
    pub fn expensive(f: fn(&mut OpContext) -> Result<(), Status>) -> Box<dyn OpKernel> {
        Box::new(FnKernel { f, expensive: true })
    }
}

impl OpKernel for FnKernel {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        (self.f)(ctx)
    }
    fn is_expensive(&self) -> bool {
        self.expensive
    }
}

/// ResourceExhausted if a tensor of `dims` and `dtype` does not fit this task's memory limit
/// ([`ferroflow_core::memory_limit`]): checked before every allocation sized from input
/// values, so it answers instead of letting the allocation abort the process.
pub fn check_alloc(dims: &[usize], dtype: DataType) -> Result<(), Status> {
    ferroflow_core::check_tensor_alloc(dims, dtype)
}

/// [`check_alloc`] for an output of the node of `ctx`, its error naming the node (`node 'n': …`).
pub(crate) fn check_node_alloc(ctx: &OpContext, dims: &[usize], dtype: DataType) -> Result<(), Status> {
    check_alloc(dims, dtype).map_err(|e| node_context(&ctx.node().name, e))
}

/// `e` with `node 'name'` in front of its message (`node 'n': …`) and `name` as its node
/// payload, so that the executor does not name the node again.
pub(crate) fn node_context(name: &str, e: Status) -> Status {
    e.context(format_args!("node '{name}'")).with_node(name)
}

/// A copy of `t`'s elements from the fallible allocation path (RESOURCE_EXHAUSTED, naming
/// its shape, instead of an abort when the task's memory budget or the allocator refuses).
pub fn copy_vec<T: TensorType>(t: &Tensor) -> Result<Vec<T>, Status> {
    let mut v = ferroflow_core::alloc::with_capacity::<T>(t.dims())?;
    v.extend_from_slice(t.as_slice::<T>()?);
    Ok(v)
}

/// The elements of a tensor of `dims` from `items`, in a buffer from the fallible allocation
/// path (what `collect()` of an output-sized iterator would allocate infallibly).
pub fn collect_vec<T: TensorType>(dims: &[usize], items: impl IntoIterator<Item = T>) -> Result<Vec<T>, Status> {
    let mut v = ferroflow_core::alloc::with_capacity::<T>(dims)?;
    v.extend(items);
    Ok(v)
}

/// Room for `n` elements of a kernel's own scratch type (index lists, interpolation weights)
/// sized from an input or an attr: checked against the task's memory budget and reserved
/// fallibly, as [`ferroflow_core::alloc`] does for tensor buffers; `what` names them.
pub fn scratch_vec<T>(n: usize, what: &str) -> Result<Vec<T>, Status> {
    let bytes = n.checked_mul(std::mem::size_of::<T>().max(1));
    ferroflow_core::check_alloc_bytes(bytes.map(|b| b as u64), || format!("{n} {what}"))?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Status::resource_exhausted(format!("OOM when allocating {n} {what}: the allocator refused")))?;
    Ok(v)
}

/// `t`'s elements as an owned buffer: moved out when `t` holds the only reference to them,
/// else copied as [`copy_vec`] does.
pub fn owned_vec<T: TensorType>(t: Tensor) -> Result<Vec<T>, Status> {
    if std::sync::Arc::strong_count(t.storage_arc()) == 1 {
        return t.into_vec();
    }
    copy_vec(&t)
}

/// `t`'s elements for writing in place. A buffer shared with other tensors is first copied
/// through the fallible allocation path (`Tensor::data_mut` would copy it infallibly).
pub fn unshared_mut<T: TensorType>(t: &mut Tensor) -> Result<&mut Vec<T>, Status> {
    let a = t.storage_arc();
    if std::sync::Arc::strong_count(a) > 1 || std::sync::Arc::weak_count(a) > 0 {
        *t = Tensor::new(t.shape().clone(), copy_vec::<T>(t)?)?;
    }
    t.data_mut::<T>()
}

/// Elements above which data movement is split across the compute pool.
pub const PAR_THRESHOLD: usize = 32 * 1024;

/// `t` cut along dimension 0 into pieces of `lens[i]` rows each (`lens` sums to dim 0).
pub(crate) fn split_rows(t: &Tensor, lens: &[usize]) -> Result<Vec<Tensor>, Status> {
    let rest: Vec<usize> = t.dims()[1..].to_vec();
    let row: usize = rest.iter().product();
    ferroflow_core::with_dtype!(t.dtype(), T => {
        let data = t.as_slice::<T>()?;
        let mut start = 0;
        lens.iter()
            .map(|&l| {
                let mut dims = vec![l];
                dims.extend_from_slice(&rest);
                let end = start + l * row;
                let part = data.get(start..end).ok_or_else(|| Status::internal("split out of range"))?.to_vec();
                start = end;
                Tensor::new(dims, part)
            })
            .collect::<Result<Vec<_>, Status>>()
    })
}
