//! `StringFormat` (`tf.strings.format`) and `PrintV2` (`tf.print` in graph mode).
//!
//! `StringFormat` puts each input, summarized as TensorFlow's `print_v2` summary writes it,
//! in place of a `placeholder` of `template`. A summary nests brackets per dimension and
//! shows the first and last `summarize` entries of each (with `...` between when more are
//! left out; a negative `summarize` shows everything); floats print with 6 (float) or 15
//! (double) significant digits when that reads back exactly, else 9 or 17; strings print
//! quoted, escaped as C escapes (bytes from 0x80 kept); bools print 1 and 0; complex and
//! other types print `?`. `PrintV2` writes a string scalar to stderr, stdout, the log or a
//! file (`file://path`, under the task's `--file_root`).

use std::io::Write;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Shape, Status, Storage, Tensor};

use super::{string_tensor, strings};
use crate::{KernelRegistry, OpKernel};

/// `%.{digits}g` of `v`, as C's printf writes it.
fn format_g(v: f64, digits: usize) -> String {
    if v.is_nan() {
        return "nan".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let sci = format!("{:.*e}", digits - 1, v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= digits as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mantissa), exp.abs())
    } else {
        strip(&format!("{:.*}", (digits as i32 - 1 - exp).max(0) as usize, v))
    }
}

/// TensorFlow's `FloatToBuffer`: 6 significant digits if they read back as `v`, else 9.
pub(crate) fn format_f32(v: f32) -> String {
    let short = format_g(v as f64, 6);
    if short.parse::<f32>().ok() == Some(v) {
        short
    } else {
        format_g(v as f64, 9)
    }
}

/// TensorFlow's `DoubleToBuffer`: 15 significant digits if they read back as `v`, else 17.
pub(crate) fn format_f64(v: f64) -> String {
    let short = format_g(v, 15);
    if short.parse::<f64>().ok() == Some(v) {
        short
    } else {
        format_g(v, 17)
    }
}

/// A string as `absl::Utf8SafeCEscape` writes it, in double quotes (bytes from 0x80 kept as
/// they are).
fn quoted(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in s {
        match b {
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\'' => out.extend_from_slice(b"\\'"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b if b < 0x20 || b == 0x7f => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
            b => out.push(b),
        }
    }
    out.push(b'"');
}

/// Appends element `i` of `t` as text; false for a dtype TensorFlow prints as `?`.
fn element(t: &Tensor, i: usize, out: &mut Vec<u8>) -> bool {
    let text = match t.storage() {
        Storage::F32(v) => format_f32(v[i]),
        Storage::F64(v) => format_f64(v[i]),
        Storage::F16(v) => format_f32(v[i].to_f32()),
        Storage::BF16(v) => format_f32(v[i].to_f32()),
        Storage::I32(v) => v[i].to_string(),
        Storage::I64(v) => v[i].to_string(),
        Storage::U8(v) => v[i].to_string(),
        Storage::I8(v) => v[i].to_string(),
        Storage::I16(v) => v[i].to_string(),
        Storage::U16(v) => v[i].to_string(),
        Storage::U32(v) => v[i].to_string(),
        Storage::U64(v) => v[i].to_string(),
        Storage::Bool(v) => u8::from(v[i]).to_string(),
        Storage::Str(v) => {
            quoted(&v[i], out);
            return true;
        }
        _ => return false,
    };
    out.extend_from_slice(text.as_bytes());
    true
}

/// Whether TensorFlow prints the elements of this storage (others print `?`).
fn printable(s: &Storage) -> bool {
    !matches!(s, Storage::C64(_) | Storage::C128(_) | Storage::Resource(_) | Storage::Variant(_))
        && !matches!(s, Storage::QI8(_) | Storage::QU8(_) | Storage::QI16(_) | Storage::QU16(_) | Storage::QI32(_))
}

/// The separator between two entries of dimension `d` of `rank`.
fn spacing(d: usize, rank: usize, out: &mut Vec<u8>) {
    if d + 1 == rank {
        out.push(b' ');
        return;
    }
    out.extend(std::iter::repeat_n(b'\n', rank - d - 1));
    out.extend(std::iter::repeat_n(b' ', d + 1));
}

/// Dimension `d` of the block starting at element `at` (TensorFlow's `PrintOneDimV2`).
fn dim(t: &Tensor, d: usize, ends: usize, at: usize, out: &mut Vec<u8>) {
    let dims = t.dims();
    if d == dims.len() {
        element(t, at, out);
        return;
    }
    out.push(b'[');
    let n = dims[d];
    let per: usize = dims[d + 1..].iter().product();
    for i in 0..ends.min(n) {
        if i > 0 {
            spacing(d, dims.len(), out);
        }
        dim(t, d + 1, ends, at + per * i, out);
    }
    if n > 2 * ends {
        spacing(d, dims.len(), out);
        out.extend_from_slice(b"...");
    }
    for i in ends.max(n.saturating_sub(ends))..n {
        spacing(d, dims.len(), out);
        dim(t, d + 1, ends, at + per * i, out);
    }
    out.push(b']');
}

/// Appends `t` summarized with at most `summarize` entries at each end of every dimension.
fn summarize(t: &Tensor, summarize: i64, out: &mut Vec<u8>) {
    let n = t.num_elements();
    let limit = if summarize < 0 { n } else { (summarize as usize).min(n) };
    let elided = summarize >= 0 && (summarize as usize) < n;
    if !printable(t.storage()) {
        let bracket = t.rank() > 0;
        if bracket {
            out.push(b'[');
        }
        for i in 0..limit {
            if i > 0 {
                out.push(b' ');
            }
            out.push(b'?');
        }
        if elided {
            out.extend_from_slice(b"...");
        }
        if bracket {
            out.push(b']');
        }
        return;
    }
    if t.rank() == 0 {
        for i in 0..limit {
            if i > 0 {
                out.push(b' ');
            }
            element(t, i, out);
        }
        if n > limit {
            out.extend_from_slice(b"...");
        }
        return;
    }
    dim(t, 0, limit, 0, out);
}

op_kernel! {
    struct StringFormat { pieces: Vec<String>, summarize: i64 }
    fn compute(&self, ctx) {
        let n = ctx.num_inputs();
        if self.pieces.len() != n + 1 {
            return Err(ctx.error(format!(
                "num placeholders in template and num inputs must match: {} vs. {n}",
                self.pieces.len() - 1
            )));
        }
        let mut s = self.pieces[0].clone().into_bytes();
        for i in 0..n {
            summarize(&ctx.input(i)?, self.summarize, &mut s);
            s.extend_from_slice(self.pieces[i + 1].as_bytes());
        }
        ctx.set_output(0, string_tensor(Shape::new(Vec::<usize>::new()), vec![s])?)
    }
}

fn make_format(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let template = node.attr_string("template")?;
    let placeholder = node.attr_string("placeholder")?;
    if placeholder.is_empty() {
        return Err(node.node_error("placeholder must not be empty"));
    }
    Ok(Box::new(StringFormat {
        pieces: template.split(placeholder.as_str()).map(str::to_string).collect(),
        summarize: node.attr_int("summarize")?,
    }))
}

op_kernel! {
    struct PrintV2 { stream: String, end: Vec<u8> }
    fn compute(&self, ctx) {
        let t = ctx.input(0)?;
        if t.rank() != 0 {
            return Err(ctx.error(format!("Input is expected to be scalar, but got {}", t.shape())));
        }
        let mut msg = strings(ctx, "input", &t)?[0].clone();
        msg.extend_from_slice(&self.end);
        let text = String::from_utf8_lossy(&msg);
        let io = |e: std::io::Error| ctx.error(format!("cannot write to {}: {e}", self.stream));
        match self.stream.as_str() {
            "stderr" => std::io::stderr().write_all(&msg).map_err(io)?,
            "stdout" => {
                let mut out = std::io::stdout().lock();
                out.write_all(&msg).and_then(|_| out.flush()).map_err(io)?
            }
            "log(info)" => tracing::info!(target: "tf.print", "{}", text.trim_end_matches('\n')),
            "log(warning)" => tracing::warn!(target: "tf.print", "{}", text.trim_end_matches('\n')),
            "log(error)" => tracing::error!(target: "tf.print", "{}", text.trim_end_matches('\n')),
            s => {
                let Some(path) = s.strip_prefix("file://") else {
                    return Err(ctx.error(format!(
                        "{s} is not a valid output stream: stdout, stderr, log(info), log(warning), log(error) or \
                         file://<path>"
                    )));
                };
                ferroflow_core::check_file_path(path, "PrintV2 output file").map_err(|e| ctx.error_with(e))?;
                let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(io)?;
                f.write_all(&msg).map_err(io)?;
            }
        }
        Ok(())
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StringFormat", make_format);
    r.add("PrintV2", |n| {
        Ok(Box::new(PrintV2 { stream: n.attr_string("output_stream")?, end: n.attr_string("end")?.into_bytes() }))
    });
}
