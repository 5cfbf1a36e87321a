//! The sum inside a `SparseConditionalAccumulator`: indexed slices (a vector of row
//! indices, the rows as a `[nnz, ...]` values tensor) added the way TensorFlow adds them.
//!
//! TensorFlow's semantics, which this follows exactly (checked against TensorFlow 2.21):
//! - a gradient is folded into the sum by one merge pass over both index lists, assuming
//!   each is sorted: equal indices at the heads are summed, otherwise the smaller head is
//!   copied. Sorted, duplicate-free gradients therefore give the union of their indices in
//!   increasing order; unsorted or repeated indices are kept in merge order, not combined.
//! - every row of the sum counts the gradients that were added into it, and `MEAN` divides
//!   each row by its own count (an index only one of two gradients had keeps that
//!   gradient's value), `SUM` leaves it.
//! - the shape output is `[shape[0], values.shape[1:]...]`, with `-1` first when the
//!   accumulator's shape has unknown rank or rank 0.
//! - validation (only of gradients that are not stale) uses TensorFlow's messages.

use std::ops::{Add, Div};

use ferroflow_core::{half::f16, DataType, Status, Tensor, TensorType};

/// One sparse gradient as the kernel received it (checked when it is applied).
pub struct SparseGradient {
    /// `gradient_indices` (int64, must be a vector).
    pub indices: Tensor,
    /// `gradient_values` (`[nnz, ...]`).
    pub values: Tensor,
    /// `gradient_shape` when the op's `has_known_shape` is true.
    pub shape: Option<Tensor>,
}

/// Indexed slices summed so far, with the number of gradients in each row.
pub(crate) struct SparseSum {
    indices: Vec<i64>,
    counts: Vec<i32>,
    values: Tensor,
}

fn bad(msg: String) -> Status {
    Status::invalid_argument(msg)
}

/// Values `[n, ...]` as (n, elements per row).
fn rows(values: &Tensor) -> (usize, usize) {
    let d = values.dims();
    (d[0], d[1..].iter().product())
}

/// TensorFlow's checks of the gradient's own tensors and of its shape against the
/// accumulator's (`shape`: `None` = unknown rank, `-1` = unknown dimension) and, once
/// something is accumulated, against the sum's values.
fn validate(shape: Option<&[i64]>, g: &SparseGradient, sum: Option<&SparseSum>) -> Result<Vec<i64>, Status> {
    if g.indices.rank() != 1 {
        return Err(bad(format!("Input indices should be vector but received shape: {}", g.indices.shape())));
    }
    let idx = g.indices.as_slice::<i64>()?.to_vec();
    let vals = g.values.dims();
    if vals.is_empty() {
        return Err(bad("Values cannot be 0-dimensional.".into()));
    }
    if vals[0] != idx.len() {
        return Err(bad(format!("Expected {} non-empty input values, got {}", idx.len(), vals[0])));
    }
    let s = shape.unwrap_or(&[]);
    if let Some(gs) = &g.shape {
        let gs = gs.as_slice::<i64>()?;
        if s.len() > gs.len() {
            return Err(bad(format!("Shape mismatch: expected shape rank at least {}, got {}", s.len(), gs.len())));
        }
        for (i, (&want, &got)) in s.iter().zip(gs).enumerate() {
            if want != -1 && want != got {
                return Err(bad(format!("Shape mismatch: expected shape dim {i} to be {want}, got {got}")));
            }
        }
    }
    // Only an upper bound, as in TensorFlow: negative indices pass through.
    if let Some(&limit) = s.first().filter(|&&d| d != -1) {
        if let Some((i, &x)) = idx.iter().enumerate().find(|(_, &x)| x >= limit) {
            return Err(bad(format!(
                "Shape mismatch: index of slice {i} exceeded limits of shape; index is {x} exceeded {limit}"
            )));
        }
    }
    match sum {
        Some(sum) => {
            let acc = sum.values.dims();
            if acc.len() != vals.len() {
                return Err(bad(format!("Shape mismatch: expected values rank {}, got {}", acc.len(), vals.len())));
            }
            for i in 1..acc.len() {
                if acc[i] != vals[i] {
                    return Err(bad(format!(
                        "Shape mismatch: expected values dim {i} to be {}, got {}",
                        acc[i], vals[i]
                    )));
                }
            }
        }
        None => {
            if s.len() > vals.len() {
                return Err(bad(format!(
                    "Shape mismatch: expected values rank at least {}, got {}",
                    s.len(),
                    vals.len()
                )));
            }
            for i in 1..s.len() {
                if s[i] != -1 && s[i] != vals[i] as i64 {
                    return Err(bad(format!(
                        "Shape mismatch: expected values dim {i} to be {}, got {}",
                        s[i], vals[i]
                    )));
                }
            }
        }
    }
    Ok(idx)
}

/// A vector of `n` elements, or ResourceExhausted instead of aborting.
fn try_vec<T>(n: usize) -> Result<Vec<T>, Status> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        Status::resource_exhausted(format!("cannot allocate {n} elements for an accumulated sparse sum"))
    })?;
    Ok(v)
}

/// Where a row of the merged sum comes from.
#[derive(Clone, Copy)]
enum From {
    Sum(usize),
    Grad(usize),
    Both(usize, usize),
}

/// One merge pass over two index lists (each assumed sorted, as TensorFlow assumes).
fn merge_plan(a: &[i64], b: &[i64]) -> Result<Vec<From>, Status> {
    let mut plan = try_vec(a.len() + b.len())?;
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        plan.push(match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => From::Sum(i),
            std::cmp::Ordering::Equal => From::Both(i, j),
            std::cmp::Ordering::Greater => From::Grad(j),
        });
        match plan.last() {
            Some(From::Sum(_)) => i += 1,
            Some(From::Grad(_)) => j += 1,
            _ => (i, j) = (i + 1, j + 1),
        }
    }
    plan.extend((i..a.len()).map(From::Sum));
    plan.extend((j..b.len()).map(From::Grad));
    Ok(plan)
}

/// The merged values, row by row (`width` elements a row).
fn merge_values<T: TensorType + Copy + Add<Output = T>>(
    plan: &[From],
    sum: &Tensor,
    grad: &Tensor,
    width: usize,
) -> Result<Vec<T>, Status> {
    let (a, b) = (sum.as_slice::<T>()?, grad.as_slice::<T>()?);
    let n = plan.len().checked_mul(width).ok_or_else(|| Status::resource_exhausted("sparse sum too large"))?;
    let mut out = try_vec(n)?;
    for f in plan {
        match *f {
            From::Sum(i) => out.extend_from_slice(&a[i * width..(i + 1) * width]),
            From::Grad(j) => out.extend_from_slice(&b[j * width..(j + 1) * width]),
            From::Both(i, j) => out
                .extend(a[i * width..(i + 1) * width].iter().zip(&b[j * width..(j + 1) * width]).map(|(&x, &y)| x + y)),
        }
    }
    Ok(out)
}

/// Divides each row by its count.
fn divide_rows<T: TensorType + Copy + Div<Output = T>>(
    values: &mut Tensor,
    counts: &[i32],
    width: usize,
    conv: impl Fn(i32) -> T,
) -> Result<(), Status> {
    let v = values.data_mut::<T>()?;
    for (row, &c) in v.chunks_mut(width.max(1)).zip(counts) {
        let c = conv(c);
        row.iter_mut().for_each(|x| *x = *x / c);
    }
    Ok(())
}

impl SparseSum {
    /// Whether TensorFlow has a kernel for this element type (float16, float32, float64).
    pub(crate) fn supports(dtype: DataType) -> bool {
        matches!(dtype, DataType::Half | DataType::Float | DataType::Double)
    }

    /// The sum after the first gradient since a take.
    pub(crate) fn first(shape: Option<&[i64]>, g: SparseGradient) -> Result<SparseSum, Status> {
        let indices = validate(shape, &g, None)?;
        Ok(SparseSum { counts: vec![1; indices.len()], indices, values: g.values })
    }

    /// Adds one more gradient (validated first: nothing changes on an error).
    pub(crate) fn add(&mut self, shape: Option<&[i64]>, g: &SparseGradient) -> Result<(), Status> {
        let idx = validate(shape, g, Some(self))?;
        let plan = merge_plan(&self.indices, &idx)?;
        let (_, width) = rows(&self.values);
        let mut dims = self.values.dims().to_vec();
        dims[0] = plan.len();
        let values = match self.values.dtype() {
            DataType::Half => Tensor::new(dims, merge_values::<f16>(&plan, &self.values, &g.values, width)?),
            DataType::Float => Tensor::new(dims, merge_values::<f32>(&plan, &self.values, &g.values, width)?),
            DataType::Double => Tensor::new(dims, merge_values::<f64>(&plan, &self.values, &g.values, width)?),
            d => return Err(Status::internal(format!("sparse sum of {d} values"))),
        }?;
        let mut indices = try_vec(plan.len())?;
        let mut counts = try_vec(plan.len())?;
        for f in &plan {
            let (i, c) = match *f {
                From::Sum(i) => (self.indices[i], self.counts[i]),
                From::Grad(j) => (idx[j], 1),
                From::Both(i, _) => (self.indices[i], self.counts[i] + 1),
            };
            indices.push(i);
            counts.push(c);
        }
        *self = SparseSum { indices, counts, values };
        Ok(())
    }

    /// The take's outputs `[indices, values, shape]`, each row divided by its count if
    /// `mean`; `shape` is the accumulator's declared shape.
    pub(crate) fn finish(self, mean: bool, shape: Option<&[i64]>) -> Result<[Tensor; 3], Status> {
        let SparseSum { indices, counts, mut values } = self;
        let (_, width) = rows(&values);
        if mean {
            match values.dtype() {
                DataType::Half => divide_rows::<f16>(&mut values, &counts, width, |c| f16::from_f32(c as f32))?,
                DataType::Float => divide_rows::<f32>(&mut values, &counts, width, |c| c as f32)?,
                DataType::Double => divide_rows::<f64>(&mut values, &counts, width, f64::from)?,
                d => return Err(Status::internal(format!("sparse mean of {d} values"))),
            }
        }
        let first = shape.and_then(|s| s.first().copied()).unwrap_or(-1);
        let dense: Vec<i64> = std::iter::once(first).chain(values.dims()[1..].iter().map(|&d| d as i64)).collect();
        Ok([Tensor::vec(indices), values, Tensor::vec(dense)])
    }
}
