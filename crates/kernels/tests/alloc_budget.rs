//! Ops whose output is not bounded by the size of their inputs (a shape or size input, a
//! count, multiples, paddings, a depth, a batch broadcast, a width or separator attr) answer
//! RESOURCE_EXHAUSTED for an output over the task's memory budget instead of aborting the
//! process: their buffers come from `ferroflow_core::alloc` (or are checked against the
//! budget first). Each request here is of a few GiB at most, so without the budget it would
//! be allocated (and the test would fail) rather than crash the machine.
//!
//! The budget is process-wide: this binary runs alone and every test sets the same one.

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, Code, DataType, Status, Tensor};
use ferroflow_kernels::testutil::{conv_node, node, run_kernel};

/// This binary's memory budget.
const BUDGET: u64 = 128 << 20;

fn run_node(n: ferroflow_core::proto::NodeDef, inputs: Vec<Tensor>, outs: usize) -> Result<Vec<Tensor>, Status> {
    ferroflow_core::set_memory_limit(BUDGET);
    run_kernel(n, inputs, outs)
}

fn run(op: &str, attrs: &[(&str, AttrValue)], inputs: Vec<Tensor>, outs: usize) -> Result<Vec<Tensor>, Status> {
    run_node(node(op, attrs), inputs, outs)
}

/// The op failed with RESOURCE_EXHAUSTED, as an allocation over the budget does.
fn exhausted(r: Result<Vec<Tensor>, Status>, what: &str) {
    let e = r.expect_err(what);
    assert_eq!(e.code, Code::ResourceExhausted, "{what}: {e}");
    assert!(e.message.contains("OOM when allocating"), "{what}: {e}");
}

fn f32v(v: &[f32]) -> Tensor {
    Tensor::new(vec![v.len()], v.to_vec()).unwrap()
}

fn i64m(rows: usize, v: &[i64]) -> Tensor {
    Tensor::new(vec![rows, v.len().checked_div(rows).unwrap_or(0)], v.to_vec()).unwrap()
}

fn ty(k: &'static str, d: DataType) -> (&'static str, AttrValue) {
    (k, attr::ty(d))
}

#[test]
fn repeats_paddings_and_fills() {
    use DataType::{Float, Int32};
    let one = Tensor::new(vec![1usize, 1], vec![1.0f32]).unwrap();
    let tile = [ty("T", Float), ty("Tmultiples", Int32)];
    exhausted(run("Tile", &tile, vec![one.clone(), Tensor::vec(vec![1i32 << 14, 1 << 14])], 1), "Tile");
    assert_eq!(run("Tile", &tile, vec![one, Tensor::vec(vec![2i32, 3])], 1).unwrap()[0].dims(), &[2, 3]);
    let pad = [ty("T", Float), ty("Tpaddings", Int32)];
    let paddings = Tensor::new(vec![1usize, 2], vec![0i32, 1 << 28]).unwrap();
    exhausted(run("Pad", &pad, vec![f32v(&[1.0]), paddings.clone()], 1), "Pad");
    exhausted(run("PadV2", &pad, vec![f32v(&[1.0]), paddings, Tensor::scalar(7.0f32)], 1), "PadV2");
    let fill = [ty("T", Float), ty("index_type", Int32)];
    exhausted(run("Fill", &fill, vec![Tensor::vec(vec![1i32 << 28]), Tensor::scalar(1.0f32)], 1), "Fill");
    let bcast = [ty("T", Float), ty("Tidx", Int32)];
    exhausted(run("BroadcastTo", &bcast, vec![f32v(&[1.0]), Tensor::vec(vec![1i32 << 28])], 1), "BroadcastTo");
}

#[test]
fn depths_counts_and_ranges() {
    use DataType::{Float, Int32, Int64};
    let one_hot = [ty("T", Float), ty("TI", Int32), ("axis", attr::int(-1))];
    let ins =
        vec![Tensor::vec(vec![0i32, 1]), Tensor::scalar(1i32 << 27), Tensor::scalar(1.0f32), Tensor::scalar(0.0f32)];
    exhausted(run("OneHot", &one_hot, ins, 1), "OneHot");
    let range = [ty("Tidx", Int64)];
    exhausted(
        run("Range", &range, vec![Tensor::scalar(0i64), Tensor::scalar(1i64 << 28), Tensor::scalar(1i64)], 1),
        "Range",
    );
    let lin = [ty("T", Float), ty("Tidx", Int32)];
    let ins = vec![Tensor::scalar(0.0f32), Tensor::scalar(1.0f32), Tensor::scalar(1i32 << 28)];
    exhausted(run("LinSpace", &lin, ins, 1), "LinSpace");
    let hist = [ty("T", Float), ty("dtype", Int32)];
    let ins = vec![f32v(&[0.5]), f32v(&[0.0, 1.0]), Tensor::scalar(1i32 << 28)];
    exhausted(run("HistogramFixedWidth", &hist, ins, 1), "HistogramFixedWidth");
    exhausted(
        run("Bincount", &[], vec![Tensor::vec(vec![1i32]), Tensor::scalar(1i32 << 28), f32v(&[])], 1),
        "Bincount",
    );
    // Padding the selected boxes to a huge max_output_size.
    let nms = [ty("T", Float), ty("T_threshold", Float), ("pad_to_max_output_size", attr::bool(true))];
    let boxes = Tensor::new(vec![1usize, 4], vec![0.0f32, 0., 1., 1.]).unwrap();
    let ins = vec![boxes, f32v(&[0.9]), Tensor::scalar(i32::MAX), Tensor::scalar(0.5f32), Tensor::scalar(0.0f32)];
    exhausted(run("NonMaxSuppressionV4", &nms, ins, 2), "NonMaxSuppressionV4");
}

#[test]
fn scatters_into_a_shape() {
    use DataType::{Float, Int32, String};
    let scatter = [ty("T", Float), ty("Tindices", Int32), ("bad_indices_policy", attr::string(""))];
    let ins = vec![Tensor::new(vec![1usize, 1], vec![0i32]).unwrap(), f32v(&[2.0]), Tensor::vec(vec![1i32 << 28])];
    exhausted(run("ScatterNd", &scatter, ins, 1), "ScatterNd");
    let ins = vec![i64m(1, &[0]), Tensor::vec(vec![1i64 << 28]), f32v(&[1.0]), Tensor::scalar(0.0f32)];
    exhausted(run("SparseToDense", &[("validate_indices", attr::bool(true))], ins, 1), "SparseToDense");
    let ins = vec![f32v(&[1.0]), Tensor::vec(vec![0i32]), Tensor::scalar(1i32 << 28)];
    exhausted(run("UnsortedSegmentSum", &[], ins, 1), "UnsortedSegmentSum");
    // A dense shape's row count sizes per-row bookkeeping, not only the output.
    let empty = Tensor::new(vec![0usize, 2], Vec::<i64>::new()).unwrap();
    let ins = vec![empty.clone(), f32v(&[]), Tensor::vec(vec![1i64 << 28, 1]), Tensor::scalar(0.0f32)];
    exhausted(run("SparseFillEmptyRows", &[], ins, 4), "SparseFillEmptyRows");
    let ins = vec![empty, f32v(&[]), Tensor::vec(vec![1i64 << 28, 1])];
    let serialize = [ty("T", Float), ty("out_type", String)];
    exhausted(run("SerializeManySparse", &serialize, ins, 1), "SerializeManySparse");
    // SparseCrossV2's batch comes from the shape input: 2^40 rows of one feature.
    let cross =
        [("N", attr::int(1)), ("sparse_types", attr::list_type(&[String])), ("dense_types", attr::list_type(&[]))];
    let ins = vec![
        i64m(1, &[0, 0]),
        Tensor::vec(vec![b"a".to_vec()]),
        Tensor::vec(vec![1i64 << 40, 1]),
        Tensor::scalar(b"_X_".to_vec()),
    ];
    exhausted(run("SparseCrossV2", &cross, ins, 3), "SparseCrossV2");
}

#[test]
fn resizes_to_a_size_input() {
    use DataType::Float;
    let a = [ty("T", Float), ("align_corners", attr::bool(false)), ("half_pixel_centers", attr::bool(false))];
    let img = |n: usize| Tensor::new(vec![n, 2, 2, 1], vec![0.5f32; n * 4]).unwrap();
    let huge = Tensor::vec(vec![1i32 << 14, 1 << 14]);
    let most = Tensor::vec(vec![i32::MAX, i32::MAX]);
    for op in ["ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea"] {
        exhausted(run(op, &a, vec![img(1), huge.clone()], 1), op);
        // An empty batch makes an empty output, and no interpolation tables of 2^31 rows.
        let out = run(op, &a, vec![img(0), most.clone()], 1).unwrap();
        assert_eq!(out[0].dims(), &[0, i32::MAX as usize, i32::MAX as usize, 1], "{op}");
    }
}

#[test]
fn strings_grown_by_attrs() {
    use DataType::Float;
    // Every float padded to 4 KiB: 256 MiB of strings from a 256 KiB input.
    let a = [ty("T", Float), ("width", attr::int(4096)), ("fill", attr::string(" "))];
    let x = Tensor::new(vec![1usize << 16], vec![1.5f32; 1 << 16]).unwrap();
    exhausted(run("AsString", &a, vec![x], 1), "AsString");
    let small = run("AsString", &a, vec![f32v(&[1.5])], 1).unwrap();
    assert_eq!(small[0].as_slice::<Vec<u8>>().unwrap()[0].len(), 4096);
    // A 64 KiB separator between 2^12 empty strings joined into one.
    let sep = "-".repeat(1 << 16);
    let a = [("keep_dims", attr::bool(false)), ("separator", attr::string(&sep))];
    let x = Tensor::new(vec![1usize << 12], vec![Vec::<u8>::new(); 1 << 12]).unwrap();
    exhausted(run("ReduceJoin", &a, vec![x, Tensor::vec(vec![0i32])], 1), "ReduceJoin");
}

#[test]
fn linear_algebra_and_nn_sizes() {
    use DataType::{Double, Float};
    // Diag and a repeated einsum output label square a vector.
    let v = Tensor::new(vec![1usize << 14], vec![1.0f32; 1 << 14]).unwrap();
    exhausted(run("Diag", &[ty("T", Float)], vec![v.clone()], 1), "Diag");
    let ein = [ty("T", Float), ("N", attr::int(1)), ("equation", attr::string("i->ii"))];
    exhausted(run("Einsum", &ein, vec![v], 1), "Einsum");
    // Labels broadcast against logits: [1, 2^14] x [2^14, 1].
    let logits = Tensor::new(vec![1usize, 1 << 14], vec![0.0f32; 1 << 14]).unwrap();
    let labels = Tensor::new(vec![1usize << 14, 1], vec![1.0f32; 1 << 14]).unwrap();
    exhausted(run("SoftmaxCrossEntropyWithLogits", &[ty("T", Float)], vec![logits, labels], 2), "Xent");
    // Batches of empty matrices broadcast to 2^60 batches.
    let a = Tensor::new(vec![1usize << 30, 1, 0, 0], Vec::<f64>::new()).unwrap();
    let b = Tensor::new(vec![1usize, 1 << 30, 0, 0], Vec::<f64>::new()).unwrap();
    let tri = [ty("T", Double), ("lower", attr::bool(true)), ("adjoint", attr::bool(false))];
    exhausted(run("MatrixTriangularSolve", &tri, vec![a, b], 1), "MatrixTriangularSolve");
    // A full QR of a tall column: q is 2^13 x 2^13.
    let col = Tensor::new(vec![1usize << 13, 1], vec![1.0f32; 1 << 13]).unwrap();
    exhausted(run("Qr", &[ty("T", Float), ("full_matrices", attr::bool(true))], vec![col], 2), "Qr");
    // A filter gradient sized by filter_sizes.
    let x = Tensor::new(vec![1usize, 2, 2, 1], vec![1.0f32; 4]).unwrap();
    let sizes = Tensor::vec(vec![1i32 << 14, 1 << 14, 1, 1]);
    let n = conv_node("Conv2DBackpropFilter", Float, &[1, 1, 1, 1], "SAME");
    let r = run_node(n, vec![x.clone(), sizes, x.clone()], 1);
    exhausted(r, "Conv2DBackpropFilter");
}
