//! Sparse tensors boxed into one dense tensor and back: `SerializeSparse`,
//! `SerializeManySparse` (as serialized `TensorProto` strings, or as variants each holding a
//! tensor), `DeserializeSparse`, `DeserializeManySparse`. This is how a `tf.data` map
//! function returns a `SparseTensor` (`tf.io.VarLenFeature`, `tf.strings.split(...).to_sparse()`)
//! and how `Dataset.batch` stacks them: the element is a `[3]` variant, a batch `[n, 3]`,
//! and `DeserializeSparse` concatenates the batch into one sparse tensor whose dense shape is
//! the largest of the elements'.

use std::sync::Arc;

use ferroflow_core::proto::Message;
use ferroflow_core::proto::TensorProto;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Tensor, TensorType, Variant};

use super::to_dense::validate_sorted;
use super::util::{check_values, indices_matrix, shape_vector};
use crate::array::util::{check_alloc, tf_type_name};
use crate::data_flow::tensor_array::concat_rows;
use crate::{KernelRegistry, OpContext};

/// How the three parts are boxed.
#[derive(Clone, Copy, PartialEq)]
enum Boxing {
    /// A serialized `TensorProto` per part (TensorFlow's `AsProtoTensorContent`).
    Proto,
    /// A variant holding the part.
    Variant,
}

impl Boxing {
    fn of(dtype: DataType, attr: &str) -> Result<Boxing, Status> {
        match dtype {
            DataType::String => Ok(Boxing::Proto),
            DataType::Variant => Ok(Boxing::Variant),
            d => Err(Status::invalid_argument(format!("{attr} must be string or variant, got {d}"))),
        }
    }

    /// `parts` (indices, values, shape of each sparse tensor, row after row) as a tensor of
    /// `dims`.
    fn pack(self, dims: Vec<usize>, parts: Vec<Tensor>) -> Result<Tensor, Status> {
        let mut p = self.packer(&dims)?;
        parts.into_iter().for_each(|t| p.push(t));
        p.finish(dims)
    }

    /// An empty tensor of `dims` to box parts into one by one, from the fallible allocation
    /// path.
    fn packer(self, dims: &[usize]) -> Result<Packer, Status> {
        Ok(match self {
            Boxing::Proto => Packer::Proto(ferroflow_core::alloc::with_capacity(dims)?),
            Boxing::Variant => Packer::Variant(ferroflow_core::alloc::with_capacity(dims)?),
        })
    }
}

/// Boxed parts so far.
enum Packer {
    Proto(Vec<Vec<u8>>),
    Variant(Vec<Variant>),
}

impl Packer {
    fn push(&mut self, t: Tensor) {
        match self {
            Packer::Proto(v) => v.push(t.to_proto().encode_to_vec()),
            Packer::Variant(v) => v.push(Variant::Tensor(Arc::new(t))),
        }
    }

    fn finish(self, dims: Vec<usize>) -> Result<Tensor, Status> {
        match self {
            Packer::Proto(v) => Tensor::new(dims, v),
            Packer::Variant(v) => Tensor::new(dims, v),
        }
    }
}

/// Checks the three inputs of a sparse tensor; returns (indices, values, shape) tensors and
/// the shape as numbers.
fn sparse_inputs(ctx: &OpContext) -> Result<(Tensor, Tensor, Tensor, Vec<i64>), Status> {
    let it = ctx.input_of_rank(0, 2, "Input indices should be a matrix but received shape ")?;
    let vt = ctx.input_of_rank(1, 1, "Input values should be a vector but received shape ")?;
    let st = ctx.input_of_rank(2, 1, "Input shape should be a vector but received shape ")?;
    let shape = shape_vector(ctx, "Input shape", &st)?;
    Ok((it, vt, st, shape))
}

op_kernel! {
    struct SerializeSparse { out: Boxing }
    fn compute(&self, ctx) {
        let (i, v, s, _) = sparse_inputs(ctx)?;
        ctx.set_output(0, self.out.pack(vec![3], vec![i, v, s])?)
    }
}

/// The values at `rows` of `values`.
fn take<T: TensorType + Clone>(values: &Tensor, rows: std::ops::Range<usize>) -> Result<Tensor, Status> {
    let v = &values.as_slice::<T>()?[rows];
    Tensor::new(Shape::new(vec![v.len()]), v.to_vec())
}

op_kernel! {
    struct SerializeManySparse { out: Boxing }
    fn compute(&self, ctx) {
        let (it, values, _, shape) = sparse_inputs(ctx)?;
        let rank = shape.len();
        if rank <= 1 {
            return Err(ctx.error(format!("Rank of input SparseTensor should be > 1, but saw rank: {rank}")));
        }
        let idx = indices_matrix(ctx, "Input indices", &it)?;
        check_values(ctx, "Input values", &values, idx.n)?;
        if idx.rank != rank {
            return Err(ctx.error(format!(
                "Input indices should have {rank} columns (the length of the shape), got {}",
                idx.rank
            )));
        }
        if shape.iter().any(|&d| d < 0) {
            return Err(ctx.error(format!("Input shape has a negative dimension: {shape:?}")));
        }
        validate_sorted(&idx.v, rank, &shape).map_err(|m| ctx.error(m))?;
        let n = shape[0] as usize;
        check_alloc(&[n, 3], DataType::String).map_err(|e| ctx.error_with(e))?;
        let inner = Tensor::new(vec![rank - 1], shape[1..].to_vec())?;
        // Boxed row by row: no part outlives its row.
        let mut parts = self.out.packer(&[n, 3])?;
        let mut next = 0usize;
        for b in 0..n {
            let start = next;
            while next < idx.n && idx.row(next)[0] == b as i64 {
                next += 1;
            }
            let mut sub = Vec::with_capacity((next - start) * (rank - 1));
            for r in start..next {
                sub.extend_from_slice(&idx.row(r)[1..]);
            }
            parts.push(Tensor::new(vec![next - start, rank - 1], sub)?);
            parts.push(ferroflow_core::with_dtype!(values.dtype(), T => take::<T>(&values, start..next))?);
            parts.push(inner.clone());
        }
        ctx.set_output(0, parts.finish(vec![n, 3])?)
    }
}

/// Element `(i, j)` of a serialized batch as a tensor.
fn unbox(ctx: &OpContext, t: &Tensor, flat: usize, i: usize, j: usize) -> Result<Tensor, Status> {
    match t.dtype() {
        DataType::String => {
            let bytes = &t.as_slice::<Vec<u8>>()?[flat];
            let p = TensorProto::decode(bytes.as_slice())
                .map_err(|e| ctx.error(format!("Could not parse serialized_sparse[{i}, {j}]: {e}")))?;
            Tensor::from_proto(&p).map_err(|e| ctx.error(format!("serialized_sparse[{i}, {j}]: {}", e.message)))
        }
        _ => match &t.as_slice::<Variant>()?[flat] {
            Variant::Tensor(x) => Ok((**x).clone()),
            _ => Err(ctx.error(format!("Could not get a tensor from serialized_sparse[{i}, {j}]"))),
        },
    }
}

op_kernel! {
    struct DeserializeSparse { dtype: DataType }
    fn compute(&self, ctx) {
        let input = ctx.input(0)?;
        if !matches!(input.dtype(), DataType::String | DataType::Variant) {
            return Err(ctx.error(format!("serialized_sparse must be string or variant, got {}", input.dtype())));
        }
        if input.rank() == 0 || input.dims()[input.rank() - 1] != 3 {
            let what = if input.rank() == 0 { "non-zero rank" } else { "3 as the last dimension" };
            return Err(ctx.error(format!("Serialized sparse should have {what} {}", input.shape())));
        }
        let stack = &input.dims()[..input.rank() - 1];
        let count: usize = stack.iter().product();
        if count == 0 && !stack.is_empty() {
            return Err(ctx.error(format!(
                "Serialized sparse should have at least 1 serialized tensor, but has a zero dimension {}",
                input.shape()
            )));
        }
        let mut elems = Vec::with_capacity(count);
        for i in 0..count {
            let shape = unbox(ctx, &input, 3 * i + 2, i, 2)?;
            if shape.dtype() != DataType::Int64 || shape.rank() != 1 {
                return Err(ctx.error(format!(
                    "Expected serialized_sparse[{i}, 2] to be a shape vector of int64 but received a {} of shape {}",
                    shape.dtype(),
                    shape.shape()
                )));
            }
            let indices = unbox(ctx, &input, 3 * i, i, 0)?;
            if indices.dtype() != DataType::Int64 || indices.rank() != 2 {
                return Err(ctx.error(format!(
                    "Expected serialized_sparse[{i}, 0] to be a matrix of int64 but received a {} of shape {}",
                    indices.dtype(),
                    indices.shape()
                )));
            }
            let values = unbox(ctx, &input, 3 * i + 1, i, 1)?;
            if values.dtype() != self.dtype {
                return Err(ctx.error(format!(
                    "Requested SparseTensor of type {} but SparseTensor[{i}].values.dtype() == {}",
                    tf_type_name(self.dtype),
                    tf_type_name(values.dtype())
                )));
            }
            let rank = shape.num_elements();
            if indices.dims()[1] != rank {
                return Err(ctx.error(format!(
                    "Expected column counts of SparseTensor[{i}].indices to match size of SparseTensor[{i}].shape \
                     but they do not: {} vs. {rank}",
                    indices.dims()[1]
                )));
            }
            if values.rank() != 1 || values.dims()[0] != indices.dims()[0] {
                return Err(ctx.error(format!(
                    "Expected serialized_sparse[{i}, 1] to be a vector of {} values but received shape {}",
                    indices.dims()[0],
                    values.shape()
                )));
            }
            elems.push((indices, values, shape));
        }
        // One sparse tensor, nothing to stack: its parts as they are.
        if stack.is_empty() {
            let (i, v, s) = elems.remove(0);
            ctx.set_output(0, i)?;
            ctx.set_output(1, v)?;
            return ctx.set_output(2, s);
        }
        let rank = elems[0].2.num_elements();
        let mut dense: Vec<i64> = stack.iter().map(|&d| d as i64).collect();
        dense.extend_from_slice(elems[0].2.as_slice::<i64>()?);
        for (i, (_, _, s)) in elems.iter().enumerate().skip(1) {
            let s = s.as_slice::<i64>()?;
            if s.len() != rank {
                return Err(ctx.error(format!(
                    "Inconsistent shape across SparseTensors: rank prior to SparseTensor[{i}] was: {rank} but rank \
                     of SparseTensor[{i}] is: {}",
                    s.len()
                )));
            }
            for (d, &x) in dense[stack.len()..].iter_mut().zip(s) {
                *d = (*d).max(x);
            }
        }
        let total: usize = elems.iter().map(|(_, v, _)| v.num_elements()).sum();
        let out_rank = stack.len() + rank;
        check_alloc(&[total, out_rank], DataType::Int64).map_err(|e| ctx.error_with(e))?;
        let mut indices = ferroflow_core::alloc::with_capacity::<i64>(&[total, out_rank])?;
        let mut pos = vec![0i64; stack.len()];
        for (i, (idx, _, _)) in elems.iter().enumerate() {
            // The element's position in the stacked dims, innermost fastest.
            let mut rest = i;
            for k in (0..stack.len()).rev() {
                pos[k] = (rest % stack[k]) as i64;
                rest /= stack[k];
            }
            let data = idx.as_slice::<i64>()?;
            for r in 0..idx.dims()[0] {
                indices.extend_from_slice(&pos);
                indices.extend_from_slice(&data[r * rank..(r + 1) * rank]);
            }
        }
        let values: Vec<Tensor> = elems.iter().map(|(_, v, _)| v.clone()).collect();
        ctx.set_output(0, Tensor::new(vec![total, out_rank], indices)?)?;
        ctx.set_output(1, concat_rows(self.dtype, vec![total], &values)?)?;
        ctx.set_output(2, Tensor::new(vec![out_rank], dense)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("SerializeSparse", |n| {
        Ok(Box::new(SerializeSparse {
            out: Boxing::of(n.attr_type("out_type").unwrap_or(DataType::String), "out_type")?,
        }))
    });
    r.add("SerializeManySparse", |n| {
        Ok(Box::new(SerializeManySparse {
            out: Boxing::of(n.attr_type("out_type").unwrap_or(DataType::String), "out_type")?,
        }))
    });
    for name in ["DeserializeSparse", "DeserializeManySparse"] {
        r.add(name, |n| Ok(Box::new(DeserializeSparse { dtype: n.attr_type("dtype")? })));
    }
}
