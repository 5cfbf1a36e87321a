//! `StringSplit` (any byte of `delimiter` splits; an empty delimiter splits into bytes) and
//! `StringSplitV2` (`sep` splits exactly, empty tokens kept; an empty `sep` splits on runs
//! of whitespace; at most `maxsplit` splits): a sparse `[batch, max tokens]` result.

use ferroflow_core::{NodeAttrs, Shape, Tensor};

use super::{string_tensor, strings};
use crate::array::util::check_alloc;
use crate::KernelRegistry;

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// TensorFlow's `SplitV2`.
fn split_v2<'a>(s: &'a [u8], sep: &[u8], maxsplit: i64) -> Vec<&'a [u8]> {
    if maxsplit == 0 {
        return vec![s];
    }
    let mut out = Vec::new();
    let mut splits = 0i64;
    if sep.is_empty() {
        let mut at = s.iter().position(|&c| !is_space(c)).unwrap_or(s.len());
        while at < s.len() {
            let end = s[at..].iter().position(|&c| is_space(c)).map_or(s.len(), |e| at + e);
            out.push(&s[at..end]);
            at = s[end..].iter().position(|&c| !is_space(c)).map_or(s.len(), |e| end + e);
            splits += 1;
            if maxsplit > 0 && splits == maxsplit {
                // The rest, even empty, is the last token (TensorFlow's SplitV2).
                out.push(&s[at..]);
                return out;
            }
        }
        return out;
    }
    let mut rest = s;
    while let Some(p) = rest.windows(sep.len()).position(|w| w == sep) {
        out.push(&rest[..p]);
        rest = &rest[p + sep.len()..];
        splits += 1;
        if maxsplit > 0 && splits == maxsplit {
            break;
        }
    }
    out.push(rest);
    out
}

/// TensorFlow's `StringSplit` tokens.
fn split_v1<'a>(s: &'a [u8], delim: &[u8], skip_empty: bool) -> Vec<&'a [u8]> {
    // An empty string has no tokens, even kept empty ones (TensorFlow's StringSplit).
    if s.is_empty() {
        return Vec::new();
    }
    if delim.is_empty() {
        return (0..s.len()).map(|i| &s[i..i + 1]).collect();
    }
    s.split(|c| delim.contains(c)).filter(|t| !(skip_empty && t.is_empty())).collect()
}

op_kernel! {
    struct StringSplit { v2: bool, skip_empty: bool, maxsplit: i64 }
    fn compute(&self, ctx) {
        let input = ctx.input_of_rank(0, 1, "input must be a vector, got shape: ")?;
        let sep_t = ctx.input_of_rank(1, 0, "sep must be a scalar, got shape: ")?;
        let sep = &strings(ctx, "sep", &sep_t)?[0];
        let mut indices = Vec::new();
        let mut values = Vec::new();
        let mut widest = 0usize;
        for (row, s) in strings(ctx, "input", &input)?.iter().enumerate() {
            let toks = if self.v2 { split_v2(s, sep, self.maxsplit) } else { split_v1(s, sep, self.skip_empty) };
            widest = widest.max(toks.len());
            for (k, t) in toks.into_iter().enumerate() {
                indices.push(row as i64);
                indices.push(k as i64);
                values.push(t.to_vec());
            }
        }
        let n = values.len();
        check_alloc(&[n, 2], ferroflow_core::DataType::Int64).map_err(|e| ctx.error_with(e))?;
        ctx.set_output(0, Tensor::new(Shape::new(vec![n, 2]), indices)?)?;
        ctx.set_output(1, string_tensor(Shape::new(vec![n]), values)?)?;
        ctx.set_output(2, Tensor::new(Shape::new(vec![2]), vec![input.dims()[0] as i64, widest as i64])?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StringSplit", |n| {
        let skip_empty = if n.has_attr("skip_empty") { n.attr_bool("skip_empty")? } else { true };
        Ok(Box::new(StringSplit { v2: false, skip_empty, maxsplit: -1 }))
    });
    r.add("StringSplitV2", |n| {
        let maxsplit = if n.has_attr("maxsplit") { n.attr_int("maxsplit")? } else { -1 };
        Ok(Box::new(StringSplit { v2: true, skip_empty: false, maxsplit }))
    });
}
