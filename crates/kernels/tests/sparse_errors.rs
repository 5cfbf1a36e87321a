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
