//! `ParseExampleV2`, `ParseExample` (V1) and `ParseSingleExample` on `tf.train.Example` protos serialized by
//! TensorFlow 2.21 (hex below), with the outputs TensorFlow gives for them.

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, Code, DataType, Shape, Storage, Tensor};
use ferroflow_kernels::testutil::{node, run_kernel};

/// {"age": [31], "tags": [b"x", b"y"], "w": [0.5, 1.5]}
const A: &str =
    "0a330a100a047461677312080a060a01780a01790a0c0a0361676512051a030a011f0a110a0177120c120a0a080000003f0000c03f";
/// {"tags": [b"z"], "ids": [7, -3, 2**40], "w": [2.0, -1.0]}
const B: &str = "0a400a0d0a047461677312050a030a017a0a1c0a0369647312151a130a1107fdffffffffffffffff018080808080200a110a0177120c120a0a0800000040000080bf";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn strs(shape: &[usize], v: Vec<Vec<u8>>) -> Tensor {
    Tensor::from_storage(Shape::new(shape.to_vec()), Storage::Str(v)).unwrap()
}

fn keys(v: &[&str]) -> Tensor {
    strs(&[v.len()], v.iter().map(|s| s.as_bytes().to_vec()).collect())
}

/// `ParseExampleV2` inputs for one serialized example and one dense feature `key` with
/// `default` (no names, no sparse or ragged keys).
fn one_dense(example: Vec<u8>, key: &str, default: Tensor) -> Vec<Tensor> {
    vec![strs(&[1], vec![example]), keys(&[]), keys(&[]), keys(&[key]), keys(&[]), default]
}

fn list_shape(shapes: &[&[i64]]) -> AttrValue {
    attr::list_shape(shapes.iter().map(|d| Some(*d)))
}

fn v2_node(dense_shapes: &[&[i64]], tdense: &[DataType], sparse: &[DataType]) -> ferroflow_core::proto::NodeDef {
    node(
        "ParseExampleV2",
        &[
            ("Tdense", attr::list_type(tdense)),
            ("num_sparse", attr::int(sparse.len() as i64)),
            ("sparse_types", attr::list_type(sparse)),
            ("ragged_value_types", attr::list_type(&[])),
            ("ragged_split_types", attr::list_type(&[])),
            ("dense_shapes", list_shape(dense_shapes)),
        ],
    )
}

#[test]
fn parse_example_v2_dense_and_sparse() {
    let n = v2_node(&[&[2], &[1]], &[DataType::Float, DataType::Int64], &[DataType::String, DataType::Int64]);
    let inputs = vec![
        strs(&[2], vec![hex(A), hex(B)]),
        keys(&[]),
        keys(&["tags", "ids"]),
        keys(&["w", "age"]),
        keys(&[]),
        Tensor::new(vec![0], Vec::<f32>::new()).unwrap(),
        Tensor::new(vec![1], vec![-1i64]).unwrap(),
    ];
    let out = run_kernel(n, inputs, 8).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), [0, 0, 0, 1, 1, 0]);
    assert_eq!(out[1].as_slice::<i64>().unwrap(), [1, 0, 1, 1, 1, 2]);
    assert_eq!(out[2], strs(&[3], vec![b"x".to_vec(), b"y".to_vec(), b"z".to_vec()]));
    assert_eq!(out[3].as_slice::<i64>().unwrap(), [7, -3, 1 << 40]);
    assert_eq!(out[4].as_slice::<i64>().unwrap(), [2, 2]);
    assert_eq!(out[5].as_slice::<i64>().unwrap(), [2, 3]);
    assert_eq!(out[6].dims(), [2, 2]);
    assert_eq!(out[6].as_slice::<f32>().unwrap(), [0.5, 1.5, 2.0, -1.0]);
    assert_eq!(out[7].dims(), [2, 1]);
    assert_eq!(out[7].as_slice::<i64>().unwrap(), [31, -1]);
}

/// V1 (graphs written by TensorFlow 1.x): each key a scalar input; the same outputs as V2.
#[test]
fn parse_example_v1_dense_and_sparse() {
    let n = node(
        "ParseExample",
        &[
            ("Nsparse", attr::int(2)),
            ("Ndense", attr::int(2)),
            ("sparse_types", attr::list_type(&[DataType::String, DataType::Int64])),
            ("Tdense", attr::list_type(&[DataType::Float, DataType::Int64])),
            ("dense_shapes", list_shape(&[&[2], &[1]])),
        ],
    );
    let key = |k: &str| Tensor::scalar(k.as_bytes().to_vec());
    let inputs = vec![
        strs(&[2], vec![hex(A), hex(B)]),
        keys(&[]),
        key("tags"),
        key("ids"),
        key("w"),
        key("age"),
        Tensor::new(vec![0], Vec::<f32>::new()).unwrap(),
        Tensor::new(vec![1], vec![-1i64]).unwrap(),
    ];
    let out = run_kernel(n.clone(), inputs.clone(), 8).unwrap();
    assert_eq!(out[0].as_slice::<i64>().unwrap(), [0, 0, 0, 1, 1, 0]);
    assert_eq!(out[2], strs(&[3], vec![b"x".to_vec(), b"y".to_vec(), b"z".to_vec()]));
    assert_eq!(out[3].as_slice::<i64>().unwrap(), [7, -3, 1 << 40]);
    assert_eq!(out[5].as_slice::<i64>().unwrap(), [2, 3]);
    assert_eq!(out[6].as_slice::<f32>().unwrap(), [0.5, 1.5, 2.0, -1.0]);
    assert_eq!(out[7].as_slice::<i64>().unwrap(), [31, -1]);
    // A key that is not a scalar.
    let mut bad = inputs;
    bad[2] = keys(&["tags"]);
    let e = run_kernel(n, bad, 8).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("sparse_keys"), "{e}");
}

/// Variable-length dense features (`FixedLenSequenceFeature`): padded to the longest example.
#[test]
fn parse_example_v2_sequence_features() {
    let n = v2_node(&[&[-1], &[-1, 2]], &[DataType::Int64, DataType::Float], &[]);
    let inputs = vec![
        strs(&[2], vec![hex(A), hex(B)]),
        keys(&[]),
        keys(&[]),
        keys(&["ids", "w"]),
        keys(&[]),
        Tensor::new(vec![], vec![-1i64]).unwrap(),
        Tensor::new(vec![0], Vec::<f32>::new()).unwrap(),
    ];
    let out = run_kernel(n, inputs.clone(), 2).unwrap();
    assert_eq!(out[0].dims(), [2, 3]);
    assert_eq!(out[0].as_slice::<i64>().unwrap(), [-1, -1, -1, 7, -3, 1 << 40]);
    assert_eq!(out[1].dims(), [2, 1, 2]);
    assert_eq!(out[1].as_slice::<f32>().unwrap(), [0.5, 1.5, 2.0, -1.0]);
    // Three ids are not rows of two.
    let n = v2_node(&[&[-1, 2]], &[DataType::Int64], &[]);
    let mut bad = inputs;
    bad[3] = keys(&["ids"]);
    bad.truncate(6);
    let e = run_kernel(n, bad, 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Number of int64 values is not a multiple of stride length. Saw 3 values"), "{e}");
}

#[test]
fn parse_example_v2_errors() {
    // A required dense feature missing.
    let n = v2_node(&[&[1]], &[DataType::Int64], &[]);
    let inputs = one_dense(hex(B), "age", Tensor::new(vec![0], Vec::<i64>::new()).unwrap());
    let e = run_kernel(n.clone(), inputs, 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("Feature: age (data type: int64) is required but could not be found."), "{e}");
    // The wrong type, the wrong count, a truncated proto.
    let bad_type = one_dense(hex(A), "w", Tensor::new(vec![1], vec![0i64]).unwrap());
    let n1 = v2_node(&[&[1]], &[DataType::Int64], &[]);
    let e = run_kernel(n1.clone(), bad_type, 1).unwrap_err();
    assert!(e.message.contains("Data types don't match"), "{e}");
    let n2 = v2_node(&[&[3]], &[DataType::Float], &[]);
    let bad_count = one_dense(hex(A), "w", Tensor::new(vec![0], Vec::<f32>::new()).unwrap());
    let e = run_kernel(n2, bad_count, 1).unwrap_err();
    assert!(e.message.contains("Number of float values != expected"), "{e}");
    let mut cut = hex(A);
    cut.truncate(20);
    let truncated = one_dense(cut, "age", Tensor::new(vec![1], vec![0i64]).unwrap());
    assert_eq!(run_kernel(n1, truncated, 1).unwrap_err().code, Code::InvalidArgument);
}

#[test]
fn parse_single_example() {
    let n = node(
        "ParseSingleExample",
        &[
            ("num_sparse", attr::int(1)),
            ("sparse_keys", attr::list_string(&["tags"])),
            ("dense_keys", attr::list_string(&["w"])),
            ("sparse_types", attr::list_type(&[DataType::String])),
            ("Tdense", attr::list_type(&[DataType::Float])),
            ("dense_shapes", list_shape(&[&[2]])),
        ],
    );
    let out = run_kernel(n, vec![strs(&[], vec![hex(A)]), Tensor::new(vec![2], vec![0f32, 0.0]).unwrap()], 4).unwrap();
    assert_eq!(out[0].dims(), [2, 1]);
    assert_eq!(out[0].as_slice::<i64>().unwrap(), [0, 1]);
    assert_eq!(out[1], strs(&[2], vec![b"x".to_vec(), b"y".to_vec()]));
    assert_eq!(out[2].as_slice::<i64>().unwrap(), [2]);
    assert_eq!(out[3].as_slice::<f32>().unwrap(), [0.5, 1.5]);
}

fn ragged_node(values: &[DataType], splits: &[DataType]) -> ferroflow_core::proto::NodeDef {
    node(
        "ParseExampleV2",
        &[
            ("Tdense", attr::list_type(&[])),
            ("num_sparse", attr::int(0)),
            ("sparse_types", attr::list_type(&[])),
            ("ragged_value_types", attr::list_type(values)),
            ("ragged_split_types", attr::list_type(splits)),
            ("dense_shapes", list_shape(&[])),
        ],
    )
}

/// `tf.io.RaggedFeature`: each key's values of every example one after the other and the
/// row splits (int32 or int64) where each example's begin (a missing feature: an empty
/// row); a scalar input gives no row splits; TensorFlow's error for a type mismatch.
#[test]
fn parse_example_v2_ragged_features() {
    let n = ragged_node(&[DataType::String, DataType::Int64], &[DataType::Int32, DataType::Int64]);
    let inputs =
        vec![strs(&[3], vec![hex(A), hex(B), hex(A)]), keys(&[]), keys(&[]), keys(&[]), keys(&["tags", "ids"])];
    let out = run_kernel(n, inputs, 4).unwrap();
    let s = |v: &[&str]| strs(&[v.len()], v.iter().map(|x| x.as_bytes().to_vec()).collect());
    assert_eq!(out[0], s(&["x", "y", "z", "x", "y"]));
    assert_eq!(out[1].as_slice::<i64>().unwrap(), [7, -3, 1 << 40]);
    assert_eq!(out[2].as_slice::<i32>().unwrap(), [0, 2, 3, 5]);
    assert_eq!(out[3].as_slice::<i64>().unwrap(), [0, 0, 3, 3]);

    let n = ragged_node(&[DataType::Float], &[DataType::Int64]);
    let inputs = vec![strs(&[], vec![hex(A)]), keys(&[]), keys(&[]), keys(&[]), keys(&["w"])];
    let out = run_kernel(n, inputs, 2).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), [0.5, 1.5]);
    assert_eq!(out[1].dims(), [0]);

    let n = ragged_node(&[DataType::Float], &[DataType::Int64]);
    let inputs = vec![strs(&[1], vec![hex(A)]), keys(&[]), keys(&[]), keys(&[]), keys(&["age"])];
    let e = run_kernel(n, inputs, 2).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(
        e.message.contains(
            "Name: <unknown>, Key: age, Index: 0.  Data types don't match. Expected type: float, Actual type: int64"
        ),
        "{e}"
    );
}
