//! The segment, sparse and string kernels refuse bad (untrusted) inputs with TensorFlow's
//! error codes and a message naming the node, and never allocate an output sized by a hostile
//! value before checking it against the memory budget.

use ferroflow_core::{attr, Code, Shape, Status, Storage, Tensor};
use ferroflow_kernels::testutil::{node, run_kernel};

fn run(op: &str, attrs: &[(&str, ferroflow_core::proto::AttrValue)], inputs: Vec<Tensor>, outs: usize) -> Status {
    // A small budget for this test binary: hostile sizes must be refused, not allocated.
    ferroflow_core::set_memory_limit(1 << 30);
    run_kernel(node(op, attrs), inputs, outs).expect_err(op)
}

fn i32v(v: &[i32]) -> Tensor {
    Tensor::new(vec![v.len()], v.to_vec()).unwrap()
}

fn i64m(rows: usize, v: &[i64]) -> Tensor {
    Tensor::new(vec![rows, v.len() / rows.max(1)], v.to_vec()).unwrap()
}

fn f32s(shape: &[usize]) -> Tensor {
    let n = shape.iter().product();
    Tensor::new(shape.to_vec(), (0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap()
}

fn assert_err(e: Status, code: Code, text: &str) {
    assert_eq!(e.code, code, "{e}");
    assert!(e.message.contains(text), "{e}");
    assert!(e.message.contains("node 'test'"), "{e}");
}

#[test]
fn segment_ids_are_checked() {
    let d = f32s(&[4, 2]);
    assert_err(
        run("SegmentSum", &[], vec![d.clone(), i32v(&[0, 2, 1, 1])], 1),
        Code::InvalidArgument,
        "segment ids are not increasing",
    );
    assert_err(run("SegmentMax", &[], vec![d.clone(), i32v(&[-1, 0, 1, 1])], 1), Code::InvalidArgument, "out of range");
    assert_err(run("SegmentMean", &[], vec![d.clone(), i32v(&[0, 0, 1])], 1), Code::InvalidArgument, "same size");
    let e = run("UnsortedSegmentProd", &[], vec![d.clone(), i32v(&[0, 9, 1, 1]), Tensor::scalar(3i32)], 1);
    assert_err(e, Code::InvalidArgument, "segment_ids[1] = 9 is out of range [0, 3)");
    // A hostile segment count is refused before allocating.
    let e = run("UnsortedSegmentMin", &[], vec![d.clone(), i32v(&[0, 0, 0, 0]), Tensor::scalar(1i64 << 60)], 1);
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    let e = run("SegmentSum", &[], vec![f32s(&[1, 1 << 20]), Tensor::new(vec![1], vec![1i64 << 40]).unwrap()], 1);
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
}

#[test]
fn sparse_segment_inputs_are_checked() {
    let d = f32s(&[4, 2]);
    let e = run("SparseSegmentSum", &[], vec![d.clone(), i32v(&[0, 5]), i32v(&[0, 1])], 1);
    assert_err(e, Code::InvalidArgument, "Bad: indices[1] == 5 out of range [0, 4)");
    let e = run("SparseSegmentMean", &[], vec![d.clone(), i32v(&[0, 1]), i32v(&[1, 0])], 1);
    assert_err(e, Code::InvalidArgument, "segment ids are not increasing");
    let e = run(
        "SparseSegmentSqrtNWithNumSegments",
        &[],
        vec![d.clone(), i32v(&[0, 1]), i32v(&[0, 3]), Tensor::scalar(2i32)],
        1,
    );
    assert_err(e, Code::InvalidArgument, "segment ids must be < num_segments");
    let e = run("SparseSegmentSumGrad", &[], vec![d.clone(), i32v(&[0, 9]), i32v(&[0, 1]), Tensor::scalar(3i32)], 1);
    assert_err(e, Code::InvalidArgument, "Index 9 out of range [0, 3).");
    let e = run("SparseSegmentMeanGrad", &[], vec![d.clone(), i32v(&[0, 1]), i32v(&[0, 9]), Tensor::scalar(3i32)], 1);
    assert_err(e, Code::InvalidArgument, "Invalid number of segments");
    let e = run("SparseSegmentSumWithNumSegments", &[], vec![d, i32v(&[0]), i32v(&[0]), Tensor::scalar(i32::MAX)], 1);
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
}

#[test]
fn sparse_tensor_inputs_are_checked() {
    let e = run(
        "SparseToDense",
        &[("validate_indices", attr::bool(true))],
        vec![i64m(2, &[1, 1, 0, 0]), Tensor::new(vec![2], vec![2i64, 2]).unwrap(), f32s(&[2]), Tensor::scalar(0f32)],
        1,
    );
    assert_err(e, Code::InvalidArgument, "is out of order");
    let e = run(
        "SparseToDense",
        &[("validate_indices", attr::bool(false))],
        vec![i64m(1, &[5, 0]), Tensor::new(vec![2], vec![2i64, 2]).unwrap(), f32s(&[1]), Tensor::scalar(0f32)],
        1,
    );
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    let e = run(
        "SparseToDense",
        &[("validate_indices", attr::bool(true))],
        vec![
            Tensor::new(vec![0usize, 2], Vec::<i64>::new()).unwrap(),
            Tensor::new(vec![2], vec![1i64 << 31, 1 << 31]).unwrap(),
            f32s(&[0]),
            Tensor::scalar(0f32),
        ],
        1,
    );
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    let e = run(
        "SparseReshape",
        &[],
        vec![
            i64m(1, &[0, 0]),
            Tensor::new(vec![2], vec![2i64, 3]).unwrap(),
            Tensor::new(vec![2], vec![-1i64, -1]).unwrap(),
        ],
        2,
    );
    assert_err(e, Code::InvalidArgument, "only one output dimension may be -1");
    let e = run(
        "SparseFillEmptyRows",
        &[],
        vec![i64m(1, &[7, 0]), f32s(&[1]), Tensor::new(vec![2], vec![3i64, 3]).unwrap(), Tensor::scalar(0f32)],
        4,
    );
    assert_err(e, Code::InvalidArgument, "indices(0, 0) is invalid: 7 >= 3");
    let e = run(
        "SparseFillEmptyRows",
        &[],
        vec![
            Tensor::new(vec![0usize, 2], Vec::<i64>::new()).unwrap(),
            f32s(&[0]),
            Tensor::new(vec![2], vec![1i64 << 50, 3]).unwrap(),
            Tensor::scalar(0f32),
        ],
        4,
    );
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    let e = run(
        "SparseTensorDenseMatMul",
        &[],
        vec![i64m(1, &[0, 4]), f32s(&[1]), Tensor::new(vec![2], vec![2i64, 3]).unwrap(), f32s(&[3, 2])],
        1,
    );
    assert_err(e, Code::InvalidArgument, "out of bounds");
    let e = run("SparseFillEmptyRowsGrad", &[], vec![Tensor::new(vec![1], vec![5i64]).unwrap(), f32s(&[2])], 2);
    assert_err(e, Code::InvalidArgument, "Elements in reverse index must be in [0, 2)");
    let e = run("Bincount", &[], vec![i32v(&[1, -1]), Tensor::scalar(3i32), f32s(&[0])], 1);
    assert_err(e, Code::InvalidArgument, "non-negative");
    let e = run("Bincount", &[], vec![i32v(&[1]), Tensor::scalar(i32::MAX), f32s(&[0])], 1);
    assert!(e.code == Code::ResourceExhausted || e.code == Code::InvalidArgument, "{e}");
}

#[test]
fn string_inputs_are_checked() {
    let s = |v: &[&str]| {
        Tensor::from_storage(Shape::new(vec![v.len()]), Storage::Str(v.iter().map(|x| x.as_bytes().to_vec()).collect()))
            .unwrap()
    };
    let e = run("StringToNumber", &[("out_type", attr::ty(ferroflow_core::DataType::Int32))], vec![s(&["12x"])], 1);
    assert_err(e, Code::InvalidArgument, "StringToNumber could not correctly convert string: 12x");
    let e = run(
        "Substr",
        &[("unit", attr::string("BYTE"))],
        vec![s(&["abc"]), Tensor::scalar(5i32), Tensor::scalar(1i32)],
        1,
    );
    assert_err(e, Code::InvalidArgument, "pos 5 out of range");
    let e = run("DecodeBase64", &[], vec![s(&["a$b="])], 1);
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    let e = run(
        "DecodeCSV",
        &[("OUT_TYPE", attr::list_type(&[ferroflow_core::DataType::Int32, ferroflow_core::DataType::Int32]))],
        vec![
            s(&["1,2,3"]),
            Tensor::new(vec![1], vec![0i32]).unwrap(),
            Tensor::new(vec![0], Vec::<i32>::new()).unwrap(),
        ],
        2,
    );
    assert_err(e, Code::InvalidArgument, "Expect 2 fields but have 3 in record 0");
    let bad = ferroflow_kernels::create_kernel(&node(
        "StaticRegexReplace",
        &[("pattern", attr::string("((")), ("rewrite", attr::string(""))],
    ));
    assert_eq!(bad.err().map(|e| e.code), Some(Code::InvalidArgument));
}

fn boxing(
    op: &str,
    dtype: ferroflow_core::DataType,
    boxed: ferroflow_core::DataType,
) -> ferroflow_core::proto::NodeDef {
    let (t, b) = if op.starts_with("Serialize") { ("T", "out_type") } else { ("dtype", "Tserialized") };
    node(op, &[(t, attr::ty(dtype)), (b, attr::ty(boxed))])
}

#[test]
fn sparse_tensors_round_trip_through_variant_boxing() {
    use ferroflow_core::DataType::{Float, Variant};
    // A batch of 5 rank-2 sparse tensors (rows 1 and 4 empty) boxed as variants, then stacked
    // back into the same rank-3 sparse tensor.
    let ind = i64m(5, &[0, 0, 1, 0, 2, 0, 2, 1, 1, 3, 0, 0, 3, 0, 1]);
    let vals = Tensor::new(vec![5], vec![1.0f32, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let shape = Tensor::new(vec![3], vec![5i64, 3, 2]).unwrap();
    let many =
        run_kernel(boxing("SerializeManySparse", Float, Variant), vec![ind.clone(), vals.clone(), shape.clone()], 1)
            .unwrap()
            .remove(0);
    assert_eq!(many.dims(), &[5, 3]);
    let back = run_kernel(boxing("DeserializeSparse", Float, Variant), vec![many.clone()], 3).unwrap();
    assert_eq!((&back[0], &back[1], &back[2]), (&ind, &vals, &shape));
    // One element: its parts as they are.
    let one = run_kernel(boxing("SerializeSparse", Float, Variant), vec![ind.clone(), vals.clone(), shape.clone()], 1)
        .unwrap()
        .remove(0);
    assert_eq!(one.dims(), &[3]);
    let back = run_kernel(boxing("DeserializeSparse", Float, Variant), vec![one], 3).unwrap();
    assert_eq!((&back[0], &back[1], &back[2]), (&ind, &vals, &shape));
    // A variant batch crosses a process boundary as TensorFlow encodes it.
    let wire = Tensor::from_proto(&many.to_proto()).unwrap();
    assert_eq!(wire, many);
}

#[test]
fn boxed_sparse_inputs_are_checked() {
    use ferroflow_core::DataType::{Float, Int32, String as Str, Variant};
    let ind = i64m(2, &[1, 0, 0, 1]);
    let vals = Tensor::new(vec![2], vec![1.0f32, 2.0]).unwrap();
    let shape = Tensor::new(vec![2], vec![2i64, 2]).unwrap();
    // SerializeManySparse needs sorted, in-bounds indices of rank > 1.
    let e = run_kernel(boxing("SerializeManySparse", Float, Str), vec![ind.clone(), vals.clone(), shape.clone()], 1);
    assert_err(e.unwrap_err(), Code::InvalidArgument, "is out of order");
    let e = run_kernel(
        boxing("SerializeManySparse", Float, Str),
        vec![i64m(1, &[3]), Tensor::new(vec![1], vec![1.0f32]).unwrap(), Tensor::new(vec![1], vec![4i64]).unwrap()],
        1,
    );
    assert_err(e.unwrap_err(), Code::InvalidArgument, "Rank of input SparseTensor should be > 1");
    let e = run_kernel(boxing("SerializeSparse", Float, Str), vec![vals.clone(), vals.clone(), shape.clone()], 1);
    assert_err(e.unwrap_err(), Code::InvalidArgument, "Input indices should be a matrix");
    // DeserializeSparse: last dim 3, parseable protos, the requested dtype, one rank.
    let bad = Tensor::new(vec![2], vec![b"x".to_vec(), b"y".to_vec()]).unwrap();
    let e = run_kernel(boxing("DeserializeSparse", Float, Str), vec![bad], 3);
    assert_err(e.unwrap_err(), Code::InvalidArgument, "3 as the last dimension");
    let junk = Tensor::new(vec![3], vec![vec![0xffu8; 5], vec![0xff; 5], vec![0xff; 5]]).unwrap();
    let e = run_kernel(boxing("DeserializeSparse", Float, Str), vec![junk], 3);
    assert_err(e.unwrap_err(), Code::InvalidArgument, "serialized_sparse");
    let sorted = i64m(2, &[0, 1, 1, 0]);
    let one = run_kernel(boxing("SerializeSparse", Float, Str), vec![sorted.clone(), vals.clone(), shape.clone()], 1)
        .unwrap()
        .remove(0);
    let e = run_kernel(boxing("DeserializeSparse", Int32, Str), vec![one.clone()], 3);
    assert_err(e.unwrap_err(), Code::InvalidArgument, "Requested SparseTensor of type int32");
    let rank1 = run_kernel(
        boxing("SerializeSparse", Float, Str),
        vec![i64m(1, &[0]), Tensor::new(vec![1], vec![1.0f32]).unwrap(), Tensor::new(vec![1], vec![3i64]).unwrap()],
        1,
    )
    .unwrap()
    .remove(0);
    let (a, b) = (one.as_slice::<Vec<u8>>().unwrap(), rank1.as_slice::<Vec<u8>>().unwrap());
    let mixed = Tensor::new(vec![2, 3], [a, b].concat()).unwrap();
    let e = run_kernel(boxing("DeserializeSparse", Float, Str), vec![mixed], 3);
    assert_err(e.unwrap_err(), Code::InvalidArgument, "Inconsistent shape across SparseTensors");
    let empty = Tensor::new(vec![0, 3], Vec::<Vec<u8>>::new()).unwrap();
    let e = run_kernel(boxing("DeserializeSparse", Float, Str), vec![empty], 3);
    assert_err(e.unwrap_err(), Code::InvalidArgument, "at least 1 serialized tensor");
    // A variant that is not a boxed tensor.
    let e = run_kernel(
        boxing("DeserializeSparse", Float, Variant),
        vec![Tensor::new(vec![3], vec![ferroflow_core::Variant::Empty; 3]).unwrap()],
        3,
    );
    assert_err(e.unwrap_err(), Code::InvalidArgument, "Could not get a tensor");
}

#[test]
fn counts_codecs_and_sparse_pairs_refuse_bad_input() {
    use ferroflow_core::DataType::{Float, Int32, Int64};
    let i64v = |v: &[i64]| Tensor::new(vec![v.len()], v.to_vec()).unwrap();
    let none = || Tensor::new(vec![0], Vec::<i64>::new()).unwrap();
    let count = |op: &str| {
        node(
            op,
            &[
                ("T", attr::ty(Int64)),
                ("output_type", attr::ty(Int64)),
                ("minlength", attr::int(-1)),
                ("maxlength", attr::int(-1)),
                ("binary_output", attr::bool(false)),
            ],
        )
    };
    let e = run_kernel(count("DenseCountSparseOutput"), vec![i64v(&[1, -2]), none()], 3).unwrap_err();
    assert_err(e, Code::InvalidArgument, "Input values must all be non-negative");
    let e = run_kernel(count("DenseCountSparseOutput"), vec![i64v(&[1, 2]), i64v(&[1])], 3).unwrap_err();
    assert_err(e, Code::InvalidArgument, "Weights and data must have the same shape");
    let e = run_kernel(count("SparseCountSparseOutput"), vec![i64m(1, &[5, 0]), i64v(&[1]), i64v(&[3, 3]), none()], 3)
        .unwrap_err();
    assert_err(e, Code::InvalidArgument, "Invalid index value at 0: dimension 0 has value 5");
    let e = run_kernel(count("RaggedCountSparseOutput"), vec![i64v(&[0, 3]), i64v(&[1, 2]), none()], 3).unwrap_err();
    assert_err(e, Code::InvalidArgument, "Splits must end with the number of values");
    // SparseSparseMaximum: one dense shape.
    let f = |v: &[f32]| Tensor::new(vec![v.len()], v.to_vec()).unwrap();
    let e = run_kernel(
        node("SparseSparseMaximum", &[("T", attr::ty(Float))]),
        vec![i64m(1, &[0, 0]), f(&[1.0]), i64v(&[2, 2]), i64m(1, &[0, 0]), f(&[1.0]), i64v(&[2, 3])],
        2,
    )
    .unwrap_err();
    assert_err(e, Code::InvalidArgument, "Operands' shapes do not match");
    // ParseTensor: a TensorProto of the requested type.
    let parse = |t: DataTypeAlias, s: Vec<u8>| {
        run_kernel(node("ParseTensor", &[("out_type", attr::ty(t))]), vec![Tensor::scalar(s)], 1)
    };
    let e = parse(Int32, vec![0xff, 0xff, 0xff]).unwrap_err();
    assert_err(e, Code::InvalidArgument, "Could not parse `serialized` as TensorProto");
    let bytes = ferroflow_kernels::io::tensor_codec::serialize_tensor(&f(&[1.0, 2.0])).unwrap();
    let e = parse(Int32, bytes.clone()).unwrap_err();
    assert_err(e, Code::InvalidArgument, "Type mismatch between parsed tensor (float) and dtype (int32)");
    assert_eq!(parse(Float, bytes).unwrap()[0], f(&[1.0, 2.0]));
    // ApproxTopK: k within the reduction dimension.
    let approx = node(
        "ApproxTopK",
        &[
            ("T", attr::ty(Float)),
            ("k", attr::int(4)),
            ("reduction_dimension", attr::int(-1)),
            ("is_max_k", attr::bool(true)),
        ],
    );
    let e = run_kernel(approx, vec![f(&[1.0, 2.0, 3.0])], 2).unwrap_err();
    assert_err(e, Code::InvalidArgument, "k (4) must be at most the size of the reduction dimension (3)");
    // SparseSliceGrad: every output entry must come from the input.
    let e = run_kernel(
        node("SparseSliceGrad", &[("T", attr::ty(Float))]),
        vec![f(&[1.0]), i64m(1, &[0, 0]), i64v(&[0, 0]), i64m(1, &[1, 1])],
        1,
    )
    .unwrap_err();
    assert_err(e, Code::InvalidArgument, "aren't all propagated");
}

type DataTypeAlias = ferroflow_core::DataType;
