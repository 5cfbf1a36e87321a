//! Counts as sparse tensors (`tf.sparse.bincount`, tf_keras `CategoryEncoding(sparse=True)`):
//! `DenseCountSparseOutput`, `SparseCountSparseOutput`, `RaggedCountSparseOutput`. Per batch
//! row (the rows of a 2-D input, of a rank-2 sparse tensor, of a ragged tensor; one batch
//! for 1-D input) the count (or summed weight, or 1 with `binary_output`) of each value,
//! in increasing value order. Values must be non-negative; those at or past `maxlength`
//! (when > 0) are skipped. The dense width is `maxlength` when > 0, else `max(largest value + 1,
//! minlength)`.

use std::collections::BTreeMap;

use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use crate::array::util::{check_alloc, collect_vec, index_vec};
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Dense,
    Sparse,
    Ragged,
}

struct Count {
    kind: Kind,
    minlength: i64,
    maxlength: i64,
    binary: bool,
    out: DataType,
}

/// One batch row's counts by value, as f64 (exact for the integer counts and weights of
/// the sizes that fit in memory; converted to the output type at the end).
type Row = BTreeMap<i64, f64>;

/// The rows that have counts, by batch row: a dense shape's `batches` sizes no buffer.
type Rows = BTreeMap<usize, Row>;

impl Count {
    /// The values, which must all be non-negative.
    fn values(ctx: &OpContext, t: &Tensor) -> Result<Vec<i64>, Status> {
        let v = index_vec(t).map_err(|e| ctx.error(e.message))?;
        if v.iter().any(|&x| x < 0) {
            return Err(ctx.error("Input values must all be non-negative"));
        }
        Ok(v)
    }

    fn add(&self, row: &mut Row, value: i64, weight: Option<f64>, max_seen: &mut i64) {
        if self.maxlength > 0 && value >= self.maxlength {
            return;
        }
        let e = row.entry(value).or_insert(0.0);
        if self.binary {
            *e = 1.0;
        } else {
            *e += weight.unwrap_or(1.0);
        }
        *max_seen = (*max_seen).max(value);
    }

    /// Weights as f64 when given (non-empty), checked to match the values' shape.
    fn weights(&self, ctx: &OpContext, w: &Tensor, values: &Tensor, what: &str) -> Result<Option<Vec<f64>>, Status> {
        if w.num_elements() == 0 {
            return Ok(None);
        }
        if w.dims() != values.dims() {
            return Err(ctx.error(format!(
                "Weights and {what} must have the same shape. Weight shape: {}; {what} shape: {}",
                w.shape(),
                values.shape()
            )));
        }
        if w.dtype() != self.out {
            return Err(ctx.error(format!("weights are {} but output_type is {}", w.dtype(), self.out)));
        }
        let v: Vec<f64> = match w.dtype() {
            DataType::Int32 => w.as_slice::<i32>()?.iter().map(|&x| x as f64).collect(),
            DataType::Int64 => w.as_slice::<i64>()?.iter().map(|&x| x as f64).collect(),
            DataType::Float => w.as_slice::<f32>()?.iter().map(|&x| x as f64).collect(),
            _ => w.as_slice::<f64>()?.to_vec(),
        };
        Ok(Some(v))
    }

    /// Outputs the counts of the non-empty `rows` (by batch row) of `batches` rows.
    fn output(
        &self,
        ctx: &mut OpContext,
        rows: Rows,
        batches: usize,
        max_seen: i64,
        is_1d: bool,
    ) -> Result<(), Status> {
        let width = if self.maxlength > 0 { self.maxlength } else { (max_seen + 1).max(self.minlength) };
        let total: usize = rows.values().map(|r| r.len()).sum();
        let inner = if is_1d { 1 } else { 2 };
        check_alloc(&[total, inner], DataType::Int64).map_err(|e| ctx.error_with(e))?;
        let mut indices = ferroflow_core::alloc::with_capacity::<i64>(&[total, inner])?;
        let mut values = ferroflow_core::alloc::with_capacity::<f64>(&[total])?;
        for (&b, row) in &rows {
            for (&v, &c) in row {
                if !is_1d {
                    indices.push(b as i64);
                }
                indices.push(v);
                values.push(c);
            }
        }
        let vals = match self.out {
            DataType::Int32 => Tensor::new(vec![total], collect_vec(&[total], values.iter().map(|&x| x as i32))?)?,
            DataType::Int64 => Tensor::new(vec![total], collect_vec(&[total], values.iter().map(|&x| x as i64))?)?,
            DataType::Float => Tensor::new(vec![total], collect_vec(&[total], values.iter().map(|&x| x as f32))?)?,
            _ => Tensor::new(vec![total], values)?,
        };
        let shape = if is_1d { vec![width] } else { vec![batches as i64, width] };
        ctx.set_output(0, Tensor::new(vec![total, inner], indices)?)?;
        ctx.set_output(1, vals)?;
        ctx.set_output(2, Tensor::new(vec![shape.len()], shape)?)
    }

    fn dense(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (data, w) = (ctx.input(0)?, ctx.input(1)?);
        if data.rank() != 1 && data.rank() != 2 {
            return Err(ctx.error(format!("Input must be a 1 or 2-dimensional tensor. Got: {}", data.shape())));
        }
        let weights = self.weights(ctx, &w, &data, "data")?;
        let is_1d = data.rank() == 1;
        if !is_1d && data.dims()[0] == 0 {
            return Err(ctx.error("Invalid input: Shapes dimension cannot be 0."));
        }
        let batches = if is_1d { 1 } else { data.dims()[0] };
        let per = data.num_elements() / batches.max(1);
        let v = Self::values(ctx, &data)?;
        let mut rows = Rows::new();
        let mut max_seen = 0;
        for (i, &x) in v.iter().enumerate() {
            self.add(rows.entry(i / per.max(1)).or_default(), x, weights.as_ref().map(|w| w[i]), &mut max_seen);
        }
        self.output(ctx, rows, batches, max_seen, is_1d)
    }

    fn sparse(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let it = ctx.input_of_rank(0, 2, "Input indices must be a 2-dimensional tensor. Got: ")?;
        let vt = ctx.input_of_rank(1, 1, "Input values must be a vector. Got: ")?;
        let st = ctx.input_of_rank(2, 1, "Input shape must be a vector. Got: ")?;
        let w = ctx.input(3)?;
        let (n, rank) = (it.dims()[0], it.dims()[1]);
        if vt.dims()[0] != n {
            return Err(ctx.error(format!(
                "Number of values must match first dimension of indices.Got {} values, indices shape: {}",
                vt.dims()[0],
                it.shape()
            )));
        }
        if st.dims()[0] != rank {
            return Err(ctx.error(format!(
                "Number of dimensions must match second dimension of indices.Got {} dimensions, indices shape: {}",
                st.dims()[0],
                it.shape()
            )));
        }
        if rank == 0 {
            return Err(ctx.error("The shape argument requires at least one element."));
        }
        let idx = index_vec(&it).map_err(|e| ctx.error(e.message))?;
        let shape = index_vec(&st).map_err(|e| ctx.error(e.message))?;
        if shape.iter().any(|&d| d < 0) {
            return Err(ctx.error(format!("Elements in dense_shape must be >= 0. Instead got: {shape:?}")));
        }
        for i in 0..n {
            for j in 0..rank {
                let x = idx[i * rank + j];
                if x < 0 || x >= shape[j] {
                    return Err(ctx.error(format!(
                        "Invalid index value at {i}: dimension {j} has value {x} which is not in [0, {}) (as given \
                         by dense shape {shape:?})",
                        shape[j]
                    )));
                }
            }
        }
        let weights = self.weights(ctx, &w, &vt, "values")?;
        let is_1d = rank == 1;
        let batches = if is_1d { 1 } else { shape[0] as usize };
        if batches == 0 || batches >= i32::MAX as usize {
            return Err(ctx.error(format!("Cannot allocate {batches} batches, is the dense shape too wide?")));
        }
        check_alloc(&[batches], DataType::Int64).map_err(|e| ctx.error_with(e))?;
        let v = Self::values(ctx, &vt)?;
        let mut rows = Rows::new();
        let mut max_seen = 0;
        for (i, &x) in v.iter().enumerate() {
            let b = if is_1d { 0 } else { idx[i * rank] as usize };
            self.add(rows.entry(b).or_default(), x, weights.as_ref().map(|w| w[i]), &mut max_seen);
        }
        self.output(ctx, rows, batches, max_seen, is_1d)
    }

    fn ragged(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (sp, vt, w) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let splits = index_vec(&sp).map_err(|e| ctx.error(e.message))?;
        let v = Self::values(ctx, &vt)?;
        if splits.len() < 2 {
            return Err(ctx.error("Must provide at least 2 elements for the splits argument"));
        }
        if splits[0] != 0 {
            return Err(ctx.error(format!("Splits must start with 0, not with {}", splits[0])));
        }
        let last = splits[splits.len() - 1];
        if last != v.len() as i64 {
            return Err(
                ctx.error(format!("Splits must end with the number of values, got {last} instead of {}", v.len()))
            );
        }
        if splits.windows(2).any(|p| p[1] < p[0]) {
            return Err(ctx.error(format!("Splits must be non-decreasing, got {splits:?}")));
        }
        let weights = self.weights(ctx, &w, &vt, "values")?;
        let mut rows = Rows::new();
        let mut max_seen = 0;
        for (b, p) in splits.windows(2).enumerate() {
            for i in p[0] as usize..p[1] as usize {
                self.add(rows.entry(b).or_default(), v[i], weights.as_ref().map(|w| w[i]), &mut max_seen);
            }
        }
        self.output(ctx, rows, splits.len() - 1, max_seen, false)
    }
}

impl OpKernel for Count {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        match self.kind {
            Kind::Dense => self.dense(ctx),
            Kind::Sparse => self.sparse(ctx),
            Kind::Ragged => self.ragged(ctx),
        }
    }
}

fn make(n: &ferroflow_core::proto::NodeDef, kind: Kind) -> Result<Box<dyn OpKernel>, Status> {
    let out = n.attr_type("output_type")?;
    if !matches!(out, DataType::Int32 | DataType::Int64 | DataType::Float | DataType::Double) {
        return Err(Status::invalid_argument(format!("{}: output_type {out} is not supported", n.op)));
    }
    Ok(Box::new(Count {
        kind,
        minlength: n.attr_int("minlength")?,
        maxlength: n.attr_int("maxlength")?,
        binary: n.attr_bool("binary_output")?,
        out,
    }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("DenseCountSparseOutput", |n| make(n, Kind::Dense));
    r.add("SparseCountSparseOutput", |n| make(n, Kind::Sparse));
    r.add("RaggedCountSparseOutput", |n| make(n, Kind::Ragged));
}
