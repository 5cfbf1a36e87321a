//! Golden cases: kernel outputs compared with values produced once by TensorFlow 2.21
//! (`scripts/golden/*.py` wrote `tests/golden/*.json`; the numbers are committed, the
//! generator is not needed to run the tests).
//!
//! Case format: `{"name", "op", "attrs": {name: {"type"|"i"|"f"|"b"|"s"|"list_i"|"list_f"|"list_s"|
//! "list_type"|"shape"|"list_shape": …}}, "inputs": [{"dtype","shape","data"}], "outputs": [...],
//! "rtol", "atol"}`. Float data may use the strings "nan", "inf", "-inf"; bools are 0/1; string
//! tensors with bytes that are not UTF-8 have "hex" (one hex string per element) for "data".

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, DataType, Storage, Tensor, C128, C64};
use ferroflow_kernels::testutil::{node, run_kernel};
use serde_json::Value as J;

// Used by golden.rs only (isa_paths.rs shares the module).
#[allow(dead_code)]
pub mod stateful;

fn dtype(s: &str) -> DataType {
    match s {
        "float32" => DataType::Float,
        "float64" => DataType::Double,
        "int32" => DataType::Int32,
        "int64" => DataType::Int64,
        "uint8" => DataType::UInt8,
        "bool" => DataType::Bool,
        "string" => DataType::String,
        "float16" => DataType::Half,
        "bfloat16" => DataType::BFloat16,
        "int8" => DataType::Int8,
        "int16" => DataType::Int16,
        "uint16" => DataType::UInt16,
        "uint32" => DataType::UInt32,
        "uint64" => DataType::UInt64,
        "complex64" => DataType::Complex64,
        "complex128" => DataType::Complex128,
        other => panic!("golden: unsupported dtype {other}"),
    }
}

fn num(v: &J) -> f64 {
    match v {
        J::Number(n) => n.as_f64().expect("number"),
        J::Bool(b) => *b as u8 as f64,
        J::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            _ => panic!("golden: bad number {s}"),
        },
        _ => panic!("golden: bad number {v}"),
    }
}

/// The bytes of a hex string (strings that are not UTF-8 are written so).
fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit pair")).collect()
}

fn tensor(j: &J) -> Tensor {
    let dt = dtype(j["dtype"].as_str().expect("dtype"));
    let shape: Vec<usize> =
        j["shape"].as_array().expect("shape").iter().map(|d| d.as_u64().unwrap() as usize).collect();
    if let Some(hex) = j.get("hex") {
        let bytes = hex.as_array().expect("hex strings").iter().map(|v| unhex(v.as_str().expect("hex string")));
        return Tensor::from_storage(shape.into(), Storage::Str(bytes.collect())).expect("golden tensor");
    }
    let data = j["data"].as_array().expect("data");
    let storage = match dt {
        DataType::Float => Storage::F32(data.iter().map(|v| num(v) as f32).collect()),
        DataType::Double => Storage::F64(data.iter().map(num).collect()),
        DataType::Int32 => Storage::I32(data.iter().map(|v| num(v) as i32).collect()),
        DataType::Int64 => Storage::I64(data.iter().map(|v| v.as_i64().unwrap_or_else(|| num(v) as i64)).collect()),
        DataType::UInt8 => Storage::U8(data.iter().map(|v| num(v) as u8).collect()),
        DataType::Bool => Storage::Bool(data.iter().map(|v| num(v) != 0.0).collect()),
        DataType::String => Storage::Str(data.iter().map(|v| v.as_str().unwrap().as_bytes().to_vec()).collect()),
        // Golden half/bfloat16 values are exact in f64 (they were half/bfloat16 values).
        DataType::Half => Storage::F16(data.iter().map(|v| f16::from_f64(num(v))).collect()),
        DataType::BFloat16 => Storage::BF16(data.iter().map(|v| bf16::from_f64(num(v))).collect()),
        DataType::Int8 => Storage::I8(data.iter().map(|v| v.as_i64().unwrap() as i8).collect()),
        DataType::Int16 => Storage::I16(data.iter().map(|v| v.as_i64().unwrap() as i16).collect()),
        DataType::UInt16 => Storage::U16(data.iter().map(|v| v.as_u64().unwrap() as u16).collect()),
        DataType::UInt32 => Storage::U32(data.iter().map(|v| v.as_u64().unwrap() as u32).collect()),
        DataType::UInt64 => Storage::U64(data.iter().map(|v| v.as_u64().unwrap()).collect()),
        DataType::Complex64 => {
            Storage::C64(data.chunks(2).map(|p| C64::new(num(&p[0]) as f32, num(&p[1]) as f32)).collect())
        }
        DataType::Complex128 => Storage::C128(data.chunks(2).map(|p| C128::new(num(&p[0]), num(&p[1]))).collect()),
        _ => unreachable!(),
    };
    Tensor::from_storage(shape.into(), storage).expect("golden tensor")
}

fn attr_value(j: &J) -> AttrValue {
    let (k, v) = j.as_object().expect("attr object").iter().next().expect("attr kind");
    match k.as_str() {
        "type" => attr::ty(dtype(v.as_str().unwrap())),
        "i" => attr::int(v.as_i64().unwrap()),
        "f" => attr::float(num(v) as f32),
        "b" => attr::bool(v.as_bool().unwrap()),
        "s" => attr::string(v.as_str().unwrap()),
        "list_i" => attr::list_int(&v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect::<Vec<_>>()),
        "list_s" => attr::list_string(&v.as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect::<Vec<_>>()),
        "list_f" => attr::list_float(&v.as_array().unwrap().iter().map(|x| num(x) as f32).collect::<Vec<_>>()),
        "list_type" => {
            attr::list_type(&v.as_array().unwrap().iter().map(|x| dtype(x.as_str().unwrap())).collect::<Vec<_>>())
        }
        "shape" => attr::shape(Some(&v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect::<Vec<_>>())),
        "list_shape" => {
            let dims: Vec<Vec<i64>> = v
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect())
                .collect();
            attr::list_shape(dims.iter().map(|d| Some(&d[..])))
        }
        other => panic!("golden: unknown attr kind {other}"),
    }
}

/// The values as f64, complex ones as (real, imaginary) pairs.
fn values(t: &Tensor) -> Vec<f64> {
    match t.storage() {
        Storage::C64(v) => v.iter().flat_map(|c| [f64::from(c.re), f64::from(c.im)]).collect(),
        Storage::C128(v) => v.iter().flat_map(|c| [c.re, c.im]).collect(),
        _ => t.to_f64_vec().unwrap(),
    }
}

fn close(a: f64, b: f64, rtol: f64, atol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs()
}

/// The JSON files of the folder `dir` (below this crate's root), sorted by name.
fn json_files(dir: &str) -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    files
}

/// Runs every golden case; `Err` lists the failures.
pub fn check_all() -> Result<usize, String> {
    let files = json_files("tests/golden");
    let mut failures = Vec::new();
    let mut count = 0;
    for f in files {
        let j: J = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        for case in j["cases"].as_array().unwrap() {
            count += 1;
            let name = format!("{}:{}", f.file_name().unwrap().to_string_lossy(), case["name"].as_str().unwrap());
            let attrs: Vec<(String, AttrValue)> = case["attrs"]
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), attr_value(v))).collect())
                .unwrap_or_default();
            let attr_refs: Vec<(&str, AttrValue)> = attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            let n = node(case["op"].as_str().unwrap(), &attr_refs);
            let inputs: Vec<Tensor> = case["inputs"].as_array().unwrap().iter().map(tensor).collect();
            let want: Vec<Tensor> = case["outputs"].as_array().unwrap().iter().map(tensor).collect();
            let rtol = case["rtol"].as_f64().unwrap_or(1e-5);
            let atol = case["atol"].as_f64().unwrap_or(1e-6);
            match run_kernel(n, inputs, want.len()) {
                Err(e) => failures.push(format!("{name}: error {e}")),
                Ok(got) => {
                    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                        if g.dtype() != w.dtype() || g.shape() != w.shape() {
                            failures.push(format!(
                                "{name}: output {i} is {} {} but TensorFlow gives {} {}",
                                g.dtype(),
                                g.shape(),
                                w.dtype(),
                                w.shape()
                            ));
                            continue;
                        }
                        if g.dtype() == DataType::String {
                            if g != w {
                                failures.push(format!("{name}: output {i} strings differ"));
                            }
                            continue;
                        }
                        let (gv, wv) = (values(g), values(w));
                        if let Some(k) = (0..gv.len()).find(|&k| !close(gv[k], wv[k], rtol, atol)) {
                            failures
                                .push(format!("{name}: output {i}[{k}] = {} but TensorFlow gives {}", gv[k], wv[k]));
                        }
                    }
                }
            }
        }
    }
    if failures.is_empty() {
        Ok(count)
    } else {
        Err(format!("{} of {count} golden cases failed:\n{}", failures.len(), failures.join("\n")))
    }
}
