//! Unicode decoding and encoding (`tf.strings.unicode_decode`, `unicode_split`,
//! `unicode_encode`, `unicode_transcode`): `UnicodeDecode`, `UnicodeDecodeWithOffsets`,
//! `UnicodeEncode`, `UnicodeTranscode`, for UTF-8, UTF-16-BE and UTF-32-BE.
//!
//! Malformed input follows `errors`: `strict` fails, `replace` gives `replacement_char`
//! once per maximal ill-formed subsequence (as TensorFlow's ICU converters and Rust's lossy
//! UTF-8 decoding do), `ignore` drops it. With `replace_control_characters` the C0 controls
//! (U+0000–U+001F) become `replacement_char` (also under `strict`), or are dropped under
//! `ignore`. A decoded string's characters come with the byte offset where
//! each starts. Encoding replaces or drops code points that are negative, above U+10FFFF or
//! surrogates.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Shape, Status, Tensor};

use super::{string_tensor, strings, StringsOut};
use crate::array::util::{index_tensor, index_type_attr, index_vec};
use crate::{KernelRegistry, OpKernel};

#[derive(Clone, Copy, PartialEq)]
enum Encoding {
    Utf8,
    Utf16Be,
    Utf32Be,
}

#[derive(Clone, Copy, PartialEq)]
enum Errors {
    Strict,
    Replace,
    Ignore,
}

fn encoding(node: &NodeDef, attr: &str) -> Result<Encoding, Status> {
    match node.attr_string(attr)?.as_str() {
        "UTF-8" => Ok(Encoding::Utf8),
        "UTF-16-BE" => Ok(Encoding::Utf16Be),
        "UTF-32-BE" => Ok(Encoding::Utf32Be),
        other => Err(node.node_error(format!(
            "Could not create converter for {attr} {other:?} (UTF-8, UTF-16-BE and UTF-32-BE are supported)"
        ))),
    }
}

/// The `errors`, `replacement_char` and `replace_control_characters` attrs.
#[derive(Clone, Copy)]
struct Policy {
    errors: Errors,
    replacement: i32,
    controls: bool,
}

fn policy(node: &NodeDef) -> Result<Policy, Status> {
    let errors = match node.attr_string("errors")?.as_str() {
        "strict" => Errors::Strict,
        "replace" => Errors::Replace,
        "ignore" => Errors::Ignore,
        other => return Err(node.node_error(format!("errors must be strict, replace or ignore, got {other:?}"))),
    };
    let controls = node.has_attr("replace_control_characters") && node.attr_bool("replace_control_characters")?;
    Ok(Policy { errors, replacement: node.attr_int("replacement_char")? as i32, controls })
}

/// The characters of `s` with the byte offset of each; `Err(())` for a malformed string
/// under the strict policy.
fn decode(s: &[u8], enc: Encoding, p: Policy) -> Result<Vec<(i32, i64)>, ()> {
    let mut out = Vec::new();
    let bad = |at: usize, out: &mut Vec<(i32, i64)>| match p.errors {
        Errors::Strict => Err(()),
        Errors::Replace => {
            out.push((p.replacement, at as i64));
            Ok(())
        }
        Errors::Ignore => Ok(()),
    };
    match enc {
        Encoding::Utf8 => {
            let mut at = 0usize;
            for chunk in s.utf8_chunks() {
                for (i, c) in chunk.valid().char_indices() {
                    out.push((c as i32, (at + i) as i64));
                }
                at += chunk.valid().len();
                if !chunk.invalid().is_empty() {
                    bad(at, &mut out)?;
                    at += chunk.invalid().len();
                }
            }
        }
        Encoding::Utf16Be => {
            let units: Vec<u16> = s.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
            let mut at = 0usize;
            for r in char::decode_utf16(units.iter().copied()) {
                match r {
                    Ok(c) => {
                        out.push((c as i32, at as i64));
                        at += 2 * c.len_utf16();
                    }
                    Err(_) => {
                        bad(at, &mut out)?;
                        at += 2;
                    }
                }
            }
            if !s.len().is_multiple_of(2) {
                bad(s.len() - 1, &mut out)?;
            }
        }
        Encoding::Utf32Be => {
            for (i, c) in s.chunks_exact(4).enumerate() {
                let v = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
                match char::from_u32(v) {
                    Some(ch) => out.push((ch as i32, 4 * i as i64)),
                    None => bad(4 * i, &mut out)?,
                }
            }
            if !s.len().is_multiple_of(4) {
                bad(s.len() / 4 * 4, &mut out)?;
            }
        }
    }
    if p.controls {
        // A C0 control becomes the replacement character, or is dropped under `ignore`
        // (under `strict` too it is replaced, as in TensorFlow).
        let mut kept = Vec::with_capacity(out.len());
        for (c, at) in out {
            match ((0..0x20).contains(&c), p.errors) {
                (false, _) => kept.push((c, at)),
                (true, Errors::Ignore) => {}
                (true, _) => kept.push((p.replacement, at)),
            }
        }
        return Ok(kept);
    }
    Ok(out)
}

/// Appends the encoding of `chars` to `out`; `Err(())` for an invalid code point under the
/// strict policy.
fn encode(chars: &[i32], enc: Encoding, p: Policy, out: &mut Vec<u8>) -> Result<(), ()> {
    for &c in chars {
        let ch = match u32::try_from(c).ok().and_then(char::from_u32) {
            Some(ch) => ch,
            None => match p.errors {
                Errors::Strict => return Err(()),
                Errors::Ignore => continue,
                Errors::Replace => match u32::try_from(p.replacement).ok().and_then(char::from_u32) {
                    Some(ch) => ch,
                    None => continue,
                },
            },
        };
        match enc {
            Encoding::Utf8 => out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes()),
            Encoding::Utf16Be => {
                for u in ch.encode_utf16(&mut [0; 2]) {
                    out.extend_from_slice(&u.to_be_bytes());
                }
            }
            Encoding::Utf32Be => out.extend_from_slice(&(ch as u32).to_be_bytes()),
        }
    }
    Ok(())
}

const BAD_INPUT: &str = "Invalid formatting on input string";
const BAD_CODE_POINT: &str = "Code point is out of range for Unicode, or is a surrogate.";

op_kernel! {
    /// `UnicodeDecode` (`offsets` false) and `UnicodeDecodeWithOffsets`: every string of the
    /// input, flattened, as a row of code points (int32), with row splits (`Tsplits`).
    struct Decode { enc: Encoding, policy: Policy, splits: ferroflow_core::DataType, offsets: bool }
    fn compute(&self, ctx) {
        let t = ctx.input(0)?;
        let v = strings(ctx, "input", &t)?;
        let mut splits = Vec::with_capacity(v.len() + 1);
        splits.push(0i64);
        let (mut chars, mut starts) = (Vec::new(), Vec::new());
        for s in v {
            let d = decode(s, self.enc, self.policy).map_err(|_| ctx.error(BAD_INPUT))?;
            chars.extend(d.iter().map(|&(c, _)| c));
            starts.extend(d.iter().map(|&(_, o)| o));
            splits.push(chars.len() as i64);
        }
        let n = chars.len();
        ctx.set_output(0, index_tensor(self.splits, vec![splits.len()], splits)?)?;
        ctx.set_output(1, Tensor::new(vec![n], chars)?)?;
        if self.offsets {
            ctx.set_output(2, Tensor::new(vec![n], starts)?)?;
        }
        Ok(())
    }
}

op_kernel! {
    /// `UnicodeEncode`: each row of code points (`input_values` split by `input_splits`) as one
    /// string.
    struct Encode { enc: Encoding, policy: Policy }
    fn compute(&self, ctx) {
        let (values_t, splits_t) = (ctx.input(0)?, ctx.input(1)?);
        let values = values_t.as_slice::<i32>()?;
        let splits = index_vec(&splits_t)?;
        if splits_t.rank() != 1 || splits.is_empty() {
            return Err(ctx.error(format!("input_splits must be a non-empty vector, got shape {}", splits_t.shape())));
        }
        if splits[0] != 0 || splits.windows(2).any(|w| w[1] < w[0]) || splits[splits.len() - 1] != values.len() as i64 {
            return Err(ctx.error(format!(
                "input_splits must start at 0, be non-decreasing and end at the number of input_values ({}), \
                 got {splits:?}",
                values.len()
            )));
        }
        let mut out = StringsOut::new(&[splits.len() - 1], "UnicodeEncode")?;
        for w in splits.windows(2) {
            let mut s = Vec::new();
            encode(&values[w[0] as usize..w[1] as usize], self.enc, self.policy, &mut s)
                .map_err(|_| ctx.error(BAD_CODE_POINT))?;
            out.push(s)?;
        }
        let out = out.into_vec();
        let n = out.len();
        ctx.set_output(0, string_tensor(Shape::new(vec![n]), out)?)
    }
}

op_kernel! {
    /// `UnicodeTranscode`: every string decoded from `input_encoding` and encoded in
    /// `output_encoding`, the input's shape kept.
    struct Transcode { from: Encoding, to: Encoding, policy: Policy }
    fn compute(&self, ctx) {
        let t = ctx.input(0)?;
        let v = strings(ctx, "input", &t)?;
        let mut out = StringsOut::new(t.dims(), "UnicodeTranscode")?;
        for s in v {
            let chars: Vec<i32> = decode(s, self.from, self.policy)
                .map_err(|_| ctx.error(BAD_INPUT))?
                .into_iter()
                .map(|(c, _)| c)
                .collect();
            let mut e = Vec::with_capacity(s.len());
            encode(&chars, self.to, self.policy, &mut e).map_err(|_| ctx.error(BAD_CODE_POINT))?;
            out.push(e)?;
        }
        ctx.set_output(0, string_tensor(t.shape().clone(), out.into_vec())?)
    }
}

fn make_decode(n: &NodeDef, offsets: bool) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Decode {
        enc: encoding(n, "input_encoding")?,
        policy: policy(n)?,
        splits: index_type_attr(n, "Tsplits")?,
        offsets,
    }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("UnicodeDecode", |n| make_decode(n, false));
    r.add("UnicodeDecodeWithOffsets", |n| make_decode(n, true));
    r.add("UnicodeEncode", |n| Ok(Box::new(Encode { enc: encoding(n, "output_encoding")?, policy: policy(n)? })));
    r.add("UnicodeTranscode", |n| {
        Ok(Box::new(Transcode {
            from: encoding(n, "input_encoding")?,
            to: encoding(n, "output_encoding")?,
            policy: policy(n)?,
        }))
    });
}
