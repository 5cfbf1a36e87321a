//! What the CTC decoders share (TensorFlow's checks of the logits and sequence lengths, and
//! the sparse `[batch, longest]` outputs of each path), and `CTCGreedyDecoder`: the most
//! likely class at each step, blanks dropped (and repeats merged if asked), with the
//! negated sum of the chosen logits as the path's score.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};

use super::{bool_attr, int_attr};
use crate::real::Real;
use crate::{OpContext, OpKernel};

/// The checked inputs of a decoder: logits `[max_time, batch, classes]` and the lengths.
pub(super) struct DecodeInputs {
    pub x: Tensor,
    pub seq: Vec<i32>,
    pub batch: usize,
    pub classes: usize,
}

/// Inputs 0 (logits) and 1 (sequence lengths) of a decoder, checked as TensorFlow does.
pub(super) fn decode_inputs(ctx: &OpContext) -> Result<DecodeInputs, Status> {
    let x = ctx.input(0)?;
    let seq_t = ctx.input(1)?;
    if x.rank() != 3 {
        return Err(ctx.error("inputs is not a 3-Tensor"));
    }
    if x.num_elements() == 0 {
        return Err(ctx.error("inputs must not be empty"));
    }
    let (max_time, batch, classes) = (x.dims()[0], x.dims()[1], x.dims()[2]);
    if seq_t.rank() != 1 {
        return Err(ctx.error("sequence_length is not a vector"));
    }
    let precondition = |m: String| ctx.error_with(Status::failed_precondition(m));
    if batch != seq_t.dims()[0] {
        return Err(precondition(format!(
            "len(sequence_length) != batch_size.  len(sequence_length):  {} batch_size: {batch}",
            seq_t.dims()[0]
        )));
    }
    let seq = seq_t.as_slice::<i32>()?.to_vec();
    if let Some(b) = seq.iter().position(|&s| s as i64 > max_time as i64) {
        return Err(precondition(format!("sequence_length({b}) <= {max_time}")));
    }
    if !matches!(x.dtype(), DataType::Float | DataType::Double) {
        return Err(ctx.error(format!("no CPU kernel for inputs of type {} (float or double)", x.dtype())));
    }
    Ok(DecodeInputs { x, seq, batch, classes })
}

/// Sets outputs `decoded_indices[p]`, `decoded_values[p]`, `decoded_shape[p]` (at `p`,
/// `paths + p`, `2 paths + p`) from `seqs[b][p]`, the labels of path p of entry b.
pub(super) fn set_decoded(ctx: &mut OpContext, seqs: &[Vec<Vec<usize>>], paths: usize) -> Result<(), Status> {
    let batch = seqs.len();
    for p in 0..paths {
        let total: usize = seqs.iter().map(|s| s[p].len()).sum();
        let mut indices = Vec::with_capacity(total * 2);
        let mut values = Vec::with_capacity(total);
        let mut longest = 0;
        for (b, s) in seqs.iter().enumerate() {
            longest = longest.max(s[p].len());
            for (t, &v) in s[p].iter().enumerate() {
                indices.extend([b as i64, t as i64]);
                values.push(v as i64);
            }
        }
        ctx.set_output(p, Tensor::new(vec![total, 2], indices)?)?;
        ctx.set_output(paths + p, Tensor::new(vec![total], values)?)?;
        ctx.set_output(2 * paths + p, Tensor::new(vec![2], vec![batch as i64, longest as i64])?)?;
    }
    Ok(())
}

struct Greedy {
    merge_repeated: bool,
    blank_index: i64,
}

pub(super) fn make_greedy(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Greedy {
        merge_repeated: bool_attr(n, "merge_repeated", false)?,
        blank_index: int_attr(n, "blank_index", -1)?,
    }))
}

/// The best path of one entry: its labels and the negated sum of its maxima.
fn best_path<T: Real>(
    x: &[T],
    batch: usize,
    classes: usize,
    b: usize,
    steps: usize,
    blank: usize,
    merge: bool,
) -> (Vec<usize>, T) {
    let mut labels = Vec::new();
    let mut score = T::ZERO;
    let mut prev = usize::MAX;
    for t in 0..steps {
        let row = &x[(t * batch + b) * classes..(t * batch + b + 1) * classes];
        let mut best = 0;
        for (k, &v) in row.iter().enumerate().skip(1) {
            if v > row[best] {
                best = k;
            }
        }
        score -= row[best];
        if best != blank && !(merge && best == prev) {
            labels.push(best);
        }
        prev = best;
    }
    (labels, score)
}

impl Greedy {
    fn decode<T: Real>(&self, ctx: &mut OpContext, d: &DecodeInputs, blank: usize) -> Result<(), Status> {
        let x = d.x.as_slice::<T>()?;
        let mut seqs = Vec::with_capacity(d.batch);
        let mut scores = Vec::with_capacity(d.batch);
        for b in 0..d.batch {
            let steps = d.seq[b].max(0) as usize;
            let (labels, score) = best_path(x, d.batch, d.classes, b, steps, blank, self.merge_repeated);
            seqs.push(vec![labels]);
            scores.push(score);
        }
        set_decoded(ctx, &seqs, 1)?;
        ctx.set_output(3, Tensor::new(vec![d.batch, 1], scores)?)
    }
}

impl OpKernel for Greedy {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let d = decode_inputs(ctx)?;
        let c = d.classes as i64;
        let blank = if self.blank_index < 0 { c + self.blank_index } else { self.blank_index };
        if !(0..c).contains(&blank) {
            return Err(ctx.error(format!(
                "blank_index expected to be between {} and {} but was {}",
                -c,
                c - 1,
                self.blank_index
            )));
        }
        match d.x.dtype() {
            DataType::Double => self.decode::<f64>(ctx, &d, blank as usize),
            _ => self.decode::<f32>(ctx, &d, blank as usize),
        }
    }
}
