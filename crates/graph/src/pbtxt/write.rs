//! GraphDef → protobuf text format, laid out like TensorFlow's `tf.io.write_graph(...,
//! as_text=True)`: fields in field-number order, map entries sorted by key, two-space
//! indent, C-escaped strings, floats as the shortest round-tripping decimal.

use ferroflow_core::proto::{
    attr_value::{ListValue, Value as AV},
    AttrValue, FunctionDefLibrary, GraphDef, NameAttrList, NodeDef, ResourceHandleProto, TensorProto, TensorShapeProto,
};

pub(crate) struct Printer {
    out: String,
    indent: usize,
}

impl Printer {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }
    fn raw(&mut self, name: &str, v: impl std::fmt::Display) {
        self.line(&format!("{name}: {v}"));
    }
    fn bytes(&mut self, name: &str, v: &[u8]) {
        self.line(&format!("{name}: \"{}\"", escape(v)));
    }
    fn open(&mut self, name: &str) {
        self.line(&format!("{name} {{"));
        self.indent += 1;
    }
    fn close(&mut self) {
        self.indent -= 1;
        self.line("}");
    }
}

/// Protobuf's CEscape: `\n \r \t \" \' \\`, other non-printable bytes as 3-digit octal.
pub fn escape(v: &[u8]) -> String {
    let mut s = String::with_capacity(v.len());
    for &b in v {
        match b {
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            b'"' => s.push_str("\\\""),
            b'\'' => s.push_str("\\'"),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\{b:03o}")),
        }
    }
    s
}

/// Python's `repr` layout of a decimal (digits without trailing zeros, exponent):
/// fixed notation for exponents in `-4..16` (with `.0` when integral), else `1.5e-07`.
fn py_repr(neg: bool, digits: &str, exp: i32) -> String {
    let sign = if neg { "-" } else { "" };
    let n = digits.len() as i32;
    if !(-4..16).contains(&exp) {
        let (h, t) = digits.split_at(1);
        let mant = if t.is_empty() { h.to_string() } else { format!("{h}.{t}") };
        let es = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{mant}e{es}{:02}", exp.abs());
    }
    if exp >= n - 1 {
        format!("{sign}{digits}{}.0", "0".repeat((exp - (n - 1)) as usize))
    } else if exp >= 0 {
        let (a, b) = digits.split_at(exp as usize + 1);
        format!("{sign}{a}.{b}")
    } else {
        format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
    }
}

/// Splits Rust's shortest `{:e}` output (`-1.25e-3`) into sign, digits and exponent.
fn sci_parts(s: &str) -> (bool, String, i32) {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (m, e) = s.split_once('e').unwrap_or((s, "0"));
    let digits: String = m.chars().filter(|c| *c != '.').collect();
    (neg, digits, e.parse().unwrap_or(0))
}

fn special(v: f64) -> Option<String> {
    if v.is_nan() {
        Some("nan".into())
    } else if v.is_infinite() {
        Some(if v > 0.0 { "inf".into() } else { "-inf".into() })
    } else {
        None
    }
}

/// A float as `tf.io.write_graph` prints it: the shortest decimal that round-trips as a
/// float32, in Python's `repr` layout (`1.0`, `0.90000004`, `1e-05`).
pub fn fmt_f32(v: f32) -> String {
    if let Some(s) = special(v as f64) {
        return s;
    }
    let (neg, d, e) = sci_parts(&format!("{v:e}"));
    py_repr(neg, &d, e)
}

/// A double as `tf.io.write_graph` prints it (Python's `repr`).
pub fn fmt_f64(v: f64) -> String {
    if let Some(s) = special(v) {
        return s;
    }
    let (neg, d, e) = sci_parts(&format!("{v:e}"));
    py_repr(neg, &d, e)
}

/// The enum name of a DataType value (`DT_FLOAT`), or the number if unknown.
pub fn dtype_name(v: i32) -> String {
    match ferroflow_core::proto::DataType::try_from(v) {
        Ok(d) => d.as_str_name().to_string(),
        Err(_) => v.to_string(),
    }
}

fn shape(p: &mut Printer, name: &str, s: &TensorShapeProto) {
    p.open(name);
    for d in &s.dim {
        p.open("dim");
        if d.size != 0 {
            p.raw("size", d.size);
        }
        if !d.name.is_empty() {
            p.bytes("name", d.name.as_bytes());
        }
        p.close();
    }
    if s.unknown_rank {
        p.raw("unknown_rank", true);
    }
    p.close();
}

fn resource(p: &mut Printer, name: &str, r: &ResourceHandleProto) {
    p.open(name);
    for (f, v) in [("device", &r.device), ("container", &r.container), ("name", &r.name)] {
        if !v.is_empty() {
            p.bytes(f, v.as_bytes());
        }
    }
    if r.hash_code != 0 {
        p.raw("hash_code", r.hash_code);
    }
    if !r.maybe_type_name.is_empty() {
        p.bytes("maybe_type_name", r.maybe_type_name.as_bytes());
    }
    for ds in &r.dtypes_and_shapes {
        p.open("dtypes_and_shapes");
        if ds.dtype != 0 {
            p.raw("dtype", dtype_name(ds.dtype));
        }
        if let Some(s) = &ds.shape {
            shape(p, "shape", s);
        }
        p.close();
    }
    p.close();
}

fn tensor(p: &mut Printer, name: &str, t: &TensorProto) {
    p.open(name);
    if t.dtype != 0 {
        p.raw("dtype", dtype_name(t.dtype));
    }
    if let Some(s) = &t.tensor_shape {
        shape(p, "tensor_shape", s);
    }
    if t.version_number != 0 {
        p.raw("version_number", t.version_number);
    }
    if !t.tensor_content.is_empty() {
        p.bytes("tensor_content", &t.tensor_content);
    }
    t.float_val.iter().for_each(|v| p.raw("float_val", fmt_f32(*v)));
    t.double_val.iter().for_each(|v| p.raw("double_val", fmt_f64(*v)));
    t.int_val.iter().for_each(|v| p.raw("int_val", v));
    t.string_val.iter().for_each(|v| p.bytes("string_val", v));
    t.scomplex_val.iter().for_each(|v| p.raw("scomplex_val", fmt_f32(*v)));
    t.int64_val.iter().for_each(|v| p.raw("int64_val", v));
    t.bool_val.iter().for_each(|v| p.raw("bool_val", v));
    t.dcomplex_val.iter().for_each(|v| p.raw("dcomplex_val", fmt_f64(*v)));
    t.half_val.iter().for_each(|v| p.raw("half_val", v));
    t.resource_handle_val.iter().for_each(|r| resource(p, "resource_handle_val", r));
    t.uint32_val.iter().for_each(|v| p.raw("uint32_val", v));
    t.uint64_val.iter().for_each(|v| p.raw("uint64_val", v));
    if !t.float8_val.is_empty() {
        p.bytes("float8_val", &t.float8_val);
    }
    p.close();
}

fn list(p: &mut Printer, l: &ListValue) {
    p.open("list");
    l.s.iter().for_each(|v| p.bytes("s", v));
    l.i.iter().for_each(|v| p.raw("i", v));
    l.f.iter().for_each(|v| p.raw("f", fmt_f32(*v)));
    l.b.iter().for_each(|v| p.raw("b", v));
    l.r#type.iter().for_each(|v| p.raw("type", dtype_name(*v)));
    l.shape.iter().for_each(|s| shape(p, "shape", s));
    l.tensor.iter().for_each(|t| tensor(p, "tensor", t));
    l.func.iter().for_each(|f| func(p, "func", f));
    p.close();
}

fn attr_map<'a>(p: &mut Printer, field: &str, m: impl Iterator<Item = (&'a String, &'a AttrValue)>) {
    let mut entries: Vec<_> = m.collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (k, v) in entries {
        p.open(field);
        p.bytes("key", k.as_bytes());
        attr_value(p, "value", v);
        p.close();
    }
}

fn func(p: &mut Printer, name: &str, f: &NameAttrList) {
    p.open(name);
    if !f.name.is_empty() {
        p.bytes("name", f.name.as_bytes());
    }
    attr_map(p, "attr", f.attr.iter());
    p.close();
}

fn attr_value(p: &mut Printer, name: &str, v: &AttrValue) {
    p.open(name);
    match &v.value {
        None => {}
        Some(AV::List(l)) => list(p, l),
        Some(AV::S(s)) => p.bytes("s", s),
        Some(AV::I(i)) => p.raw("i", i),
        Some(AV::F(f)) => p.raw("f", fmt_f32(*f)),
        Some(AV::B(b)) => p.raw("b", b),
        Some(AV::Type(t)) => p.raw("type", dtype_name(*t)),
        Some(AV::Shape(s)) => shape(p, "shape", s),
        Some(AV::Tensor(t)) => tensor(p, "tensor", t),
        Some(AV::Placeholder(s)) => p.bytes("placeholder", s.as_bytes()),
        Some(AV::Func(f)) => func(p, "func", f),
    }
    p.close();
}

pub(crate) fn node(p: &mut Printer, name: &str, n: &NodeDef) {
    p.open(name);
    if !n.name.is_empty() {
        p.bytes("name", n.name.as_bytes());
    }
    if !n.op.is_empty() {
        p.bytes("op", n.op.as_bytes());
    }
    n.input.iter().for_each(|i| p.bytes("input", i.as_bytes()));
    if !n.device.is_empty() {
        p.bytes("device", n.device.as_bytes());
    }
    attr_map(p, "attr", n.attr.iter());
    p.close();
}

fn library(p: &mut Printer, lib: &FunctionDefLibrary) {
    p.open("library");
    for f in &lib.function {
        p.open("function");
        if let Some(sig) = &f.signature {
            p.open("signature");
            if !sig.name.is_empty() {
                p.bytes("name", sig.name.as_bytes());
            }
            p.close();
        }
        f.node_def.iter().for_each(|n| node(p, "node_def", n));
        let mut ret: Vec<_> = f.ret.iter().collect();
        ret.sort();
        for (k, v) in ret {
            p.open("ret");
            p.bytes("key", k.as_bytes());
            p.bytes("value", v.as_bytes());
            p.close();
        }
        p.close();
    }
    for g in &lib.gradient {
        p.open("gradient");
        p.bytes("function_name", g.function_name.as_bytes());
        p.bytes("gradient_func", g.gradient_func.as_bytes());
        p.close();
    }
    p.close();
}

/// Prints a GraphDef in protobuf text format.
pub fn graph_def_to_text(g: &GraphDef) -> String {
    let mut p = Printer { out: String::new(), indent: 0 };
    g.node.iter().for_each(|n| node(&mut p, "node", n));
    if let Some(lib) = &g.library {
        library(&mut p, lib);
    }
    #[allow(deprecated)]
    if g.version != 0 {
        p.raw("version", g.version);
    }
    if let Some(v) = &g.versions {
        p.open("versions");
        if v.producer != 0 {
            p.raw("producer", v.producer);
        }
        if v.min_consumer != 0 {
            p.raw("min_consumer", v.min_consumer);
        }
        v.bad_consumers.iter().for_each(|b| p.raw("bad_consumers", b));
        p.close();
    }
    p.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_write_graph() {
        let cases: [(f32, &str); 14] = [
            (2.5, "2.5"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (1e8, "100000000.0"),
            (123456789.0, "123456790.0"),
            (1e16, "1e+16"),
            (0.0001, "0.0001"),
            (-0.5, "-0.5"),
            (-0.0, "-0.0"),
            (1.5e-7, "1.5e-07"),
            (f32::INFINITY, "inf"),
            (3.4028235e38, "3.4028235e+38"),
            (1.0 / 3.0, "0.33333334"),
        ];
        for (v, s) in cases {
            assert_eq!(fmt_f32(v), s, "{v}");
        }
        assert_eq!(fmt_f64(0.1), "0.1");
        assert_eq!(fmt_f64(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(fmt_f64(123456789.0), "123456789.0");
        assert_eq!(fmt_f64(f64::NAN), "nan");
    }

    #[test]
    fn escapes() {
        assert_eq!(escape(b"b\x00\xff'\"\n\\"), "b\\000\\377\\'\\\"\\n\\\\");
    }
}
