//! `StringNGrams` (`tf.strings.ngrams`, tf_keras's `TextVectorization(ngrams=…)`): the
//! n-grams of every row of a ragged string tensor (`data` split by `data_splits`), for each
//! width in `ngram_widths`, joined with `separator`.
//!
//! A row is padded with `pad_width` copies of `left_pad`/`right_pad` on each side (at most
//! `width - 1`; a negative `pad_width` means `width - 1`), giving
//! `max(0, len + 2 * pad - width + 1)` n-grams of one width. With
//! `preserve_short_sequences`, a non-empty row too short for any n-gram gives one n-gram of
//! the whole padded row. Output: the n-grams and their row splits.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Shape, Status};

use super::{string_tensor, strings};
use crate::array::util::{index_tensor, index_vec};
use crate::{KernelRegistry, OpContext, OpKernel};

struct StringNGrams {
    separator: Vec<u8>,
    widths: Vec<i64>,
    left_pad: Vec<u8>,
    right_pad: Vec<u8>,
    pad_width: i64,
    preserve_short: bool,
}

impl StringNGrams {
    fn pad(&self, width: i64) -> i64 {
        (if self.pad_width < 0 { width - 1 } else { self.pad_width }).min(width - 1)
    }

    fn count(&self, len: i64, width: i64) -> i64 {
        (len + 2 * self.pad(width) - width + 1).max(0)
    }

    /// Appends the `n` n-grams of `width` over `row` to `out`.
    fn ngrams(&self, row: &[Vec<u8>], n: i64, width: i64, out: &mut Vec<Vec<u8>>) {
        let pad = self.pad(width);
        for i in 0..n {
            let left = (pad - i).max(0);
            let right = (pad - (n - (i + 1))).max(0);
            let tokens = width - left - right;
            let first = if left > 0 { 0 } else { i - pad } as usize;
            let parts = std::iter::repeat_n(&self.left_pad, left as usize)
                .chain(row[first..first + tokens.max(0) as usize].iter())
                .chain(std::iter::repeat_n(&self.right_pad, right as usize));
            let mut g = Vec::new();
            for (k, p) in parts.enumerate() {
                if k > 0 {
                    g.extend_from_slice(&self.separator);
                }
                g.extend_from_slice(p);
            }
            out.push(g);
        }
    }
}

impl OpKernel for StringNGrams {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        if self.widths.iter().any(|&w| w <= 0) {
            return Err(ctx.error("ngram_widths must contain positive values"));
        }
        let (data_t, splits_t) = (ctx.input(0)?, ctx.input(1)?);
        let data = strings(ctx, "data", &data_t)?;
        let splits = index_vec(&splits_t)?;
        let size = data.len() as i64;
        if let Some(&first) = splits.first() {
            if first != 0 {
                return Err(ctx.error(format!("First split value must be 0, got {first}")));
            }
            for w in splits.windows(2) {
                if w[1] < w[0] || w[1] > size {
                    return Err(ctx.error(format!("Invalid split value {}, must be in [{}, {size}]", w[1], w[0])));
                }
            }
            let last = splits[splits.len() - 1];
            if last != size {
                return Err(ctx.error(format!("Last split value must be data size. Expected {size}, got {last}")));
            }
        }
        let rows = splits.len().saturating_sub(1);
        let mut out = Vec::new();
        let mut out_splits = vec![0i64; splits.len()];
        // An upper bound of the output's bytes, checked against the task's limit before
        // anything is built (n-grams repeat their tokens `width` times).
        let mut bound = 0u128;
        let extra = (self.separator.len() + self.left_pad.len().max(self.right_pad.len())) as u128;
        for r in 0..rows {
            let row = &data[splits[r] as usize..splits[r + 1] as usize];
            let len = row.len() as i64;
            let before = out.len();
            for &w in &self.widths {
                let n = self.count(len, w);
                let longest = row.iter().map(Vec::len).max().unwrap_or(0) as u128;
                bound += (n as u128) * ((w as u128) * (longest + extra) + 24);
                if bound > ferroflow_core::memory_limit() as u128 {
                    return Err(ctx.error_with(Status::resource_exhausted(format!(
                        "the n-grams of width {w} of row {r} would exceed this task's memory limit of {} bytes",
                        ferroflow_core::memory_limit()
                    ))));
                }
                self.ngrams(row, n, w, &mut out);
            }
            if self.preserve_short && out.len() == before && len > 0 {
                if self.pad_width < 0 {
                    return Err(ctx.error(format!(
                        "Pad width should be >= 0 when preserve_short_sequences is True and ngram_widths are not \
                         provided, got {}",
                        self.pad_width
                    )));
                }
                self.ngrams(row, 1, len + 2 * self.pad_width, &mut out);
            }
            out_splits[r + 1] = out.len() as i64;
        }
        let n = out.len();
        ctx.set_output(0, string_tensor(Shape::new(vec![n]), out)?)?;
        ctx.set_output(1, index_tensor(splits_t.dtype(), splits_t.dims().to_vec(), out_splits)?)
    }
}

fn make(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(StringNGrams {
        separator: node.attr_string("separator")?.into_bytes(),
        widths: node.attr_list_int("ngram_widths")?,
        left_pad: node.attr_string("left_pad")?.into_bytes(),
        right_pad: node.attr_string("right_pad")?.into_bytes(),
        pad_width: node.attr_int("pad_width")?,
        preserve_short: node.attr_bool("preserve_short_sequences")?,
    }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StringNGrams", make);
}
