//! The outputs of `ParseSequenceExampleV2` from the parsed batch: sparse, dense and ragged
//! tensors of the context features and of the feature lists, with TensorFlow's checks.

use ferroflow_core::{DataType, Shape, Status, Storage, Tensor};

use super::super::example_proto::{Feature, SequenceExample};
use super::super::parse_example::{append, append_default, empty_storage, storage_len, type_matches, type_name};
use crate::array::util::check_alloc;
use crate::OpContext;

/// The parsed batch: each example's protos and the name errors give it.
pub(super) struct Batch {
    pub(super) examples: Vec<SequenceExample>,
    pub(super) names: Vec<String>,
    pub(super) scalar: bool,
}

impl Batch {
    pub(super) fn name(&self, i: usize) -> &str {
        self.names.get(i).map_or("<unknown>", String::as_str)
    }
    pub(super) fn size(&self) -> usize {
        self.examples.len()
    }
    /// `dims` with the batch dimension in front (none for a scalar input).
    pub(super) fn batched(&self, dims: &[usize]) -> Vec<usize> {
        let mut d = if self.scalar { vec![] } else { vec![self.size()] };
        d.extend_from_slice(dims);
        d
    }
}

pub(super) fn dims_text(d: &[usize]) -> String {
    d.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

pub(super) fn key_text(k: &[u8]) -> String {
    String::from_utf8_lossy(k).into_owned()
}

/// Row splits as a tensor of `t` (int32 or int64).
pub(super) fn splits_tensor(ctx: &OpContext, key: &str, splits: Vec<i64>, t: DataType) -> Result<Tensor, Status> {
    let n = splits.len();
    if t == DataType::Int32 {
        let s = splits
            .into_iter()
            .map(i32::try_from)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| ctx.error(format!("Key: {key}.  the row splits do not fit int32")))?;
        return Tensor::new(Shape::new(vec![n]), s);
    }
    Tensor::new(Shape::new(vec![n]), splits)
}

/// A sparse tensor from each example's list of features (one feature per example for a
/// context feature, a missing one as none): indices (example, step, value) without the
/// example for a scalar input, and without the step for a context feature.
pub(super) fn sparse(
    batch: &Batch,
    rows: &[Vec<&Feature>],
    t: DataType,
    steps: bool,
    type_error: &dyn Fn(usize, usize) -> Status,
) -> Result<[Tensor; 3], Status> {
    let mut vals = empty_storage(t);
    let mut idx = Vec::new();
    let (mut most_steps, mut widest) = (0usize, 0usize);
    for (i, features) in rows.iter().enumerate() {
        most_steps = most_steps.max(features.len());
        for (r, f) in features.iter().enumerate() {
            let before = storage_len(&vals);
            append(f, t, &mut vals).map_err(|_| type_error(i, r))?;
            let n = storage_len(&vals) - before;
            widest = widest.max(n);
            for j in 0..n {
                if !batch.scalar {
                    idx.push(i as i64);
                }
                if steps {
                    idx.push(r as i64);
                }
                idx.push(j as i64);
            }
        }
    }
    let mut shape = if batch.scalar { vec![] } else { vec![batch.size() as i64] };
    if steps {
        shape.push(most_steps as i64);
    }
    shape.push(widest as i64);
    let nnz = storage_len(&vals);
    Ok([
        Tensor::new(Shape::new(vec![nnz, shape.len()]), idx)?,
        Tensor::from_storage(Shape::new(vec![nnz]), vals)?,
        Tensor::new(Shape::new(vec![shape.len()]), shape)?,
    ])
}

/// A dense context feature: `per` values in every example (the default where missing).
pub(super) fn context_dense(
    ctx: &OpContext,
    batch: &Batch,
    key: &str,
    (t, shape): (DataType, &[usize]),
    default: &Tensor,
) -> Result<Tensor, Status> {
    let per: usize = shape.iter().product();
    let mut most = 0usize;
    let mut found = Vec::with_capacity(batch.size());
    for (i, ex) in batch.examples.iter().enumerate() {
        let f = ex.context.get(key.as_bytes()).filter(|f| !matches!(f, Feature::Empty));
        if let Some(f) = f {
            type_matches(f, t).map_err(|_| {
                ctx.error(format!(
                    "Name: {}, Context feature: {key}.  Data types don't match. Expected type: {}",
                    batch.name(i),
                    type_name(t)
                ))
            })?;
            most = most.max(f.len());
        }
        found.push(f);
    }
    let required = default.num_elements() == 0;
    if most > per || (most != per && (required || most != 0)) {
        return Err(ctx.error(format!(
            "Inconsistent max number of elements for feature {key}: expected {per}, but found {most}"
        )));
    }
    let dims = batch.batched(shape);
    check_alloc(&dims, t).map_err(|e| ctx.error_with(e))?;
    let mut out = empty_storage(t);
    for (i, f) in found.into_iter().enumerate() {
        match f {
            Some(f) if f.len() == per => {
                append(f, t, &mut out).map_err(|got| ctx.error(format!("feature type {got} changed")))?
            }
            Some(_) => return Err(ctx.error(format!("Unexpected number of elements in example {}", batch.name(i)))),
            None if required => {
                return Err(ctx.error(format!(
                    "Feature: {key} (data type: {}) is required but could not be found.",
                    type_name(t)
                )))
            }
            None => {
                if !append_default(&mut out, default.storage()) {
                    return Err(ctx.error(format!("Key: {key}.  the default has the wrong dtype")));
                }
            }
        }
    }
    Tensor::from_storage(Shape::new(dims), out)
}

/// A dense feature list: every step holds `shape` values; the examples' sequences padded
/// (zeros, empty strings) to the longest; and each example's length.
pub(super) fn list_dense(
    ctx: &OpContext,
    batch: &Batch,
    key: &str,
    (t, shape): (DataType, &[usize]),
    assumed_empty: bool,
) -> Result<(Tensor, Tensor), Status> {
    let per: usize = shape.iter().product();
    let mut lists = Vec::with_capacity(batch.size());
    for (i, ex) in batch.examples.iter().enumerate() {
        let Some(steps) = ex.lists.get(key.as_bytes()) else {
            if !assumed_empty {
                return Err(ctx.error(format!(
                    "Name: {}, Feature list '{key}' is required but could not be found.  Did you mean to include it \
                     in feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?",
                    batch.name(i)
                )));
            }
            lists.push(&[][..]);
            continue;
        };
        let mut total = 0usize;
        for (r, f) in steps.iter().enumerate() {
            type_matches(f, t).map_err(|_| {
                ctx.error(format!(
                    "Name: {}, Feature list: {key}, Index: {r}.  Data types don't match. Expected type: {}",
                    batch.name(i),
                    type_name(t)
                ))
            })?;
            total += f.len();
        }
        if !total.is_multiple_of(per) {
            return Err(ctx.error(format!(
                "Feature list '{key}' has an unexpected number of values.  Total values size: {total} is not \
                 consistent with output shape: [?{}{}]",
                if shape.is_empty() { "" } else { "," },
                dims_text(shape)
            )));
        }
        if let Some((r, f)) = steps.iter().enumerate().find(|(_, f)| f.len() != per) {
            return Err(ctx.error(format!(
                "Name: {}, Key: {key}, Index: {r}.  Number of values != expected.  values size: {} but output \
                 shape: [{}]",
                batch.name(i),
                f.len(),
                dims_text(shape)
            )));
        }
        lists.push(&steps[..]);
    }
    let longest = lists.iter().map(|l| l.len()).max().unwrap_or(0);
    let mut row = vec![longest];
    row.extend_from_slice(shape);
    let dims = batch.batched(&row);
    check_alloc(&dims, t).map_err(|e| ctx.error_with(e))?;
    let mut out = empty_storage(t);
    for steps in &lists {
        for f in steps.iter() {
            append(f, t, &mut out).map_err(|got| ctx.error(format!("feature type {got} changed")))?;
        }
        let pad = (longest - steps.len()) * per;
        match &mut out {
            Storage::F32(o) => o.extend(std::iter::repeat_n(0.0, pad)),
            Storage::I64(o) => o.extend(std::iter::repeat_n(0, pad)),
            Storage::Str(o) => o.extend(std::iter::repeat_n(Vec::new(), pad)),
            _ => {}
        }
    }
    let lengths: Vec<i64> = lists.iter().map(|l| l.len() as i64).collect();
    let lengths = Tensor::new(Shape::new(batch.batched(&[])), lengths)?;
    Ok((Tensor::from_storage(Shape::new(dims), out)?, lengths))
}

/// A ragged feature: values, the outer splits (where each example's steps begin; for a
/// context feature, where each example's values begin) and, for a feature list, the inner
/// splits (where each step's values begin).
pub(super) fn ragged(
    ctx: &OpContext,
    batch: &Batch,
    rows: &[Vec<&Feature>],
    (key, t, split_t): (&str, DataType, DataType),
    steps: bool,
    type_error: &dyn Fn(usize, usize) -> Status,
) -> Result<Vec<Tensor>, Status> {
    let mut values = empty_storage(t);
    let (mut outer, mut inner) = (vec![0i64], vec![0i64]);
    for (i, features) in rows.iter().enumerate() {
        for (r, f) in features.iter().enumerate() {
            append(f, t, &mut values).map_err(|_| type_error(i, r))?;
            inner.push(storage_len(&values) as i64);
        }
        outer.push(if steps { inner.len() as i64 - 1 } else { storage_len(&values) as i64 });
    }
    let n = storage_len(&values);
    let mut outer = if batch.scalar {
        // For a scalar input TensorFlow's outer splits are a scalar (context) or one value
        // (feature lists) that it leaves unset, and Python reads only the values and inner
        // splits; ferroflow gives the same shapes holding the end split.
        splits_tensor(ctx, key, vec![outer.last().copied().unwrap_or(0)], split_t)?
    } else {
        splits_tensor(ctx, key, outer, split_t)?
    };
    if batch.scalar && !steps {
        outer = outer.reshape(Shape::scalar())?;
    }
    let mut out = vec![Tensor::from_storage(Shape::new(vec![n]), values)?, outer];
    if steps {
        out.push(splits_tensor(ctx, key, inner, split_t)?);
    }
    Ok(out)
}
