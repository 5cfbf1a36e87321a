//! V1 checkpoints (`Save`, `SaveSlices`, `Restore`, `RestoreSlice`, and `RestoreV2` reading
//! a V1 file) against a file TensorFlow 2.21's `SaveSlices` wrote
//! (scripts/golden/checkpoint_v1.py, tests/data/checkpoint/v1.json).

use ferroflow_core::proto::TensorProto;
use ferroflow_core::{attr, Code, DataType, Shape, Tensor};
use serde_json::Value;

use ferroflow_kernels::io::checkpoint_v1_reader::V1Reader;
use ferroflow_kernels::testutil::{node, run_kernel, temp_paths};

fn golden() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/checkpoint/v1.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn dtype(name: &str) -> DataType {
    match name {
        "float32" => DataType::Float,
        "float64" => DataType::Double,
        "int32" => DataType::Int32,
        "int64" => DataType::Int64,
        "string" => DataType::String,
        "bool" => DataType::Bool,
        "float16" => DataType::Half,
        "int8" => DataType::Int8,
        "uint8" => DataType::UInt8,
        "int16" => DataType::Int16,
        "complex64" => DataType::Complex64,
        "complex128" => DataType::Complex128,
        other => panic!("dtype {other} not in the golden file"),
    }
}

/// A golden `{dtype, shape, values}` as a tensor.
fn tensor(v: &Value) -> Tensor {
    let dt = dtype(v["dtype"].as_str().unwrap());
    let shape: Vec<usize> = v["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let vals = v["values"].as_array().unwrap();
    let f = |x: &Value| x.as_f64().unwrap();
    let i = |x: &Value| x.as_i64().unwrap();
    let mut p =
        TensorProto { dtype: dt.as_i32(), tensor_shape: Some(Shape::new(shape).to_proto()), ..Default::default() };
    match dt {
        DataType::Float => p.float_val = vals.iter().map(|x| f(x) as f32).collect(),
        DataType::Double => p.double_val = vals.iter().map(f).collect(),
        DataType::Int64 => p.int64_val = vals.iter().map(i).collect(),
        DataType::String => p.string_val = vals.iter().map(|x| hex(x.as_str().unwrap())).collect(),
        DataType::Bool => p.bool_val = vals.iter().map(|x| x.as_bool().unwrap()).collect(),
        DataType::Half => {
            p.half_val = vals.iter().map(|x| i32::from(ferroflow_core::half::f16::from_f64(f(x)).to_bits())).collect()
        }
        DataType::Complex64 => {
            p.scomplex_val = vals.iter().flat_map(|x| [f(&x[0]) as f32, f(&x[1]) as f32]).collect();
        }
        DataType::Complex128 => p.dcomplex_val = vals.iter().flat_map(|x| [f(&x[0]), f(&x[1])]).collect(),
        _ => p.int_val = vals.iter().map(|x| i(x) as i32).collect(),
    }
    Tensor::from_proto(&p).unwrap()
}

fn strs(v: &[&str]) -> Tensor {
    Tensor::vec(v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>())
}

fn restore_slice(pattern: &str, name: &str, spec: &str, dt: DataType) -> Result<Tensor, ferroflow_core::Status> {
    let n = node("RestoreSlice", &[("dt", attr::ty(dt))]);
    run_kernel(
        n,
        vec![
            Tensor::scalar(pattern.as_bytes().to_vec()),
            Tensor::scalar(name.as_bytes().to_vec()),
            Tensor::scalar(spec.as_bytes().to_vec()),
        ],
        1,
    )
    .map(|mut v| v.remove(0))
}

/// Writes the golden inputs with ferroflow's `SaveSlices` at `path`.
fn save_golden(g: &Value, path: &str) -> Result<(), ferroflow_core::Status> {
    let items = g["save"].as_array().unwrap();
    let names: Vec<&str> = items.iter().map(|x| x["name"].as_str().unwrap()).collect();
    let specs: Vec<&str> = items.iter().map(|x| x["spec"].as_str().unwrap()).collect();
    let values: Vec<Tensor> = items.iter().map(|x| tensor(&x["tensor"])).collect();
    let dtypes: Vec<DataType> = values.iter().map(|t| t.dtype()).collect();
    let save = node("SaveSlices", &[("T", attr::list_type(&dtypes))]);
    let mut inputs = vec![Tensor::scalar(path.as_bytes().to_vec()), strs(&names), strs(&specs)];
    inputs.extend(values);
    run_kernel(save, inputs, 0).map(|_| ())
}

#[test]
fn tensorflow_v1_file_restores_every_dtype_and_slice() {
    let g = golden();
    let (_dir, [path]) = temp_paths("ckpt_v1_read", ["model.ckpt"]);
    std::fs::write(&path, hex(g["file_hex"].as_str().unwrap())).unwrap();
    let reader = V1Reader::open(&path).unwrap();
    assert_eq!(reader.tensors()["d"].slices.len(), 2);
    let restores = g["restores"].as_array().unwrap();
    assert_eq!(restores.len(), 17);
    for r in restores {
        let want = tensor(&r["want"]);
        let (name, spec) = (r["name"].as_str().unwrap(), r["spec"].as_str().unwrap());
        let got = restore_slice(&path, name, spec, want.dtype()).unwrap();
        assert_eq!(got, want, "{name} [{spec}]");
        if spec.is_empty() {
            let n = node("Restore", &[("dt", attr::ty(want.dtype()))]);
            let inputs = vec![Tensor::scalar(path.as_bytes().to_vec()), Tensor::scalar(name.as_bytes().to_vec())];
            assert_eq!(run_kernel(n, inputs, 1).unwrap()[0], want, "Restore {name}");
        }
    }
    // RestoreV2 reads the V1 file when there is no V2 index at the prefix.
    let n = node("RestoreV2", &[("dtypes", attr::list_type(&[DataType::Double, DataType::Float]))]);
    let inputs = vec![strs(&[&path]), strs(&["d", "a"]), strs(&["4 2 1,3:1,1", ""])];
    let got = run_kernel(n, inputs, 2).unwrap();
    let want = |name: &str, spec: &str| {
        let r = restores.iter().find(|r| r["name"] == name && r["spec"] == spec).unwrap();
        tensor(&r["want"])
    };
    assert_eq!(got, vec![want("d", "4 2 1,3:1,1"), want("a", "")]);
}

#[test]
fn ferroflow_writes_tensorflows_bytes() {
    let g = golden();
    let (_dir, [path, glob_of]) = temp_paths("ckpt_v1_write", ["model.ckpt", "model.ck*"]);
    save_golden(&g, &path).unwrap();
    let ours = std::fs::read(&path).unwrap();
    assert_eq!(ours, hex(g["file_hex"].as_str().unwrap()), "the V1 file differs from TensorFlow's");
    // Restore takes a file pattern.
    let a = restore_slice(&glob_of, "a", "", DataType::Float).unwrap();
    assert_eq!(a, tensor(&g["save"][0]["tensor"]));
}

#[test]
fn errors_are_tensorflows() {
    let g = golden();
    let (_dir, [path, missing]) = temp_paths("ckpt_v1_err", ["model.ckpt", "none.ckpt"]);
    std::fs::write(&path, hex(g["file_hex"].as_str().unwrap())).unwrap();
    for e in g["errors"].as_array().unwrap() {
        let class = e["class"].as_str();
        if let Some(name) = e["name"].as_str() {
            let dt = if name == "a" { DataType::Double } else { DataType::Float };
            let n = node("Restore", &[("dt", attr::ty(dt))]);
            let inputs = vec![Tensor::scalar(path.as_bytes().to_vec()), Tensor::scalar(name.as_bytes().to_vec())];
            let err = run_kernel(n, inputs, 1).unwrap_err();
            let code = if class == Some("NotFoundError") { Code::NotFound } else { Code::InvalidArgument };
            assert_eq!(err.code, code, "{err}");
            let msg = e["message"].as_str().unwrap();
            let msg = msg.split("checkpoint files ").next().unwrap();
            assert!(err.message.contains(msg), "{} does not contain {msg}", err.message);
        } else {
            let dt = match e["save_dtype"].as_str().unwrap() {
                "bfloat16" => DataType::BFloat16,
                "uint16" => DataType::UInt16,
                "uint32" => DataType::UInt32,
                "uint64" => DataType::UInt64,
                "qint16" => DataType::QInt16,
                _ => DataType::QUInt16,
            };
            let save = node("SaveSlices", &[("T", attr::list_type(&[dt]))]);
            let t = Tensor::zeros(dt, vec![2]).unwrap();
            let inputs = vec![Tensor::scalar(missing.as_bytes().to_vec()), strs(&["x"]), strs(&[""]), t];
            let got = run_kernel(save, inputs, 0);
            match class {
                None => assert!(got.is_ok(), "{dt}: {got:?}"),
                Some(c) => {
                    let err = got.unwrap_err();
                    let code = if c == "UnimplementedError" { Code::Unimplemented } else { Code::InvalidArgument };
                    assert_eq!(err.code, code, "{dt}: {err}");
                    assert!(err.message.contains(e["message"].as_str().unwrap()), "{dt}: {err}");
                }
            }
        }
    }
    let err = restore_slice(&format!("{missing}.nothing*"), "a", "", DataType::Float).unwrap_err();
    assert_eq!(err.code, Code::NotFound);
    assert!(err.message.contains("Unsuccessful TensorSliceReader constructor: Failed to find any matching files"));
    // A file that is not a table.
    std::fs::write(&missing, b"not a checkpoint at all, just text padding to more than 48 bytes").unwrap();
    let err = restore_slice(&missing, "a", "", DataType::Float).unwrap_err();
    assert_eq!(err.code, Code::DataLoss, "{err}");
    // A slice outside the stored tensor's shape.
    let err = restore_slice(&path, "d", "5 2 0,1:-", DataType::Double).unwrap_err();
    assert_eq!(err.code, Code::InvalidArgument, "{err}");
}

#[test]
fn partial_slices_do_not_restore_the_whole() {
    let (_dir, [path]) = temp_paths("ckpt_v1_partial", ["p.ckpt"]);
    let save = node("SaveSlices", &[("T", attr::list_type(&[DataType::Float]))]);
    let t = Tensor::new(vec![1, 2], vec![1.0f32, 2.0]).unwrap();
    let inputs = vec![Tensor::scalar(path.as_bytes().to_vec()), strs(&["w"]), strs(&["3 2 1,1:-"]), t.clone()];
    run_kernel(save, inputs, 0).unwrap();
    assert_eq!(restore_slice(&path, "w", "3 2 1,1:-", DataType::Float).unwrap(), t);
    let err = restore_slice(&path, "w", "", DataType::Float).unwrap_err();
    assert_eq!(err.code, Code::NotFound, "{err}");
    // A mismatched slice shape is refused before anything is written.
    let bad = vec![Tensor::scalar(path.as_bytes().to_vec()), strs(&["w"]), strs(&["3 2 0,2:-"]), t];
    let save = node("SaveSlices", &[("T", attr::list_type(&[DataType::Float]))]);
    assert_eq!(run_kernel(save, bad, 0).unwrap_err().code, Code::InvalidArgument);
}
