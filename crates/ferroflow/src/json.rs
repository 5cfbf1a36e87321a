//! Minimal JSON output for the inspection commands (no JSON dependency needed).

use ferroflow_core::{Storage, Tensor};

/// A JSON string literal.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn float(x: f64) -> String {
    if x.is_finite() {
        format!("{x:?}")
    } else {
        string(&x.to_string())
    }
}

/// The tensor's elements, flattened, as a JSON array (strings decoded lossily as UTF-8).
pub fn values(t: &Tensor) -> String {
    let items: Vec<String> = match t.storage() {
        Storage::F32(v) => v.iter().map(|&x| float(f64::from(x))).collect(),
        Storage::F64(v) => v.iter().map(|&x| float(x)).collect(),
        Storage::I32(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::I64(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::U8(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::Bool(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::Str(v) => v.iter().map(|s| string(&String::from_utf8_lossy(s))).collect(),
        Storage::Resource(v) => v.iter().map(|h| string(&format!("{h:?}"))).collect(),
        Storage::Variant(v) => v.iter().map(|x| string(&format!("{x:?}"))).collect(),
        Storage::F16(v) => v.iter().map(|&x| float(f64::from(x))).collect(),
        Storage::BF16(v) => v.iter().map(|&x| float(f64::from(x))).collect(),
        Storage::I8(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::I16(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::U16(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::U32(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::U64(v) => v.iter().map(|x| x.to_string()).collect(),
        // Complex values as [real, imaginary] pairs.
        Storage::C64(v) => v.iter().map(|c| format!("[{},{}]", float(c.re.into()), float(c.im.into()))).collect(),
        Storage::C128(v) => v.iter().map(|c| format!("[{},{}]", float(c.re), float(c.im))).collect(),
        Storage::QI8(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::QU8(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::QI16(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::QU16(v) => v.iter().map(|x| x.to_string()).collect(),
        Storage::QI32(v) => v.iter().map(|x| x.to_string()).collect(),
    };
    format!("[{}]", items.join(","))
}

/// `{"name":…,"dtype":…,"shape":[…],"values":[…]}` (values only when given).
pub fn tensor_entry(name: &str, dtype: &str, shape: &[usize], t: Option<&Tensor>) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let mut s = format!("{{\"name\":{},\"dtype\":{},\"shape\":[{}]", string(name), string(dtype), dims.join(","));
    if let Some(t) = t {
        s.push_str(&format!(",\"values\":{}", values(t)));
    }
    s.push('}');
    s
}
