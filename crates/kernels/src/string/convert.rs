//! `StringToNumber`, `AsString` (TensorFlow's printf formats), `EncodeBase64` /
//! `DecodeBase64` (the web-safe alphabet, `-` and `_`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::{string_tensor, strings, StringsOut};
use crate::dispatch::dispatch;
use crate::{KernelRegistry, OpContext, OpKernel};

fn parse_typed<T: std::str::FromStr + ferroflow_core::TensorType>(
    ctx: &OpContext,
    t: &Tensor,
) -> Result<Tensor, Status> {
    let out = strings(ctx, "string_tensor", t)?
        .iter()
        .map(|s| {
            std::str::from_utf8(s)
                .ok()
                .map(|x| x.trim_matches(|c: char| c.is_ascii_whitespace()))
                .and_then(|x| {
                    // Rust's parsers take no leading '+' for floats only in old versions; accept it.
                    x.parse::<T>().ok()
                })
                .ok_or_else(|| {
                    ctx.error(format!(
                        "StringToNumber could not correctly convert string: {}",
                        String::from_utf8_lossy(s)
                    ))
                })
        })
        .collect::<Result<Vec<T>, _>>()?;
    Tensor::new(t.shape().clone(), out)
}

op_kernel! {
    struct StringToNumber { out: DataType }
    fn compute(&self, ctx) {
        let t = ctx.input(0)?;
        let out = dispatch!(self.out, ctx, [f32, f64, i32, i64, u32, u64], |T| parse_typed::<T>(ctx, &t))?;
        ctx.set_output(0, out)
    }
}

/// `AsString`'s attrs.
struct AsString {
    precision: i64,
    scientific: bool,
    shortest: bool,
    width: i64,
    fill: u8,
}

/// C's `%.{p}e`: a mantissa and an exponent of at least two digits.
fn c_exp(v: f64, p: usize) -> String {
    let s = format!("{v:.p$e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// C's `%.{p}g`.
fn c_general(v: f64, p: usize) -> String {
    let p = p.max(1);
    if v == 0.0 || !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v.is_infinite() {
            if v > 0.0 {
                "inf".into()
            } else {
                "-inf".into()
            }
        } else {
            "0".into()
        };
    }
    let e = c_exp(v, p - 1);
    let exp: i32 = e.split_once('e').and_then(|(_, x)| x.parse().ok()).unwrap_or(0);
    let strip = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if exp < -4 || exp >= p as i32 {
        let (m, x) = e.split_once('e').unwrap_or((&e, "+00"));
        format!("{}e{x}", strip(m.to_string()))
    } else {
        strip(format!("{:.*}", (p as i32 - 1 - exp).max(0) as usize, v))
    }
}

impl AsString {
    fn float(&self, v: f64) -> String {
        if v.is_nan() {
            return "nan".into();
        }
        if v.is_infinite() {
            return if v > 0.0 { "inf".into() } else { "-inf".into() };
        }
        let p = if self.precision < 0 { 6 } else { self.precision as usize };
        if self.shortest {
            c_general(v, p)
        } else if self.scientific {
            c_exp(v, p)
        } else {
            format!("{v:.p$}")
        }
    }

    fn pad(&self, s: String) -> Vec<u8> {
        let w = self.width.max(0) as usize;
        if s.len() >= w {
            return s.into_bytes();
        }
        let mut out = Vec::with_capacity(w);
        if self.fill == b'0' && (s.starts_with('-') || s.starts_with('+')) {
            out.push(s.as_bytes()[0]);
            out.resize(w - s.len() + 1, b'0');
            out.extend_from_slice(&s.as_bytes()[1..]);
        } else {
            out.resize(w - s.len(), self.fill);
            out.extend_from_slice(s.as_bytes());
        }
        out
    }
}

impl OpKernel for AsString {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        // A `width` pads every element to up to 4 KiB: the strings are checked as they grow.
        let mut out = StringsOut::new(t.dims(), "AsString")?;
        match t.dtype() {
            DataType::Float => {
                t.as_slice::<f32>()?.iter().try_for_each(|&v| out.push(self.pad(self.float(v as f64))))?
            }
            DataType::Double => t.as_slice::<f64>()?.iter().try_for_each(|&v| out.push(self.pad(self.float(v))))?,
            DataType::Bool => t.as_slice::<bool>()?.iter().try_for_each(|v| out.push(self.pad(v.to_string())))?,
            DataType::String => strings(ctx, "input", &t)?
                .iter()
                .try_for_each(|s| out.push(self.pad(String::from_utf8_lossy(s).into_owned())))?,
            d => dispatch!(d, ctx, [i32, i64, u8, i8, i16, u16, u32, u64], |T| t
                .as_slice::<T>()?
                .iter()
                .try_for_each(|v| out.push(self.pad(v.to_string()))))?,
        };
        ctx.set_output(0, string_tensor(t.shape().clone(), out.into_vec())?)
    }
}

/// The largest `precision` and `width` of `AsString`.
const MAX_FORMAT: i64 = 4096;

fn as_string_factory(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let int = |k: &str| if n.has_attr(k) { n.attr_int(k) } else { Ok(-1) };
    let flag = |k: &str| if n.has_attr(k) { n.attr_bool(k) } else { Ok(false) };
    let fill = if n.has_attr("fill") { n.attr_string("fill")? } else { String::new() };
    if fill.len() > 1 {
        return Err(n.node_error(format!("Fill string must be one or fewer characters, got '{fill}'")));
    }
    let (scientific, shortest) = (flag("scientific")?, flag("shortest")?);
    if scientific && shortest {
        return Err(n.node_error("Cannot select both scientific and shortest notation"));
    }
    // Every element is formatted with these: bounded so a hostile attr cannot ask for
    // gigabytes per element (C's printf, which TensorFlow uses, would try).
    let (precision, width) = (int("precision")?, int("width")?);
    if precision > MAX_FORMAT {
        return Err(n.node_error(format!("precision {precision} is more than ferroflow formats ({MAX_FORMAT})")));
    }
    if width > MAX_FORMAT {
        return Err(n.node_error(format!("width {width} is more than ferroflow formats ({MAX_FORMAT})")));
    }
    Ok(Box::new(AsString { precision, scientific, shortest, width, fill: fill.bytes().next().unwrap_or(b' ') }))
}

const WEB_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn encode(s: &[u8], pad: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len().div_ceil(3) * 4);
    for c in s.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = c.len() + 1;
        for k in 0..4 {
            if k < chars {
                out.push(WEB_SAFE[((n >> (18 - 6 * k)) & 63) as usize]);
            } else if pad {
                out.push(b'=');
            }
        }
    }
    out
}

fn decode(s: &[u8]) -> Option<Vec<u8>> {
    let body = {
        let mut end = s.len();
        while end > 0 && s[end - 1] == b'=' && s.len() - end < 2 {
            end -= 1;
        }
        if end < s.len() && !s.len().is_multiple_of(4) {
            return None;
        }
        &s[..end]
    };
    if body.len() % 4 == 1 {
        return None;
    }
    let val = |c: u8| WEB_SAFE.iter().position(|&x| x == c).map(|p| p as u32);
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    for c in body.chunks(4) {
        let mut n = 0u32;
        for (k, &ch) in c.iter().enumerate() {
            n |= val(ch)? << (18 - 6 * k);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..c.len() - 1]);
    }
    Some(out)
}

op_kernel! {
    struct Base64 { encode: bool, pad: bool }
    fn compute(&self, ctx) {
        let t = ctx.input(0)?;
        let out = strings(ctx, "input", &t)?
            .iter()
            .map(|s| {
                if self.encode {
                    Ok(encode(s, self.pad))
                } else {
                    decode(s).ok_or_else(|| {
                        ctx.error(format!("Invalid character found in base64: {}", String::from_utf8_lossy(s)))
                    })
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        ctx.set_output(0, string_tensor(t.shape().clone(), out)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StringToNumber", |n| {
        let out = if n.has_attr("out_type") { n.attr_type("out_type")? } else { DataType::Float };
        Ok(Box::new(StringToNumber { out }))
    });
    r.add("AsString", as_string_factory);
    r.add("EncodeBase64", |n| {
        let pad = if n.has_attr("pad") { n.attr_bool("pad")? } else { false };
        Ok(Box::new(Base64 { encode: true, pad }))
    });
    r.add("DecodeBase64", |_| Ok(Box::new(Base64 { encode: false, pad: false })))
}
