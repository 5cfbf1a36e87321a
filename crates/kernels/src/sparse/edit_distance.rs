//! `EditDistance` (`tf.edit_distance`): the Levenshtein distance between the sequences of a
//! hypothesis and a truth sparse tensor (the last dimension holds the sequences, the others
//! index them), optionally divided by the truth's length. The output's shape is the larger
//! of the two leading shapes, dimension by dimension. A group present on one side only
//! counts as compared with an empty sequence: with `normalize`, an empty truth gives inf
//! (0 when both are empty) and an empty hypothesis 1. Groups are walked as TensorFlow
//! walks them (runs of entries in order, the indices assumed sorted).

use std::cmp::Ordering;

use ferroflow_core::{half, DataType, NodeAttrs, Shape, Status, Tensor, C128, C64};

use super::groups::{flat_offset, runs, strides};
use super::util::Indices;
use crate::array::util::index_vec;
use crate::{KernelRegistry, OpContext, OpKernel};

struct EditDistance {
    normalize: bool,
}

fn dims_str(t: &Tensor) -> String {
    format!("[{}]", t.dims().iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","))
}

/// The Levenshtein distance between `a` and `b` (elements equal by `==`, so NaN never
/// matches).
fn levenshtein<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    if a.is_empty() || b.is_empty() {
        return a.len().max(b.len());
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0usize; b.len() + 1];
    for (i, x) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let subst = prev[j] + usize::from(x != y);
            cur[j + 1] = subst.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// One side's checked inputs: indices, values, shape.
struct Side {
    m: Indices,
    values: Tensor,
    shape: Vec<i64>,
}

impl EditDistance {
    /// TensorFlow's checks of the six inputs, in its order.
    fn sides(ctx: &OpContext) -> Result<(Side, Side), Status> {
        let t: Vec<Tensor> = (0..6).map(|i| ctx.input(i)).collect::<Result<_, _>>()?;
        let (hi, hv, hs, ti, tv, ts) = (&t[0], &t[1], &t[2], &t[3], &t[4], &t[5]);
        for (x, name, rank, kind) in [
            (hi, "hypothesis_indices", 2, "matrix"),
            (ti, "truth_indices", 2, "matrix"),
            (hv, "hypothesis_values", 1, "vector"),
            (tv, "truth_values", 1, "vector"),
            (hs, "hypothesis_shape", 1, "vector"),
            (ts, "truth_shape", 1, "vector"),
        ] {
            if x.rank() != rank {
                return Err(ctx.error(format!("{name} should be a {kind}, but got shape: {}", dims_str(x))));
            }
        }
        let mismatch = |what: &str, a: &Tensor, b: &Tensor| {
            ctx.error(format!("Expected {what} their shapes are: {} and {}", dims_str(a), dims_str(b)))
        };
        if hv.dims()[0] != hi.dims()[0] {
            return Err(mismatch("hypothesis_values.NumElements == #rows(hypothesis_indices),", hv, hi));
        }
        if hs.dims()[0] != hi.dims()[1] {
            return Err(mismatch("hypothesis_shape.NumElements == #cols(hypothesis_indices),", hs, hi));
        }
        if ts.dims()[0] < 2 {
            return Err(ctx.error(format!(
                "Input SparseTensors must have rank at least 2, but truth_shape rank is: {}",
                ts.dims()[0]
            )));
        }
        if tv.dims()[0] != ti.dims()[0] {
            return Err(mismatch("truth_values.NumElements == #rows(truth_indices),", tv, ti));
        }
        if ts.dims()[0] != ti.dims()[1] {
            return Err(mismatch("truth_shape.NumElements == #cols(truth_indices),", ts, ti));
        }
        if ts.dims()[0] != hs.dims()[0] {
            return Err(mismatch("truth and hypothesis to have matching ranks, but", ts, hs));
        }
        let side = |ix: &Tensor, values: &Tensor, shape: &Tensor| -> Result<Side, Status> {
            let shape = index_vec(shape).map_err(|e| ctx.error(e.message))?;
            if let Some(d) = shape.iter().find(|&&d| d < 0) {
                return Err(ctx.error(format!("Dimension {d} must be >= 0")));
            }
            if shape.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d)).is_none() {
                let shown = shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",");
                return Err(ctx.error(format!("Shape [{shown}] would have more than 2**63 - 1 elements")));
            }
            let v = index_vec(ix).map_err(|e| ctx.error(e.message))?;
            Ok(Side { m: Indices { n: ix.dims()[0], rank: ix.dims()[1], v }, values: values.clone(), shape })
        };
        Ok((side(hi, hv, hs)?, side(ti, tv, ts)?))
    }
}

/// The distances into `out` (of `strides`), walking both sides' groups in order.
fn distances<T: PartialEq + ferroflow_core::TensorType>(
    ctx: &OpContext,
    (h, t): (&Side, &Side),
    normalize: bool,
    st: &[i64],
    out: &mut [f32],
) -> Result<(), Status> {
    let k = st.len();
    let (hv, tv) = (h.values.as_slice::<T>()?, t.values.as_slice::<T>()?);
    let (hr, tr) = (runs(&h.m, k), runs(&t.m, k));
    let n = out.len();
    let slot = |key: &[i64]| -> Result<usize, Status> {
        let loc = flat_offset(key, st);
        match loc.and_then(|l| usize::try_from(l).ok()).filter(|&l| l < n) {
            Some(l) => Ok(l),
            None => Err(ctx.error_with(Status::internal(format!(
                "Got an inner product {} which would require writing to outside of the buffer for the output \
                 tensor (max elements {n})",
                loc.map_or_else(|| "(overflow)".to_string(), |l| l.to_string())
            )))),
        }
    };
    let (mut i, mut j) = (0, 0);
    while i < hr.len() || j < tr.len() {
        let ord = match (hr.get(i), tr.get(j)) {
            (Some(a), Some(b)) => b.key(&t.m, k).cmp(a.key(&h.m, k)),
            // Only hypotheses left: as if the truth's group came later.
            (Some(_), None) => Ordering::Greater,
            _ => Ordering::Less,
        };
        match ord {
            Ordering::Equal => {
                let (a, b) = (hr[i], tr[j]);
                let l = slot(b.key(&t.m, k))?;
                let truth = &tv[b.start..b.end];
                let d = levenshtein(truth, &hv[a.start..a.end]) as f32;
                out[l] = if normalize { d / truth.len() as f32 } else { d };
                i += 1;
                j += 1;
            }
            // The truth's group is later: this hypothesis has an empty truth.
            Ordering::Greater => {
                let a = hr[i];
                let l = slot(a.key(&h.m, k))?;
                let len = (a.end - a.start) as f32;
                out[l] = if normalize && len != 0.0 { f32::INFINITY } else { len };
                i += 1;
            }
            // This truth has an empty hypothesis.
            Ordering::Less => {
                let b = tr[j];
                let l = slot(b.key(&t.m, k))?;
                out[l] = if normalize { 1.0 } else { (b.end - b.start) as f32 };
                j += 1;
            }
        }
    }
    Ok(())
}

impl OpKernel for EditDistance {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (h, t) = EditDistance::sides(ctx)?;
        let k = t.shape.len() - 1;
        let out_dims: Vec<i64> = (0..k).map(|d| h.shape[d].max(t.shape[d])).collect();
        let elements = out_dims.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d)).ok_or_else(|| {
            ctx.error(format!(
                "Shape [{}] would have more than 2**63 - 1 elements",
                out_dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",")
            ))
        })?;
        if elements == 0 {
            return Err(ctx.error(format!(
                "Got output shape [{}] which has 0 elements",
                out_dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",")
            )));
        }
        let dims: Vec<usize> = out_dims.iter().map(|&d| d as usize).collect();
        let mut out = ferroflow_core::alloc::zeroed::<f32>(&dims)?;
        let st = strides(&out_dims);
        let sides = (&h, &t);
        let norm = self.normalize;
        let o = &mut out;
        match h.values.dtype() {
            DataType::Float => distances::<f32>(ctx, sides, norm, &st, o),
            DataType::Double => distances::<f64>(ctx, sides, norm, &st, o),
            DataType::Half => distances::<half::f16>(ctx, sides, norm, &st, o),
            DataType::BFloat16 => distances::<half::bf16>(ctx, sides, norm, &st, o),
            DataType::Int8 => distances::<i8>(ctx, sides, norm, &st, o),
            DataType::Int16 => distances::<i16>(ctx, sides, norm, &st, o),
            DataType::Int32 => distances::<i32>(ctx, sides, norm, &st, o),
            DataType::Int64 => distances::<i64>(ctx, sides, norm, &st, o),
            DataType::UInt8 => distances::<u8>(ctx, sides, norm, &st, o),
            DataType::UInt16 => distances::<u16>(ctx, sides, norm, &st, o),
            DataType::UInt32 => distances::<u32>(ctx, sides, norm, &st, o),
            DataType::UInt64 => distances::<u64>(ctx, sides, norm, &st, o),
            DataType::Bool => distances::<bool>(ctx, sides, norm, &st, o),
            DataType::String => distances::<Vec<u8>>(ctx, sides, norm, &st, o),
            DataType::Complex64 => distances::<C64>(ctx, sides, norm, &st, o),
            DataType::Complex128 => distances::<C128>(ctx, sides, norm, &st, o),
            d => Err(ctx.error(format!("no CPU kernel for dtype {d}"))),
        }?;
        ctx.set_output(0, Tensor::new(Shape::new(dims), out)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("EditDistance", |n| Ok(Box::new(EditDistance { normalize: n.attr_bool("normalize")? })));
}

#[cfg(test)]
#[path = "edit_distance_tests.rs"]
mod tests;
