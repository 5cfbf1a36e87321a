//! Connectionist temporal classification ops (TensorFlow's definitions and builders):
//! `CTCLoss`, `CTCGreedyDecoder` and `CTCBeamSearchDecoder`. Inputs are time-major logits
//! `[max_time, batch, classes]` with the blank as the last class.

use ferroflow_core::{attr, NodeAttrs};

use crate::op_def::op;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, ferroflow_core::Status>;

/// Dim `i` of input 0 (the logits), -1 when unknown.
fn logits_dim(c: &ShapeCtx, i: usize) -> i64 {
    c.input(0).and_then(|d| d.get(i).copied()).unwrap_or(-1)
}

fn loss_shape(c: &ShapeCtx) -> R {
    if let Some(d) = c.input(0) {
        if d.len() != 3 {
            return Err(c.error(format!("inputs must be rank 3, got rank {}", d.len())));
        }
    }
    Ok(vec![Some(vec![logits_dim(c, 1)]), c.input(0).or(Some(vec![-1; 3]))])
}

/// Each path's sparse indices `[?, 2]`, values `[?]` and dense shape `[2]`, then the log
/// probabilities `[batch, paths]`.
fn decoder_shape(c: &ShapeCtx, paths: usize) -> R {
    let mut out = vec![Some(vec![-1, 2]); paths];
    out.extend(vec![Some(vec![-1]); paths]);
    out.extend(vec![Some(vec![2]); paths]);
    out.push(Some(vec![logits_dim(c, 1), paths as i64]));
    Ok(out)
}

fn beam_shape(c: &ShapeCtx) -> R {
    let paths = c.node.attr_int("top_paths").unwrap_or(1).max(1) as usize;
    decoder_shape(c, paths)
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("CTCLoss")
            .input("inputs: T")
            .input("labels_indices: int64")
            .input("labels_values: int32")
            .input("sequence_length: int32")
            .output("loss: T")
            .output("gradient: T")
            .attr("preprocess_collapse_repeated: bool = false")
            .attr("ctc_merge_repeated: bool = true")
            .attr("ignore_longer_outputs_than_inputs: bool = false")
            .attr("T: {float, double} = DT_FLOAT")
            .shape_fn(loss_shape)
            .build(),
    );
    r.add(
        op("CTCGreedyDecoder")
            .input("inputs: T")
            .input("sequence_length: int32")
            .output("decoded_indices: int64")
            .output("decoded_values: int64")
            .output("decoded_shape: int64")
            .output("log_probability: T")
            .attr("merge_repeated: bool = false")
            .attr("blank_index: int = -1")
            .attr("T: {float, double} = DT_FLOAT")
            .shape_fn(|c| decoder_shape(c, 1))
            .build(),
    );
    r.add(
        op("CTCBeamSearchDecoder")
            .input("inputs: T")
            .input("sequence_length: int32")
            .output("decoded_indices: top_paths * int64")
            .output("decoded_values: top_paths * int64")
            .output("decoded_shape: top_paths * int64")
            .output("log_probability: T")
            .attr("beam_width: int >= 1")
            .attr("top_paths: int >= 1")
            .attr("merge_repeated: bool = true")
            .attr("T: {float, double} = DT_FLOAT")
            .shape_fn(beam_shape)
            .build(),
    );
}

/// `CTCLoss` with TensorFlow's default options: (loss `[batch]`, gradient with respect to
/// `inputs`). `labels` are the rows (`indices` `[n, 2]` int64, `values` `[n]` int32) of a
/// sparse `[batch, max_label_len]` tensor.
pub fn ctc_loss(s: &Scope, inputs: Output, indices: Output, values: Output, seq_len: Output) -> (Output, Output) {
    let op = s.op("CTCLoss").input(inputs).input(indices).input(values).input(seq_len).build();
    (op.output(0), op.output(1))
}

/// `CTCGreedyDecoder`: (indices, values, dense shape, log probability `[batch, 1]`).
pub fn ctc_greedy_decoder(s: &Scope, inputs: Output, seq_len: Output, merge_repeated: bool) -> [Output; 4] {
    let op = s
        .op("CTCGreedyDecoder")
        .input(inputs)
        .input(seq_len)
        .attr("merge_repeated", attr::bool(merge_repeated))
        .build();
    op.first_outputs()
}

/// `CTCBeamSearchDecoder` keeping `beam_width` prefixes and returning the `top_paths`
/// best: the outputs in TensorFlow's order (each path's indices, then values, then shapes,
/// then the log probabilities `[batch, top_paths]`).
pub fn ctc_beam_search_decoder(
    s: &Scope,
    inputs: Output,
    seq_len: Output,
    beam_width: i64,
    top_paths: i64,
    merge_repeated: bool,
) -> Vec<Output> {
    let op = s
        .op("CTCBeamSearchDecoder")
        .input(inputs)
        .input(seq_len)
        .attr("beam_width", attr::int(beam_width))
        .attr("top_paths", attr::int(top_paths))
        .attr("merge_repeated", attr::bool(merge_repeated))
        .build();
    (0..3 * top_paths.max(0) as usize + 1).map(|i| op.output(i)).collect()
}
