//! `CTCLoss`: for each batch entry, −ln p(labels | logits) over all alignments (Graves'
//! forward-backward recursions in log space) and the gradient of that loss with respect to
//! the logits, `softmax(logits) − posterior(class)`, as TensorFlow's kernel computes them:
//! its checks and messages, `preprocess_collapse_repeated`, `ctc_merge_repeated`,
//! `ignore_longer_outputs_than_inputs`, zero loss and gradient for empty sequences.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};
use rayon::prelude::*;

use super::{bool_attr, log_sum_exp, LogReal};
use crate::{OpContext, OpKernel};

struct CtcLoss {
    preprocess_collapse_repeated: bool,
    ctc_merge_repeated: bool,
    ignore_longer_outputs_than_inputs: bool,
}

pub(super) fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(CtcLoss {
        preprocess_collapse_repeated: bool_attr(n, "preprocess_collapse_repeated", false)?,
        ctc_merge_repeated: bool_attr(n, "ctc_merge_repeated", true)?,
        ignore_longer_outputs_than_inputs: bool_attr(n, "ignore_longer_outputs_than_inputs", false)?,
    }))
}

/// The labels of each batch entry from the sparse `labels_indices` / `labels_values` (rows in
/// row-major order, as a valid SparseTensor of shape `[batch, max_label_len]`).
fn label_sequences(ctx: &OpContext, idx: &Tensor, vals: &Tensor, batch: usize) -> Result<Vec<Vec<i32>>, Status> {
    let rows = idx.dims()[0];
    if idx.dims()[1] != 2 {
        return Err(ctx.error(format!("labels_indices must have 2 columns (batch, position), got {}", idx.shape())));
    }
    let ix = idx.as_slice::<i64>()?;
    let v = vals.as_slice::<i32>()?;
    let max_len = ix.chunks_exact(2).map(|r| r[1] + 1).max().unwrap_or(0);
    let mut out = vec![Vec::new(); batch];
    let mut prev: Option<(i64, i64)> = None;
    for (i, r) in ix.chunks_exact(2).enumerate() {
        let (b, p) = (r[0], r[1]);
        if b < 0 || b >= batch as i64 || p < 0 {
            return Err(ctx.error(format!(
                "label SparseTensor is not valid: indices[{i}] = [{b},{p}] is out of bounds: need 0 <= index < [{batch},{max_len}]"
            )));
        }
        if prev.is_some_and(|q| q >= (b, p)) {
            let what = if prev == Some((b, p)) { "is repeated" } else { "is out of order" };
            return Err(ctx.error(format!(
                "label SparseTensor is not valid: indices[{i}] = [{b},{p}] {what}. Many sparse ops require sorted indices."
            )));
        }
        prev = Some((b, p));
        out[b as usize].push(v[i]);
    }
    debug_assert!(rows == v.len());
    Ok(out)
}

/// l′: the labels of one entry (repeats collapsed if asked, cut at the first label ≥ the
/// blank) with a blank before each and one at the end; or TensorFlow's error for them.
fn l_prime(label: &[i32], b: usize, classes: usize, collapse: bool) -> Result<Vec<usize>, String> {
    if label.is_empty() {
        return Err(format!("Labels length is zero in batch {b}"));
    }
    let blank = classes as i64 - 1;
    let join = |l: &[i64]| l.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",");
    let mut l: Vec<i64> = Vec::with_capacity(label.len());
    let mut finished = false;
    for (i, &x) in label.iter().enumerate() {
        if i == 0 || !collapse || x != label[i - 1] {
            if i64::from(x) >= blank {
                finished = true;
            } else if finished {
                let all: Vec<i64> = label.iter().map(|&v| i64::from(v)).collect();
                return Err(format!(
                    "Saw a non-null label (index >= num_classes - 1) following a null label, batch: {b} num_classes: {classes} labels: {} labels seen so far: {}",
                    join(&all),
                    join(&l)
                ));
            } else {
                l.push(i64::from(x));
            }
        }
    }
    if l.iter().any(|&x| x < 0) {
        return Err(format!("All labels must be nonnegative integers, batch: {b} labels: {}", join(&l)));
    }
    let mut lp = Vec::with_capacity(2 * l.len() + 1);
    for &x in &l {
        lp.push(blank as usize);
        lp.push(x as usize);
    }
    lp.push(blank as usize);
    Ok(lp)
}

/// The range of l′ positions that can still reach the end (and be reached from the start)
/// at time `t` of `steps`.
fn live(u_len: usize, steps: usize, t: usize) -> std::ops::Range<usize> {
    u_len.saturating_sub(2 * (steps - t))..u_len.min(2 * (t + 1))
}

/// Loss and gradient (`steps × classes`, row per time step) of one entry whose softmaxed
/// activations are `y` (`steps × classes`).
fn entry<T: LogReal>(y: &[T], classes: usize, lp: &[usize], merge: bool) -> (T, Vec<T>) {
    let steps = y.len() / classes;
    let u_len = lp.len();
    let blank = classes - 1;
    // ln y of each l′ position at each step, computed once.
    let log_y: Vec<T> = (0..steps).flat_map(|t| lp.iter().map(move |&k| y[t * classes + k].ln())).collect();
    let ly = |t: usize, u: usize| log_y[t * u_len + u];
    let skip = |u: usize, v: usize| lp[u] != blank && !(merge && lp[u] == lp[v]);
    let stay = |u: usize| merge || lp[u] == blank;
    // Forward: alpha[t][u] includes y at t.
    let mut alpha = vec![T::LOG_ZERO; steps * u_len];
    alpha[0] = y[blank].ln();
    if u_len > 1 {
        alpha[1] = ly(0, 1);
    }
    for t in 1..steps {
        let (prev, cur) = alpha.split_at_mut(t * u_len);
        let prev = &prev[(t - 1) * u_len..];
        for u in live(u_len, steps, t) {
            let mut sum = if stay(u) { prev[u] } else { T::LOG_ZERO };
            if u > 0 {
                sum = log_sum_exp(sum, prev[u - 1]);
            }
            if u > 1 && skip(u, u - 2) {
                sum = log_sum_exp(sum, prev[u - 2]);
            }
            cur[u] = ly(t, u) + sum;
        }
    }
    // Backward: beta[t][u] excludes y at t.
    let mut beta = vec![T::LOG_ZERO; steps * u_len];
    for u in u_len.saturating_sub(2)..u_len {
        beta[(steps - 1) * u_len + u] = T::ZERO;
    }
    for t in (0..steps.saturating_sub(1)).rev() {
        let (cur, next) = beta.split_at_mut((t + 1) * u_len);
        let cur = &mut cur[t * u_len..];
        for u in live(u_len, steps, t) {
            if stay(u) {
                cur[u] = log_sum_exp(cur[u], next[u] + ly(t + 1, u));
            }
            if u + 1 < u_len {
                cur[u] = log_sum_exp(cur[u], next[u + 1] + ly(t + 1, u + 1));
            }
            if u + 2 < u_len && skip(u, u + 2) {
                cur[u] = log_sum_exp(cur[u], next[u + 2] + ly(t + 1, u + 2));
            }
        }
    }
    let log_p = (0..u_len).fold(T::LOG_ZERO, |acc, u| log_sum_exp(acc, alpha[u] + beta[u]));
    if log_p == T::LOG_ZERO {
        // No alignment has any probability: TensorFlow's gradient is the softmax itself.
        return (-log_p, y.to_vec());
    }
    let mut dy = y.to_vec();
    let mut prob = vec![T::LOG_ZERO; classes];
    for t in 0..steps {
        prob.iter_mut().for_each(|p| *p = T::LOG_ZERO);
        for u in 0..u_len {
            let k = lp[u];
            prob[k] = log_sum_exp(prob[k], alpha[t * u_len + u] + beta[t * u_len + u]);
        }
        for (d, &p) in dy[t * classes..(t + 1) * classes].iter_mut().zip(&prob) {
            *d -= (p - log_p).exp_single();
        }
    }
    (-log_p, dy)
}

/// Softmax over classes of entry `b`'s first `steps` time steps of `x` (`[time, batch,
/// classes]`).
fn softmax_rows<T: LogReal>(x: &[T], batch: usize, classes: usize, b: usize, steps: usize) -> Vec<T> {
    let mut y = Vec::with_capacity(steps * classes);
    for t in 0..steps {
        let row = &x[(t * batch + b) * classes..(t * batch + b + 1) * classes];
        let max = row.iter().copied().fold(row[0], |m, v| if v > m { v } else { m });
        let start = y.len();
        y.extend(row.iter().map(|&v| (v - max).exp()));
        let sum = y[start..].iter().fold(T::ZERO, |a, &v| a + v);
        y[start..].iter_mut().for_each(|v| *v = *v / sum);
    }
    y
}

impl CtcLoss {
    fn compute_typed<T: LogReal>(
        &self,
        ctx: &mut OpContext,
        x: &Tensor,
        labels: &[Vec<i32>],
        seq: &[i32],
    ) -> Result<(), Status> {
        let (max_time, batch, classes) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let mut lps = Vec::with_capacity(batch);
        for (b, label) in labels.iter().enumerate() {
            let lp = l_prime(label, b, classes, self.preprocess_collapse_repeated).map_err(|m| ctx.error(m))?;
            if !self.ignore_longer_outputs_than_inputs && label.len() > seq[b] as usize {
                return Err(ctx.error(format!(
                    "Not enough time for target transition sequence (required: {}, available: {}){b}You can turn this error into a warning by using the flag ignore_longer_outputs_than_inputs",
                    label.len(),
                    seq[b]
                )));
            }
            lps.push(lp);
        }
        let xs = x.as_slice::<T>()?;
        let merge = self.ctc_merge_repeated;
        let ignore = self.ignore_longer_outputs_than_inputs;
        let per_entry: Vec<Option<(T, Vec<T>)>> = (0..batch)
            .into_par_iter()
            .map(|b| {
                let steps = seq[b] as usize;
                if steps == 0 || (ignore && labels[b].len() > steps) {
                    return None;
                }
                let y = softmax_rows(xs, batch, classes, b, steps);
                Some(entry(&y, classes, &lps[b], merge))
            })
            .collect();
        let mut loss = vec![T::ZERO; batch];
        let mut grad = ferroflow_core::alloc::zeroed::<T>(&[max_time, batch, classes])?;
        for (b, r) in per_entry.into_iter().enumerate() {
            let Some((l, dy)) = r else { continue };
            loss[b] = l;
            for (t, row) in dy.chunks_exact(classes).enumerate() {
                grad[(t * batch + b) * classes..(t * batch + b + 1) * classes].copy_from_slice(row);
            }
        }
        ctx.set_output(0, Tensor::new(vec![batch], loss)?)?;
        ctx.set_output(1, Tensor::new(vec![max_time, batch, classes], grad)?)
    }
}

impl OpKernel for CtcLoss {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let idx = ctx.input(1)?;
        let vals = ctx.input(2)?;
        let seq_t = ctx.input(3)?;
        if x.rank() != 3 {
            return Err(ctx.error("inputs is not a 3-Tensor"));
        }
        if seq_t.rank() != 1 {
            return Err(ctx.error("sequence_length is not a vector"));
        }
        if idx.rank() != 2 {
            return Err(ctx.error("labels_indices is not a matrix"));
        }
        if vals.rank() != 1 {
            return Err(ctx.error("labels_values is not a vector"));
        }
        let (max_time, batch) = (x.dims()[0], x.dims()[1]);
        if batch != seq_t.dims()[0] {
            return Err(ctx.error(format!(
                "len(sequence_length) != batch_size.  len(sequence_length):  {} batch_size: {batch}",
                seq_t.dims()[0]
            )));
        }
        if idx.dims()[0] != vals.dims()[0] {
            return Err(ctx.error(format!(
                "labels_indices and labels_values must contain the same number of rows, but saw shapes: {} vs. {}",
                idx.shape(),
                vals.shape()
            )));
        }
        if batch == 0 {
            return Err(ctx.error("batch_size must not be 0"));
        }
        let labels = label_sequences(ctx, &idx, &vals, batch)?;
        let seq = seq_t.as_slice::<i32>()?;
        for (b, &s) in seq.iter().enumerate() {
            if s as i64 > max_time as i64 {
                return Err(ctx.error(format!("sequence_length({b}) <= {max_time}")));
            }
            if s < 0 {
                return Err(ctx.error(format!("seq_len({b}) < 0")));
            }
        }
        if x.dims()[2] == 0 {
            return Err(ctx.error("num_classes must be at least 1 (the blank)"));
        }
        match x.dtype() {
            DataType::Float => self.compute_typed::<f32>(ctx, &x, &labels, seq),
            DataType::Double => self.compute_typed::<f64>(ctx, &x, &labels, seq),
            t => Err(ctx.error(format!("no CPU kernel for inputs of type {t} (float or double)"))),
        }
    }

    fn is_expensive(&self) -> bool {
        true
    }
}
