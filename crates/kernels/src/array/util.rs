//! Helpers shared by the array kernels: dtype dispatch, index vectors, axis checks.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

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

/// An int32 or int64 tensor of the given dtype from i64 values (range-checked for int32).
pub fn index_tensor(dtype: DataType, shape: Vec<usize>, v: Vec<i64>) -> Result<Tensor, Status> {
    match dtype {
        DataType::Int32 => {
            let mut out = Vec::with_capacity(v.len());
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
    let t = node.attr_type(name)?;
    if !matches!(t, DataType::Int32 | DataType::Int64) {
        return Err(node.node_error(format!("attr '{name}' must be int32 or int64, got {t}")));
    }
    Ok(t)
}

/// Product of dims, `1` for none.
pub fn product(d: &[usize]) -> usize {
    d.iter().product()
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
