//! Which buffers of 1 MiB or more a kernel allocates outside the fallible allocation path
//! (`ferroflow_core::alloc`, which checks the memory budget and reserves with
//! `try_reserve`): the test binary's allocator notes every large allocation made while that
//! path is not reserving exactly those bytes on the allocating thread. Each op here runs on
//! inputs of 16 MiB, as the ops of a real model do; the outputs (and the large scratch) of
//! each must come through the path.
//!
//! This binary runs its one test alone: the notes are process-wide (kernels allocate on the
//! thread pool's threads).

use std::sync::atomic::{AtomicUsize, Ordering};

use ferroflow_core::proto::AttrValue;
use ferroflow_core::WatchedAlloc;
use ferroflow_core::{attr, DataType, Tensor};
use ferroflow_kernels::testutil::{conv_node, node, pool_node, run_kernel, seeded_f32};

/// Allocations from this size on are audited (the matrix product's packing buffers, sized
/// by the cache blocking, and budget-checked hash tables are marked `ADMITTED_ANY`).
const LARGE: usize = 1 << 20;

static BYPASSED: AtomicUsize = AtomicUsize::new(0);
static LARGEST_BYPASS: AtomicUsize = AtomicUsize::new(0);

fn note(size: usize) {
    let admitted = ferroflow_core::alloc::admitting();
    if size >= LARGE && admitted != size && admitted != ferroflow_core::alloc::ADMITTED_ANY {
        BYPASSED.fetch_add(1, Ordering::Relaxed);
        LARGEST_BYPASS.fetch_max(size, Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: WatchedAlloc = WatchedAlloc::allocations(note);

fn ty(k: &'static str, d: DataType) -> (&'static str, AttrValue) {
    (k, attr::ty(d))
}

/// One op on its inputs, and the outputs to fetch.
struct Case {
    name: String,
    node: ferroflow_core::proto::NodeDef,
    inputs: Vec<Tensor>,
    outs: usize,
}

fn case(name: &str, op: &str, attrs: &[(&str, AttrValue)], inputs: Vec<Tensor>, outs: usize) -> Case {
    Case { name: name.into(), node: node(op, attrs), inputs, outs }
}

/// A float NHWC batch norm's attrs, in training or inference mode.
fn bn_attrs(training: bool) -> [(&'static str, AttrValue); 5] {
    [
        ty("T", DataType::Float),
        ty("U", DataType::Float),
        ("epsilon", attr::float(0.001)),
        ("is_training", attr::bool(training)),
        ("data_format", attr::string("NHWC")),
    ]
}

fn f(dims: &[usize], seed: u64) -> Tensor {
    seeded_f32(dims, seed)
}

fn cases() -> Vec<Case> {
    use DataType::{Float, Int32};
    let t = || [ty("T", Float)];
    let x = || f(&[2048, 2048], 1);
    let y = || f(&[2048, 2048], 2);
    let img = || f(&[4, 128, 128, 64], 3);
    let mut v = Vec::new();
    for op in [
        "Exp",
        "Log",
        "Tanh",
        "Sigmoid",
        "Relu",
        "Relu6",
        "Elu",
        "Selu",
        "Softplus",
        "Sqrt",
        "Rsqrt",
        "Square",
        "Neg",
        "Abs",
        "Floor",
        "Erf",
        "Sign",
        "Reciprocal",
        "Identity",
        "ZerosLike",
        "OnesLike",
        "Softmax",
        "LogSoftmax",
    ] {
        v.push(case(op, op, &t(), vec![x()], 1));
    }
    for op in [
        "AddV2",
        "Sub",
        "Mul",
        "RealDiv",
        "Maximum",
        "Minimum",
        "SquaredDifference",
        "Pow",
        "Greater",
        "Equal",
        "ReluGrad",
        "Relu6Grad",
        "SigmoidGrad",
        "TanhGrad",
        "BiasAdd",
    ] {
        let b = if op == "BiasAdd" { f(&[2048], 2) } else { y() };
        let attrs = [ty("T", Float), ("data_format", attr::string("NHWC"))];
        v.push(case(op, op, &attrs, vec![x(), b], 1));
    }
    v.push(case("AddV2 broadcast", "AddV2", &t(), vec![x(), f(&[2048], 2)], 1));
    v.push(case("Cast", "Cast", &[ty("SrcT", Float), ty("DstT", DataType::Double)], vec![x()], 1));
    v.push(case("AddN", "AddN", &[ty("T", Float), ("N", attr::int(3))], vec![x(), y(), x()], 1));
    let red = [ty("T", Float), ty("Tidx", Int32), ("keep_dims", attr::bool(false))];
    for op in ["Sum", "Mean", "Max", "Prod"] {
        v.push(case(op, op, &red, vec![img(), Tensor::vec(vec![1i32, 2])], 1));
    }
    let bias = [ty("T", Float), ("data_format", attr::string("NHWC"))];
    v.push(case("BiasAddGrad", "BiasAddGrad", &bias, vec![img()], 1));
    let mm = [ty("T", Float), ("transpose_a", attr::bool(false)), ("transpose_b", attr::bool(false))];
    v.push(case("MatMul", "MatMul", &mm, vec![x(), y()], 1));
    let bmm = [ty("T", Float), ("adj_x", attr::bool(false)), ("adj_y", attr::bool(true))];
    v.push(case("BatchMatMulV2", "BatchMatMulV2", &bmm, vec![f(&[16, 512, 512], 1), f(&[16, 512, 512], 2)], 1));
    let perm = Tensor::vec(vec![0i32, 3, 1, 2]);
    v.push(case("Transpose", "Transpose", &[ty("T", Float), ty("Tperm", Int32)], vec![img(), perm], 1));
    let concat = [ty("T", Float), ("N", attr::int(2)), ty("Tidx", Int32)];
    v.push(case("ConcatV2", "ConcatV2", &concat, vec![x(), y(), Tensor::scalar(1i32)], 1));
    v.push(case("Pack", "Pack", &[ty("T", Float), ("N", attr::int(2)), ("axis", attr::int(0))], vec![x(), y()], 1));
    let split = [ty("T", Float), ("num_split", attr::int(2))];
    v.push(case("Split", "Split", &split, vec![Tensor::scalar(1i32), img()], 2));
    let slice = [ty("T", Float), ty("Index", Int32)];
    let (b, s) = (Tensor::vec(vec![0i32, 1, 1, 0]), Tensor::vec(vec![4i32, 126, 126, 64]));
    v.push(case("Slice", "Slice", &slice, vec![img(), b, s], 1));
    let pad = [ty("T", Float), ty("Tpaddings", Int32)];
    let p = Tensor::new(vec![4usize, 2], vec![0i32, 0, 1, 1, 1, 1, 0, 0]).unwrap();
    v.push(case("Pad", "Pad", &pad, vec![img(), p], 1));
    let gather = [ty("Tparams", Float), ty("Tindices", Int32), ty("Taxis", Int32), ("batch_dims", attr::int(0))];
    let idx = Tensor::vec((0..2048).rev().collect::<Vec<i32>>());
    v.push(case("GatherV2", "GatherV2", &gather, vec![x(), idx.clone(), Tensor::scalar(0i32)], 1));
    let seg = [ty("T", Float), ty("Tindices", Int32), ty("Tnumsegments", Int32)];
    let ids = Tensor::vec((0..2048).map(|i| i % 1024).collect::<Vec<i32>>());
    v.push(case("UnsortedSegmentSum", "UnsortedSegmentSum", &seg, vec![x(), ids, Tensor::scalar(1024i32)], 1));
    let cum = [ty("T", Float), ty("Tidx", Int32), ("exclusive", attr::bool(false)), ("reverse", attr::bool(false))];
    v.push(case("Cumsum", "Cumsum", &cum, vec![x(), Tensor::scalar(1i32)], 1));
    let sel = t();
    let cond = Tensor::new(vec![2048usize, 2048], (0..1 << 22).map(|i| i % 3 == 0).collect::<Vec<_>>()).unwrap();
    v.push(case("SelectV2", "SelectV2", &sel, vec![cond, x(), y()], 1));
    let labels = f(&[2048, 2048], 9);
    v.push(case("SoftmaxCrossEntropyWithLogits", "SoftmaxCrossEntropyWithLogits", &t(), vec![x(), labels], 2));
    let sparse = [ty("T", Float), ty("Tlabels", Int32)];
    let lab = Tensor::vec((0..2048).collect::<Vec<i32>>());
    v.push(case(
        "SparseSoftmaxCrossEntropyWithLogits",
        "SparseSoftmaxCrossEntropyWithLogits",
        &sparse,
        vec![x(), lab],
        2,
    ));
    v.push(case("L2Loss", "L2Loss", &t(), vec![x()], 1));
    let mut conv = Vec::new();
    let filt = f(&[3, 3, 64, 64], 4);
    conv.push(("Conv2D", conv_node("Conv2D", Float, &[1, 1, 1, 1], "SAME"), vec![img(), filt.clone()]));
    let sizes = Tensor::vec(vec![4i32, 128, 128, 64]);
    let n = conv_node("Conv2DBackpropInput", Float, &[1, 1, 1, 1], "SAME");
    conv.push(("Conv2DBackpropInput", n, vec![sizes, filt.clone(), img()]));
    let n = conv_node("Conv2DBackpropFilter", Float, &[1, 1, 1, 1], "SAME");
    conv.push(("Conv2DBackpropFilter", n, vec![img(), Tensor::vec(vec![3i32, 3, 64, 64]), img()]));
    let dw = f(&[3, 3, 64, 1], 5);
    let n = conv_node("DepthwiseConv2dNative", Float, &[1, 1, 1, 1], "SAME");
    conv.push(("DepthwiseConv2dNative", n, vec![img(), dw.clone()]));
    let n = conv_node("DepthwiseConv2dNativeBackpropInput", Float, &[1, 1, 1, 1], "SAME");
    conv.push(("DepthwiseConv2dNativeBackpropInput", n, vec![Tensor::vec(vec![4i32, 128, 128, 64]), dw, img()]));
    let n = conv_node("DepthwiseConv2dNativeBackpropFilter", Float, &[1, 1, 1, 1], "SAME");
    conv.push(("DepthwiseConv2dNativeBackpropFilter", n, vec![img(), Tensor::vec(vec![3i32, 3, 64, 1]), img()]));
    for (name, n, inputs) in conv {
        v.push(Case { name: name.into(), node: n, inputs, outs: 1 });
    }
    for op in ["MaxPool", "AvgPool"] {
        v.push(Case { name: op.into(), node: pool_node(op, Float, 2, 2, "VALID"), inputs: vec![img()], outs: 1 });
    }
    let pooled = f(&[4, 64, 64, 64], 6);
    let n = pool_node("MaxPoolGrad", Float, 2, 2, "VALID");
    let mp = run_kernel(pool_node("MaxPool", Float, 2, 2, "VALID"), vec![img()], 1).unwrap().remove(0);
    v.push(Case { name: "MaxPoolGrad".into(), node: n, inputs: vec![img(), mp, pooled.clone()], outs: 1 });
    let n = pool_node("AvgPoolGrad", Float, 2, 2, "VALID");
    v.push(Case {
        name: "AvgPoolGrad".into(),
        node: n,
        inputs: vec![Tensor::vec(vec![4i32, 128, 128, 64]), pooled],
        outs: 1,
    });
    let bn = bn_attrs(true);
    let c = || f(&[64], 7);
    let empty = || Tensor::vec(Vec::<f32>::new());
    v.push(case("FusedBatchNormV3", "FusedBatchNormV3", &bn, vec![img(), c(), c(), empty(), empty()], 6));
    let pos = || Tensor::vec(vec![0.5f32; 64]);
    v.push(case("FusedBatchNormGradV3", "FusedBatchNormGradV3", &bn, vec![img(), img(), c(), c(), pos(), c()], 5));
    v.extend(more_cases());
    v
}

/// Indexing, images, sorting and the rest of a model's common ops.
fn more_cases() -> Vec<Case> {
    use DataType::{Float, Int32, Int64};
    let x = || f(&[2048, 2048], 1);
    let img = || f(&[4, 128, 128, 64], 3);
    let mut v = Vec::new();
    let mm = [ty("T", Float), ("transpose_a", attr::bool(true)), ("transpose_b", attr::bool(false))];
    v.push(case("MatMul transposed", "MatMul", &mm, vec![f(&[2048, 2048], 1), f(&[2048, 2048], 2)], 1));
    let ss = [
        ty("T", Float),
        ty("Index", Int32),
        ("begin_mask", attr::int(0)),
        ("end_mask", attr::int(0)),
        ("ellipsis_mask", attr::int(0)),
        ("new_axis_mask", attr::int(0)),
        ("shrink_axis_mask", attr::int(0)),
    ];
    let (b, e, st) = (Tensor::vec(vec![0i32, 1]), Tensor::vec(vec![2048i32, 2047]), Tensor::vec(vec![1i32, 1]));
    v.push(case("StridedSlice", "StridedSlice", &ss, vec![x(), b.clone(), e.clone(), st.clone()], 1));
    let dy = f(&[2048, 2046], 2);
    let shape = Tensor::vec(vec![2048i32, 2048]);
    v.push(case("StridedSliceGrad", "StridedSliceGrad", &ss, vec![shape, b, e, st, dy], 1));
    let tile = [ty("T", Float), ty("Tmultiples", Int32)];
    v.push(case("Tile", "Tile", &tile, vec![f(&[1024, 2048], 1), Tensor::vec(vec![2i32, 1])], 1));
    let rev = [ty("T", Float), ty("Tidx", Int32)];
    v.push(case("ReverseV2", "ReverseV2", &rev, vec![x(), Tensor::vec(vec![1i32])], 1));
    let topk = [ty("T", Float), ("sorted", attr::bool(true)), ty("Tk", Int32), ty("index_type", Int32)];
    v.push(case("TopKV2", "TopKV2", &topk, vec![x(), Tensor::scalar(512i32)], 2));
    let arg = [ty("T", Float), ty("Tidx", Int32), ty("output_type", Int64)];
    v.push(case("ArgMax", "ArgMax", &arg, vec![x(), Tensor::scalar(1i32)], 1));
    let onehot = [ty("T", Float), ty("TI", Int32), ("axis", attr::int(-1))];
    let ids = Tensor::vec((0..2048).collect::<Vec<i32>>());
    let ins = vec![ids, Tensor::scalar(2048i32), Tensor::scalar(1.0f32), Tensor::scalar(0.0f32)];
    v.push(case("OneHot", "OneHot", &onehot, ins, 1));
    let resize = [ty("T", Float), ("align_corners", attr::bool(false)), ("half_pixel_centers", attr::bool(true))];
    v.push(case("ResizeBilinear", "ResizeBilinear", &resize, vec![img(), Tensor::vec(vec![192i32, 192])], 1));
    let grad = f(&[4, 192, 192, 64], 8);
    v.push(case("ResizeBilinearGrad", "ResizeBilinearGrad", &resize, vec![grad, img()], 1));
    v.push(case(
        "ResizeNearestNeighbor",
        "ResizeNearestNeighbor",
        &resize,
        vec![img(), Tensor::vec(vec![192i32, 192])],
        1,
    ));
    let ein = [ty("T", Float), ("N", attr::int(2)), ("equation", attr::string("bij,bjk->bik"))];
    v.push(case("Einsum", "Einsum", &ein, vec![f(&[16, 512, 512], 1), f(&[16, 512, 512], 2)], 1));
    let mask = Tensor::new(vec![2048usize, 2048], (0..1 << 22).map(|i| i % 2 == 0).collect::<Vec<_>>()).unwrap();
    v.push(case("Where", "Where", &[ty("T", DataType::Bool)], vec![mask], 1));
    let random = [ty("T", Int32), ty("dtype", Float), ("seed", attr::int(1)), ("seed2", attr::int(2))];
    v.push(case("RandomUniform", "RandomUniform", &random, vec![Tensor::vec(vec![2048i32, 2048])], 1));
    let seg = [ty("T", Float), ty("Tidx", Int32), ty("Tsegmentids", Int32)];
    let rows = Tensor::vec((0..2048).collect::<Vec<i32>>());
    let segs = Tensor::vec((0..2048).map(|i| i / 2).collect::<Vec<i32>>());
    v.push(case("SparseSegmentMean", "SparseSegmentMean", &seg, vec![x(), rows, segs], 1));
    let clip = [ty("T", Float)];
    v.push(case("ClipByValue", "ClipByValue", &clip, vec![x(), Tensor::scalar(-0.5f32), Tensor::scalar(0.5f32)], 1));
    let lrelu = [ty("T", Float), ("alpha", attr::float(0.2))];
    v.push(case("LeakyRelu", "LeakyRelu", &lrelu, vec![x()], 1));
    let sq = [ty("T", Float), ty("Tidx", Int32), ("keep_dims", attr::bool(true))];
    v.push(case("Sum keep_dims", "Sum", &sq, vec![x(), Tensor::vec(vec![0i32])], 1));
    let mirror = [ty("T", Float), ty("Tpaddings", Int32), ("mode", attr::string("REFLECT"))];
    let p = Tensor::new(vec![2usize, 2], vec![1i32, 1, 1, 1]).unwrap();
    v.push(case("MirrorPad", "MirrorPad", &mirror, vec![x(), p], 1));
    let dyn_stitch = [ty("T", Float), ("N", attr::int(1))];
    let idx = Tensor::vec((0..2048).rev().collect::<Vec<i32>>());
    v.push(case("DynamicStitch", "DynamicStitch", &dyn_stitch, vec![idx, x()], 1));
    let conv1x1 = conv_node("Conv2D", Float, &[1, 1, 1, 1], "VALID");
    v.push(Case { name: "Conv2D 1x1".into(), node: conv1x1, inputs: vec![img(), f(&[1, 1, 64, 128], 4)], outs: 1 });
    let strided = conv_node("Conv2D", Float, &[1, 2, 2, 1], "SAME");
    v.push(Case { name: "Conv2D 3x3 s2".into(), node: strided, inputs: vec![img(), f(&[3, 3, 64, 128], 4)], outs: 1 });
    let unique = [ty("T", Int32), ty("out_idx", Int32)];
    let ids = Tensor::vec((0..1i32 << 22).map(|i| i % 1000).collect::<Vec<i32>>());
    v.push(case("Unique", "Unique", &unique, vec![ids], 2));
    let lrn = [
        ty("T", Float),
        ("depth_radius", attr::int(2)),
        ("bias", attr::float(1.0)),
        ("alpha", attr::float(1e-4)),
        ("beta", attr::float(0.75)),
    ];
    v.push(case("LRN", "LRN", &lrn, vec![img()], 1));
    let infer = bn_attrs(false);
    let c = || f(&[64], 7);
    let var = || Tensor::vec(vec![0.5f32; 64]);
    v.push(case("FusedBatchNormV3 inference", "FusedBatchNormV3", &infer, vec![img(), c(), c(), c(), var()], 6));
    let hash = [("num_buckets", attr::int(1000))];
    let strs = Tensor::vec((0..1 << 16).map(|i: i32| format!("token{i}").into_bytes()).collect::<Vec<_>>());
    v.push(case("StringToHashBucketFast", "StringToHashBucketFast", &hash, vec![strs], 1));
    v
}

#[test]
fn large_buffers_come_through_the_allocation_path() {
    let mut bypassed = Vec::new();
    for c in cases() {
        BYPASSED.store(0, Ordering::Relaxed);
        LARGEST_BYPASS.store(0, Ordering::Relaxed);
        let out = run_kernel(c.node, c.inputs, c.outs);
        let (n, largest) = (BYPASSED.load(Ordering::Relaxed), LARGEST_BYPASS.load(Ordering::Relaxed));
        if let Err(e) = out {
            bypassed.push(format!("{}: {e}", c.name));
        } else if n > 0 {
            bypassed.push(format!("{} ({n} buffers, largest {largest} bytes)", c.name));
        }
    }
    assert!(bypassed.is_empty(), "large buffers outside ferroflow_core::alloc:\n{}", bypassed.join("\n"));
}
