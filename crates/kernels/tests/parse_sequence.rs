//! `ParseSequenceExampleV2` on hand-encoded `tf.train.SequenceExample` protos: TensorFlow
//! 2.21's error classes and texts for bad input (the values are golden cases,
//! `tests/golden/sequence_example.json`), and the shapes it gives a scalar input.

use ferroflow_core::proto::{AttrValue, NodeDef};
use ferroflow_core::{attr, Code, DataType, Shape, Status, Storage, Tensor};
use ferroflow_kernels::testutil::{node, run_kernel};

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field.
fn field(num: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint((num << 3) | 2, &mut out);
    varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

enum F {
    I(Vec<i64>),
    Fl(Vec<f32>),
    None,
}

fn feature(f: &F) -> Vec<u8> {
    match f {
        F::I(v) => {
            let mut packed = Vec::new();
            for &x in v {
                varint(x as u64, &mut packed);
            }
            field(3, &field(1, &packed))
        }
        F::Fl(v) => field(2, &field(1, &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>())),
        F::None => Vec::new(),
    }
}

fn entry(key: &str, value: &[u8]) -> Vec<u8> {
    field(1, &[field(1, key.as_bytes()), field(2, value)].concat())
}

/// A serialized SequenceExample from its context features and feature lists.
fn seq(context: &[(&str, F)], lists: &[(&str, Vec<F>)]) -> Vec<u8> {
    let ctx: Vec<u8> = context.iter().flat_map(|(k, f)| entry(k, &feature(f))).collect();
    let fls: Vec<u8> = lists
        .iter()
        .flat_map(|(k, steps)| entry(k, &steps.iter().flat_map(|f| field(1, &feature(f))).collect::<Vec<_>>()))
        .collect();
    [field(1, &ctx), field(2, &fls)].concat()
}

fn strs(shape: &[usize], v: Vec<Vec<u8>>) -> Tensor {
    Tensor::from_storage(Shape::new(shape.to_vec()), Storage::Str(v)).unwrap()
}

fn keys(v: &[&str]) -> Tensor {
    strs(&[v.len()], v.iter().map(|s| s.as_bytes().to_vec()).collect())
}

fn list_shape(shapes: &[&[i64]]) -> AttrValue {
    attr::list_shape(shapes.iter().map(|d| Some(*d)))
}

/// One int64 context feature of each kind (dense "len" of shape [], sparse "sp", ragged
/// "rg" with int64 splits) and one int64 feature list of each kind (dense "tok" of steps
/// [2], sparse "fs", ragged "fr").
fn spec() -> NodeDef {
    let i = &[DataType::Int64][..];
    node(
        "ParseSequenceExampleV2",
        &[
            ("Ncontext_sparse", attr::int(1)),
            ("Tcontext_dense", attr::list_type(i)),
            ("context_sparse_types", attr::list_type(i)),
            ("context_ragged_value_types", attr::list_type(i)),
            ("context_ragged_split_types", attr::list_type(i)),
            ("context_dense_shapes", list_shape(&[&[]])),
            ("Nfeature_list_sparse", attr::int(1)),
            ("Nfeature_list_dense", attr::int(1)),
            ("feature_list_dense_types", attr::list_type(i)),
            ("feature_list_sparse_types", attr::list_type(i)),
            ("feature_list_ragged_value_types", attr::list_type(i)),
            ("feature_list_ragged_split_types", attr::list_type(&[DataType::Int32])),
            ("feature_list_dense_shapes", list_shape(&[&[2]])),
        ],
    )
}

fn inputs(serialized: Tensor, names: &[&str], assumed_empty: bool, default: Tensor) -> Vec<Tensor> {
    vec![
        serialized,
        keys(names),
        keys(&["sp"]),
        keys(&["len"]),
        keys(&["rg"]),
        keys(&["fs"]),
        keys(&["tok"]),
        keys(&["fr"]),
        Tensor::new(vec![1], vec![assumed_empty]).unwrap(),
        default,
    ]
}

fn batch(examples: Vec<Vec<u8>>) -> Tensor {
    strs(&[examples.len()], examples)
}

fn run(serialized: Tensor, names: &[&str], assumed_empty: bool, default: Tensor) -> Result<Vec<Tensor>, Status> {
    run_kernel(spec(), inputs(serialized, names, assumed_empty, default), 14)
}

fn zero() -> Tensor {
    Tensor::scalar(0i64)
}

fn fails(r: Result<Vec<Tensor>, Status>, text: &str) {
    let e = r.expect_err(text);
    assert_eq!(e.code, Code::InvalidArgument, "{}", e.message);
    assert!(e.message.contains(text), "{} does not contain {text}", e.message);
}

#[test]
fn feature_list_errors_are_tensorflows() {
    let tok = |steps: Vec<F>| seq(&[], &[("tok", steps)]);
    fails(
        run(batch(vec![tok(vec![F::I(vec![1, 2])]), seq(&[], &[])]), &["a", "b"], false, zero()),
        "Name: b, Feature list 'tok' is required but could not be found.  Did you mean to include it in \
         feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?",
    );
    fails(
        run(batch(vec![tok(vec![F::I(vec![1, 2, 3])])]), &[], false, zero()),
        "Feature list 'tok' has an unexpected number of values.  Total values size: 3 is not consistent with output \
         shape: [?,2]",
    );
    fails(
        run(batch(vec![tok(vec![F::I(vec![1, 2]), F::None, F::I(vec![3, 4])])]), &[], false, zero()),
        "Name: <unknown>, Key: tok, Index: 1.  Number of values != expected.  values size: 0 but output shape: [2]",
    );
    fails(
        run(batch(vec![tok(vec![F::Fl(vec![1.0, 2.0])])]), &["x"], false, zero()),
        "Name: x, Feature list: tok, Index: 0.  Data types don't match. Expected type: int64",
    );
    let sparse_bad = seq(&[], &[("tok", vec![]), ("fs", vec![F::I(vec![1]), F::Fl(vec![2.0])])]);
    fails(
        run(batch(vec![sparse_bad]), &[], false, zero()),
        "Name: <unknown>, Feature list: fs, Index: 1.  Data types don't match. Expected type: int64",
    );
}

#[test]
fn context_and_input_errors_are_tensorflows() {
    let with_len = |v: Vec<i64>| seq(&[("len", F::I(v))], &[("tok", vec![])]);
    fails(
        run(batch(vec![with_len(vec![1, 2])]), &[], false, zero()),
        "Inconsistent max number of elements for feature len: expected 1, but found 2",
    );
    let empty = Tensor::new(vec![0], Vec::<i64>::new()).unwrap();
    fails(
        run(batch(vec![with_len(vec![4]), seq(&[], &[("tok", vec![])])]), &[], false, empty.clone()),
        "Feature: len (data type: int64) is required but could not be found.",
    );
    fails(
        run(batch(vec![seq(&[], &[("tok", vec![])])]), &[], false, empty),
        "Inconsistent max number of elements for feature len: expected 1, but found 0",
    );
    fails(
        run(batch(vec![with_len(vec![1])]), &[], false, Tensor::new(vec![1], vec![0i64]).unwrap()),
        "default_value[0].shape() == [1] != context_dense_shapes[0] == []",
    );
    fails(
        run(batch(vec![seq(&[("sp", F::Fl(vec![1.0]))], &[("tok", vec![])])]), &["e"], false, zero()),
        "Name: e, Context feature: sp.  Data types don't match. Expected type: int64",
    );
    fails(
        run(batch(vec![b"\xff\xff".to_vec()]), &["q"], false, zero()),
        "Invalid protocol message input, example id: q",
    );
    fails(
        run(strs(&[1, 1], vec![with_len(vec![1])]), &[], false, zero()),
        "Expected serialized to be a scalar or vector, got shape: [1,1]",
    );
    fails(
        run(batch(vec![with_len(vec![1])]), &["a", "b"], false, zero()),
        "example_names must be empty or have the correct number of elements",
    );
    let mut clash = inputs(batch(vec![with_len(vec![1])]), &[], false, zero());
    clash[2] = keys(&["len"]);
    fails(run_kernel(spec(), clash, 14), "Context feature len cannot be both dense and sparse");
}

#[test]
fn a_scalar_input_has_no_batch_dimension() {
    let ex = seq(
        &[("len", F::I(vec![7])), ("sp", F::I(vec![5, 6])), ("rg", F::I(vec![8, 9, 10]))],
        &[("tok", vec![F::I(vec![1, 2]), F::I(vec![3, 4])]), ("fs", vec![F::I(vec![1]), F::None, F::I(vec![2, 3])])],
    );
    let out = run(Tensor::scalar(ex), &[], true, zero()).unwrap();
    assert_eq!(out[0].dims(), [2, 1]);
    assert_eq!(out[2].as_slice::<i64>().unwrap(), [2]);
    assert_eq!(out[3], Tensor::scalar(7i64));
    assert_eq!(out[4].as_slice::<i64>().unwrap(), [8, 9, 10]);
    assert_eq!(out[5].dims(), [] as [usize; 0], "context row splits of a scalar input are a scalar");
    assert_eq!(out[6].as_slice::<i64>().unwrap(), [0, 0, 2, 0, 2, 1]);
    assert_eq!(out[8].as_slice::<i64>().unwrap(), [3, 2]);
    assert_eq!(out[9].dims(), [2, 2]);
    assert_eq!(out[10], Tensor::scalar(2i64));
    assert_eq!(out[11].dims(), [0]);
    assert_eq!(out[12].dims(), [1]);
    assert_eq!(out[13].as_slice::<i32>().unwrap(), [0]);
}
