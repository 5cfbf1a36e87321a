//! JSON values of tensors for the inspection commands (serde_json).

use ferroflow_core::{Storage, Tensor};
use serde_json::{json, Value};

/// A float, or its name as a string when it has no JSON number (NaN, ±inf).
fn float(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::String(x.to_string())
    }
}

fn each<T>(v: &[T], f: impl Fn(&T) -> Value) -> Vec<Value> {
    v.iter().map(f).collect()
}

/// The tensor's elements, flattened, as a JSON array (strings decoded lossily as UTF-8;
/// complex values as `[real, imaginary]` pairs).
pub fn values(t: &Tensor) -> Value {
    Value::Array(match t.storage() {
        Storage::F32(v) => each(v, |&x| float(x.into())),
        Storage::F64(v) => each(v, |&x| float(x)),
        Storage::F16(v) => each(v, |&x| float(x.into())),
        Storage::BF16(v) => each(v, |&x| float(x.into())),
        Storage::I32(v) => each(v, |&x| json!(x)),
        Storage::I64(v) => each(v, |&x| json!(x)),
        Storage::U8(v) => each(v, |&x| json!(x)),
        Storage::Bool(v) => each(v, |&x| json!(x)),
        Storage::I8(v) => each(v, |&x| json!(x)),
        Storage::I16(v) => each(v, |&x| json!(x)),
        Storage::U16(v) => each(v, |&x| json!(x)),
        Storage::U32(v) => each(v, |&x| json!(x)),
        Storage::U64(v) => each(v, |&x| json!(x)),
        Storage::QI8(v) => each(v, |&x| json!(x.0)),
        Storage::QU8(v) => each(v, |&x| json!(x.0)),
        Storage::QI16(v) => each(v, |&x| json!(x.0)),
        Storage::QU16(v) => each(v, |&x| json!(x.0)),
        Storage::QI32(v) => each(v, |&x| json!(x.0)),
        Storage::Str(v) => each(v, |s| Value::String(String::from_utf8_lossy(s).into_owned())),
        Storage::Resource(v) => each(v, |h| Value::String(format!("{h:?}"))),
        Storage::Variant(v) => each(v, |x| Value::String(format!("{x:?}"))),
        Storage::C64(v) => each(v, |c| json!([float(c.re.into()), float(c.im.into())])),
        Storage::C128(v) => each(v, |c| json!([float(c.re), float(c.im)])),
    })
}

/// `{"name":…,"dtype":…,"shape":[…],"values":[…]}` (values only when given).
pub fn tensor_entry(name: &str, dtype: &str, shape: &[usize], t: Option<&Tensor>) -> Value {
    let mut e = json!({ "name": name, "dtype": dtype, "shape": shape });
    if let Some(t) = t {
        e["values"] = values(t);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_strings_and_entries() {
        let t = Tensor::vec(vec![1.5f32, f32::NAN, f32::INFINITY]);
        assert_eq!(values(&t).to_string(), r#"[1.5,"NaN","inf"]"#);
        let s = Tensor::vec(vec![b"a\"b\n".to_vec()]);
        assert_eq!(values(&s).to_string(), r#"["a\"b\n"]"#);
        let e = tensor_entry("w", "float", &[2], Some(&Tensor::vec(vec![1i64, 2])));
        assert_eq!(e, json!({"name": "w", "dtype": "float", "shape": [2], "values": [1, 2]}));
        assert!(tensor_entry("w", "float", &[], None).get("values").is_none());
    }
}
