//! `RaggedTensorToTensor` (`tf.RaggedTensor.to_tensor`, tf_keras's `TextVectorization`):
//! a ragged tensor given by its flat `values` and one row partition per ragged dimension
//! becomes a dense tensor, rows padded with `default_value` (broadcast to a value's shape)
//! and cut to `shape` where `shape` names a size.
//!
//! Partitions are `ROW_SPLITS` (`[nrows + 1]`, from 0, non-decreasing) or `VALUE_ROWIDS`
//! (the row of each element, non-decreasing, after a `FIRST_DIM_SIZE` scalar). The output
//! has rank `ragged_rank + rank(values)`; a size that `shape` leaves at -1 is the number of
//! rows (first dimension) or the longest row (ragged dimensions), and the uniform dimensions
//! are the values'. Every element of every level gets the flat position (in units of one
//! value) where it lands, or -1 when it is cut, level by level as in TensorFlow; then each
//! value is copied to its position. Any dtype, strings included.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Shape, Status, Storage, Tensor, TensorType};

use crate::array::util::{dims_str, index_scalar, index_vec};
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Partition {
    FirstDimSize,
    RowSplits,
    ValueRowIds,
}

struct RaggedToTensor {
    types: Vec<Partition>,
}

impl RaggedToTensor {
    /// The number of ragged dimensions (partitions other than `FIRST_DIM_SIZE`).
    fn ragged_rank(&self) -> usize {
        self.types.len() - usize::from(self.types[0] == Partition::FirstDimSize)
    }

    /// The partition of ragged dimension `d` (between output dims `d` and `d + 1`) and its
    /// input index.
    fn partition(&self, d: usize) -> (Partition, usize) {
        let i = d + usize::from(self.types[0] == Partition::FirstDimSize);
        (self.types[i], 3 + i)
    }
}

/// The longest row a partition describes.
fn max_width(kind: Partition, p: &[i64]) -> i64 {
    match kind {
        Partition::RowSplits => p.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0).max(0),
        _ => {
            let (mut best, mut run) = (0i64, 0i64);
            for (i, &r) in p.iter().enumerate() {
                run = if i > 0 && r == p[i - 1] { run + 1 } else { 1 };
                best = best.max(run);
            }
            best
        }
    }
}

/// The sizes `shape` asks for: `None` for an unknown rank (a scalar -1), else one entry per
/// dim, -1 where unknown.
fn requested(ctx: &OpContext, t: &Tensor) -> Result<Option<Vec<i64>>, Status> {
    if t.rank() == 0 {
        let v = index_scalar(t)?;
        if v != -1 {
            return Err(ctx.error(format!("shape must be a vector or the scalar -1 (unknown rank), got {v}")));
        }
        return Ok(None);
    }
    if t.rank() != 1 {
        return Err(ctx.error(format!("shape must be a vector, got shape {}", t.shape())));
    }
    let v = index_vec(t)?;
    if let Some(d) = v.iter().find(|&&d| d < -1) {
        return Err(ctx.error(format!("Invalid dimension size: {d}")));
    }
    Ok(Some(v))
}

/// The output dims: `shape` combined with the values' uniform dims, then the first and ragged
/// dims filled from the partitions where `shape` leaves them at -1.
fn output_dims(
    ctx: &OpContext,
    k: &RaggedToTensor,
    shape: Option<Vec<i64>>,
    values: &[usize],
    first_dim: i64,
    parts: &[(Partition, Vec<i64>)],
) -> Result<Vec<usize>, Status> {
    let rr = k.ragged_rank();
    let rank = rr + values.len();
    let mut out = shape.unwrap_or_else(|| vec![-1; rank]);
    if out.len() != rank {
        return Err(ctx.error(format!(
            "rt_input.shape and shape={out:?} are incompatible: rt_input.rank = {rank} but shape.rank = {}",
            out.len()
        )));
    }
    for (i, &v) in values.iter().enumerate().skip(1) {
        let o = &mut out[rr + i];
        if *o >= 0 && *o != v as i64 {
            return Err(ctx.error(format!(
                "rt_input.shape and shape are incompatible: rt_input.shape[{}] = {v} but shape[{}] = {o}",
                rr + i,
                rr + i
            )));
        }
        *o = v as i64;
    }
    if out[0] < 0 {
        out[0] = first_dim;
    }
    for (d, (kind, p)) in parts.iter().enumerate() {
        if out[d + 1] < 0 {
            out[d + 1] = max_width(*kind, p);
        }
    }
    Ok(out.iter().map(|&d| d as usize).collect())
}

/// Where each element of the next level lands, from where each of the `rows` rows of this
/// level landed (`parent`, -1 when cut; rows past its end are cut too), the partition, the
/// next level's size and its stride.
fn next_level(
    ctx: &OpContext,
    kind: Partition,
    p: &[i64],
    (parent, rows): (&[i64], usize),
    size: usize,
    stride: i64,
) -> Result<Vec<i64>, Status> {
    let landed = |r: usize| parent.get(r).copied().unwrap_or(-1);
    let mut out = Vec::new();
    match kind {
        Partition::RowSplits => {
            if p.is_empty() || p[0] != 0 || p.windows(2).any(|w| w[1] < w[0]) {
                return Err(ctx.error(format!("row_splits must start at 0 and be non-decreasing, got {p:?}")));
            }
            if p.len() - 1 > rows {
                return Err(
                    ctx.error(format!("Row partition size is greater than output size: {} > {rows}", p.len() - 1))
                );
            }
            for (r, w) in p.windows(2).enumerate() {
                let start = landed(r);
                for j in 0..(w[1] - w[0]) as usize {
                    out.push(if start >= 0 && j < size { start + j as i64 * stride } else { -1 });
                }
            }
        }
        _ => {
            let mut col = 0usize;
            for (i, &r) in p.iter().enumerate() {
                if r < 0 || r as usize >= rows || (i > 0 && r < p[i - 1]) {
                    return Err(
                        ctx.error(format!("value_rowids must be non-decreasing and in [0, {rows}), got {r} at {i}"))
                    );
                }
                col = if i > 0 && r == p[i - 1] { col + 1 } else { 0 };
                let start = landed(r as usize);
                out.push(if start >= 0 && col < size { start + col as i64 * stride } else { -1 });
            }
        }
    }
    Ok(out)
}

/// The output elements: `default_row` everywhere, then value row `k` (of `inner` elements) at
/// position `pos[k]` (in rows) where it is not -1.
fn assemble<T: TensorType>(
    values: &[T],
    default: &Tensor,
    default_map: &[usize],
    pos: &[i64],
    inner: usize,
    (rows, dims): (usize, &[usize]),
) -> Result<Storage, Status> {
    let d = default.as_slice::<T>()?;
    let row: Vec<T> = default_map.iter().map(|&i| d[i].clone()).collect();
    let mut out = ferroflow_core::alloc::with_capacity(dims)?;
    for _ in 0..rows {
        out.extend_from_slice(&row);
    }
    for (k, &p) in pos.iter().enumerate() {
        if p >= 0 {
            let p = p as usize * inner;
            out[p..p + inner].clone_from_slice(&values[k * inner..(k + 1) * inner]);
        }
    }
    Ok(T::wrap(out))
}

/// For each element of one value (shape `inner`), the element of `default` (right-aligned
/// broadcasting) that fills it. TensorFlow first compares the default's dims with the
/// value's dims aligned on the left (each must be 1 or equal), and so does this.
fn default_map(ctx: &OpContext, default: &[usize], values: &[usize]) -> Result<Vec<usize>, Status> {
    let inner = &values[1..];
    let (dn, vn) = (default.len(), values.len());
    let incompatible = |what: String| {
        ctx.error(format!(
            "default_value.shape={} and rt_input.flat_values.shape={} are incompatible: {what}",
            dims_str(default),
            dims_str(values)
        ))
    };
    if dn >= vn {
        return Err(incompatible(format!(
            "default_value.rank = {dn}  must be less than rt_input.flat_values.rank = {vn}"
        )));
    }
    for (i, (&d, &v)) in default.iter().zip(inner).enumerate() {
        if d != 1 && d != v {
            let at = i as i64 - dn as i64;
            return Err(incompatible(format!(
                "default_value.shape[{at}] = {d} but rt_input.flat_values.shape[{at}] = {v}"
            )));
        }
    }
    if default.iter().rev().zip(inner.iter().rev()).any(|(&d, &v)| d != 1 && d != v) {
        return Err(incompatible("default_value cannot be broadcast to the shape of one value".to_string()));
    }
    let n: usize = inner.iter().product();
    let off = inner.len() - default.len();
    let mut map = Vec::with_capacity(n);
    for flat in 0..n {
        let (mut rem, mut idx, mut stride) = (flat, 0usize, 1usize);
        for (a, &size) in inner.iter().enumerate().rev() {
            let c = rem % size.max(1);
            rem /= size.max(1);
            if a >= off {
                let ds = default[a - off];
                idx += if ds == 1 { 0 } else { c * stride };
                stride *= ds;
            }
        }
        map.push(idx);
    }
    Ok(map)
}

impl OpKernel for RaggedToTensor {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (shape_t, values, default) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        if values.rank() == 0 {
            return Err(ctx.error("values must have rank at least 1, got a scalar"));
        }
        if default.dtype() != values.dtype() {
            return Err(ctx.error(format!("default_value must be {}, got {}", values.dtype(), default.dtype())));
        }
        let first = ctx.input(3)?;
        if first.num_elements() == 0 {
            return Err(ctx.error("Invalid first partition input. Tensor requires at least one element."));
        }
        let first_dim = match self.types[0] {
            Partition::FirstDimSize => index_scalar(&first)?,
            _ => first.dims()[0] as i64 - 1,
        };
        if first_dim < 0 {
            return Err(ctx.error(format!("the first dimension size must be non-negative, got {first_dim}")));
        }
        let rr = self.ragged_rank();
        let mut parts = Vec::with_capacity(rr);
        for d in 0..rr {
            let (kind, i) = self.partition(d);
            let t = ctx.input(i)?;
            if t.rank() != 1 {
                return Err(ctx.error(format!("row partition {d} must be a vector, got shape {}", t.shape())));
            }
            parts.push((kind, index_vec(&t)?));
        }
        let dims = output_dims(ctx, self, requested(ctx, &shape_t)?, values.dims(), first_dim, &parts)?;
        ferroflow_core::check_tensor_alloc(&dims, values.dtype()).map_err(|e| ctx.error_with(e))?;
        // Strides of the first rr + 1 output dims, in units of one value.
        let mut stride = vec![1i64; rr + 1];
        for d in (0..rr).rev() {
            stride[d] = stride[d + 1] * dims[d + 1] as i64;
        }
        // The first level's rows that land: at most the output's first dim and the rows the
        // first partition names (a FIRST_DIM_SIZE may be far larger than either).
        let named = match &parts[0] {
            (Partition::RowSplits, p) => p.len().saturating_sub(1),
            (_, p) => p.last().map_or(0, |&r| (r.max(-1) + 1) as usize),
        };
        let landing = (first_dim as usize).min(dims[0]).min(named);
        let mut pos: Vec<i64> = (0..landing as i64).map(|i| i * stride[0]).collect();
        let mut rows = first_dim as usize;
        for (d, (kind, p)) in parts.iter().enumerate() {
            pos = next_level(ctx, *kind, p, (&pos, rows), dims[d + 1], stride[d + 1])?;
            rows = pos.len();
        }
        if pos.len() != values.dims()[0] {
            return Err(ctx.error(format!(
                "the row partitions describe {} values but values has {} rows",
                pos.len(),
                values.dims()[0]
            )));
        }
        let inner_dims = &values.dims()[1..];
        let map = default_map(ctx, default.dims(), values.dims())?;
        let inner: usize = inner_dims.iter().product();
        let rows: usize = dims[..=rr].iter().product();
        let s = ferroflow_core::storage_match!(values.storage(), v => assemble(v, &default, &map, &pos, inner, (rows, &dims)))?;
        ctx.set_output(0, Tensor::from_storage(Shape::new(dims), s)?)
    }
}

fn make(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let names = node.attr_list_string("row_partition_types")?;
    let mut types = Vec::with_capacity(names.len());
    for (i, n) in names.iter().enumerate() {
        types.push(match n.as_str() {
            "FIRST_DIM_SIZE" if i == 0 => Partition::FirstDimSize,
            "ROW_SPLITS" => Partition::RowSplits,
            "VALUE_ROWIDS" if i > 0 => Partition::ValueRowIds,
            "VALUE_ROWIDS" => return Err(node.node_error("Cannot handle VALUE_ROWIDS in first dimension.")),
            other => return Err(node.node_error(format!("Unsupported partition type: {other} at position {i}"))),
        });
    }
    if types.is_empty() || (types.len() == 1 && types[0] == Partition::FirstDimSize) {
        return Err(node.node_error(format!("row_partition_types {names:?} describe no ragged dimension")));
    }
    let n = node.attr_int("num_row_partition_tensors")?;
    if n != types.len() as i64 {
        return Err(node.node_error(format!(
            "num_row_partition_tensors ({n}) must equal the number of row_partition_types ({})",
            types.len()
        )));
    }
    Ok(Box::new(RaggedToTensor { types }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("RaggedTensorToTensor", make);
}
