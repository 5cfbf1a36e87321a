//! Sparse accumulator kernels driven directly: apply/take, MEAN per index vs SUM, TensorFlow's
//! merge of unsorted and repeated indices, stale gradients, TensorFlow's shape errors, the
//! asynchronous take (blocking, cancelled, deadline) and golden values from TensorFlow 2.21
//! (`scripts/golden/sparse_accumulator.py` printed them; the numbers are committed here).

use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, half::f16, Code, DataType, Tensor, TensorType};

use ferroflow_kernels::data_flow::ConditionalAccumulator;
use ferroflow_kernels::testutil::{node, test_step};
use ferroflow_kernels::{create_kernel, CancelToken, OpContext, ResourceMgr, StepCtx, Value};

use super::accumulator::{done, run, start, step_with, still_waiting, Outcome};

struct SAcc {
    step: Arc<StepCtx>,
    handle: Value,
    dtype: DataType,
}

fn create_node(op: &str, dtype: DataType, shape: Option<&[i64]>, reduction: &str) -> NodeDef {
    node(
        op,
        &[
            ("dtype", attr::ty(dtype)),
            ("shape", attr::shape(shape)),
            ("container", attr::string("")),
            ("shared_name", attr::string("emb")),
            ("reduction_type", attr::string(reduction)),
        ],
    )
}

/// Runs a creating op and returns its handle output.
fn make(rm: &Arc<ResourceMgr>, n: NodeDef) -> Result<Value, ferroflow_core::Status> {
    let k = create_kernel(&n)?;
    let mut ctx = OpContext::new(Arc::new(n), vec![], 1, test_step(rm.clone()));
    k.compute(&mut ctx)?;
    Ok(ctx.take_outputs()?.remove(0))
}

impl SAcc {
    fn new(rm: &Arc<ResourceMgr>, dtype: DataType, shape: Option<&[i64]>, reduction: &str) -> SAcc {
        let handle = make(rm, create_node("SparseConditionalAccumulator", dtype, shape, reduction)).unwrap();
        SAcc { step: test_step(rm.clone()), handle, dtype }
    }
    fn apply_t(&self, local_step: i64, indices: Tensor, values: Tensor, shape: Option<Vec<i64>>) -> Outcome {
        let n = node(
            "SparseAccumulatorApplyGradient",
            &[("dtype", attr::ty(self.dtype)), ("has_known_shape", attr::bool(shape.is_some()))],
        );
        let ins = [
            self.handle.clone(),
            Value::Tensor(Tensor::scalar(local_step)),
            Value::Tensor(indices),
            Value::Tensor(values),
            Value::Tensor(Tensor::vec(shape.unwrap_or_default())),
        ];
        run(&self.step, n, ins.to_vec(), 0)
    }
    /// Applies rows of `width` values at `indices`.
    fn apply<T: TensorType>(&self, local_step: i64, indices: &[i64], width: usize, v: Vec<T>) -> Outcome {
        let values = Tensor::new(vec![indices.len(), width], v).unwrap();
        self.apply_t(local_step, Tensor::vec(indices.to_vec()), values, None)
    }
    fn take_on(&self, step: &Arc<StepCtx>, n: i32) -> Receiver<Outcome> {
        let k = node("SparseAccumulatorTakeGradient", &[("dtype", attr::ty(self.dtype))]);
        start(step, k, vec![self.handle.clone(), Value::Tensor(Tensor::scalar(n))], 3)
    }
    fn take(&self, n: i32) -> Receiver<Outcome> {
        self.take_on(&self.step, n)
    }
    fn num(&self) -> i32 {
        run(&self.step, node("AccumulatorNumAccumulated", &[]), vec![self.handle.clone()], 1).unwrap()[0]
            .scalar_value::<i32>()
            .unwrap()
    }
    fn set_step(&self, s: i64) {
        let ins = vec![self.handle.clone(), Value::Tensor(Tensor::scalar(s))];
        run(&self.step, node("AccumulatorSetGlobalStep", &[]), ins, 0).unwrap();
    }
}

/// (indices, values flattened, values dims, dense shape) of a take.
fn slices<T: TensorType + Copy>(o: Outcome) -> (Vec<i64>, Vec<T>, Vec<usize>, Vec<i64>) {
    let t = o.unwrap();
    assert_eq!(t.len(), 3);
    (
        t[0].as_slice::<i64>().unwrap().to_vec(),
        t[1].as_slice::<T>().unwrap().to_vec(),
        t[1].dims().to_vec(),
        t[2].as_slice::<i64>().unwrap().to_vec(),
    )
}

fn err(o: Outcome, code: Code, text: &str) {
    let e = o.unwrap_err();
    assert_eq!(e.code, code, "{e}");
    assert!(e.message.contains(text), "'{e}' lacks '{text}'");
}

#[test]
fn take_waits_then_returns_the_per_index_mean_of_the_union() {
    let rm = Arc::new(ResourceMgr::new());
    let a = SAcc::new(&rm, DataType::Float, Some(&[4, 2]), "MEAN");
    let acc = rm.lookup::<ConditionalAccumulator>("", "emb").unwrap();
    a.apply(0, &[0, 2], 2, vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let rx = a.take(2);
    still_waiting(&rx);
    assert_eq!(a.num(), 1);
    a.apply(0, &[2, 3], 2, vec![10.0f32, 20.0, 30.0, 40.0]).unwrap();
    // Index 2 had two gradients (mean of both); 0 and 3 one each (kept whole).
    let (i, v, d, s) = slices::<f32>(done(&rx));
    assert_eq!(i, [0, 2, 3]);
    assert_eq!(v, [1.0, 2.0, 6.5, 12.0, 30.0, 40.0]);
    assert_eq!((d, s), (vec![3, 2], vec![4, 2]));
    // The take reset the sum and advanced the global step.
    assert_eq!((a.num(), acc.global_step()), (0, 1));
    a.apply(1, &[1], 2, vec![5.0f32, 6.0]).unwrap();
    let (i, v, _, _) = slices::<f32>(done(&a.take(1)));
    assert_eq!((i, v), (vec![1], vec![5.0, 6.0]));
}

#[test]
fn sum_reduction_adds_without_dividing() {
    let rm = Arc::new(ResourceMgr::new());
    let a = SAcc::new(&rm, DataType::Double, Some(&[4, 2]), "SUM");
    a.apply(0, &[0, 2], 2, vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
    a.apply(0, &[2, 3], 2, vec![10.0f64, 20.0, 30.0, 40.0]).unwrap();
    let (i, v, _, s) = slices::<f64>(done(&a.take(2)));
    assert_eq!((i, s), (vec![0, 2, 3], vec![4, 2]));
    assert_eq!(v, [1.0, 2.0, 13.0, 24.0, 30.0, 40.0]);
}

#[test]
fn unsorted_and_repeated_indices_merge_as_tensorflow_does() {
    let rm = Arc::new(ResourceMgr::new());
    let a = SAcc::new(&rm, DataType::Float, Some(&[4, 2]), "MEAN");
    // TensorFlow merges in one pass assuming sorted lists: repeats are not combined.
    a.apply(0, &[3, 1, 3], 2, vec![1.0f32, 1.0, 2.0, 2.0, 3.0, 3.0]).unwrap();
    a.apply(0, &[1, 2], 2, vec![10.0f32, 10.0, 20.0, 20.0]).unwrap();
    let (i, v, _, _) = slices::<f32>(done(&a.take(2)));
    assert_eq!(i, [1, 2, 3, 1, 3]);
    assert_eq!(v, [10.0, 10.0, 20.0, 20.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]);
}

#[test]
fn stale_gradients_are_dropped_without_being_checked() {
    let rm = Arc::new(ResourceMgr::new());
    let a = SAcc::new(&rm, DataType::Float, Some(&[4, 2]), "MEAN");
    let acc = rm.lookup::<ConditionalAccumulator>("", "emb").unwrap();
    a.set_step(5);
    assert_eq!(acc.global_step(), 5);
    a.apply(4, &[1], 2, vec![100.0f32, 100.0]).unwrap();
    // Even a malformed stale gradient is dropped silently, as in TensorFlow.
    a.apply(4, &[99], 3, vec![0.0f32; 3]).unwrap();
    assert_eq!((a.num(), acc.stale_dropped()), (0, 2));
    a.apply(5, &[1], 2, vec![1.0f32, 3.0]).unwrap();
    a.apply(8, &[1], 2, vec![3.0f32, 5.0]).unwrap();
    let (i, v, _, _) = slices::<f32>(done(&a.take(2)));
    assert_eq!((i, v), (vec![1], vec![2.0, 4.0]));
    assert_eq!(acc.global_step(), 6);
}

#[test]
fn shape_errors_carry_tensorflows_messages_and_change_nothing() {
    let rm = Arc::new(ResourceMgr::new());
    let a = SAcc::new(&rm, DataType::Float, Some(&[4, 2]), "MEAN");
    let ia = Code::InvalidArgument;
    let v = |n: usize, w: usize| Tensor::new(vec![n, w], vec![1.0f32; n * w]).unwrap();
    let idx = |i: &[i64]| Tensor::vec(i.to_vec());
    err(a.apply_t(0, idx(&[0]), v(1, 2), Some(vec![3, 2])), ia, "Shape mismatch: expected shape dim 0 to be 4, got 3");
    err(a.apply_t(0, idx(&[0]), v(1, 2), Some(vec![4])), ia, "Shape mismatch: expected shape rank at least 2, got 1");
    err(
        a.apply_t(0, idx(&[0, 5]), v(2, 2), None),
        ia,
        "Shape mismatch: index of slice 1 exceeded limits of shape; index is 5 exceeded 4",
    );
    err(a.apply_t(0, idx(&[0]), v(1, 3), None), ia, "Shape mismatch: expected values dim 1 to be 2, got 3");
    err(a.apply_t(0, idx(&[0]), Tensor::vec(vec![1.0f32]), None), ia, "expected values rank at least 2, got 1");
    err(a.apply_t(0, idx(&[0, 1]), v(1, 2), None), ia, "Expected 2 non-empty input values, got 1");
    err(
        a.apply_t(0, Tensor::new(vec![1, 1], vec![0i64]).unwrap(), v(1, 2), None),
        ia,
        "Input indices should be vector",
    );
    err(a.apply_t(0, idx(&[]), Tensor::scalar(1.0f32), None), ia, "Values cannot be 0-dimensional.");
    let e = a.apply_t(0, idx(&[9]), v(1, 2), None).unwrap_err();
    assert!(e.message.contains("node 'test'") && e.message.contains("sparse accumulator 'emb'"), "{e}");
    assert_eq!(a.num(), 0);
    // Negative indices pass (TensorFlow checks only the upper bound).
    a.apply_t(0, idx(&[-1]), v(1, 2), None).unwrap();
    // Once something is accumulated, values must match its rank and row shape.
    let a2 = SAcc::new(&Arc::new(ResourceMgr::new()), DataType::Float, None, "MEAN");
    a2.apply_t(0, idx(&[0]), v(1, 2), None).unwrap();
    err(a2.apply_t(0, idx(&[1]), v(1, 3), None), ia, "Shape mismatch: expected values dim 1 to be 2, got 3");
    let r3 = Tensor::new(vec![1, 1, 2], vec![1.0f32; 2]).unwrap();
    err(a2.apply_t(0, idx(&[1]), r3, None), ia, "Shape mismatch: expected values rank 2, got 3");
    assert_eq!(a2.num(), 1);
    // An unknown first dimension bounds nothing.
    let a3 = SAcc::new(&Arc::new(ResourceMgr::new()), DataType::Float, Some(&[-1, 2]), "MEAN");
    a3.apply_t(0, idx(&[100]), v(1, 2), Some(vec![7, 2])).unwrap();
    let (i, _, _, s) = slices::<f32>(done(&a3.take(1)));
    assert_eq!((i, s), (vec![100], vec![-1, 2]));
}

#[test]
fn wrong_kind_dtype_and_arguments_are_invalid_argument() {
    let rm = Arc::new(ResourceMgr::new());
    let a = SAcc::new(&rm, DataType::Float, Some(&[4, 2]), "MEAN");
    let ia = Code::InvalidArgument;
    // TensorFlow registers the sparse accumulator for float16/32/64 only.
    let int32 = make(&rm, create_node("SparseConditionalAccumulator", DataType::Int32, Some(&[2]), "MEAN"));
    err(int32.map(|_| vec![]), ia, "registered: float16, float32, float64");
    // A dense apply on the sparse accumulator, a sparse take on a dense one.
    let ins = vec![a.handle.clone(), Value::Tensor(Tensor::scalar(0i64)), Value::Tensor(Tensor::vec(vec![1.0f32]))];
    let n = node("AccumulatorApplyGradient", &[("dtype", attr::ty(DataType::Float))]);
    err(run(&a.step, n, ins, 0), ia, "created by SparseConditionalAccumulator");
    let dense = make(&rm, create_node("ConditionalAccumulator", DataType::Float, Some(&[2]), "MEAN"));
    // Same shared name as the sparse one: refused, the kinds never mix.
    err(dense.map(|_| vec![]), ia, "already exists, created by SparseConditionalAccumulator");
    let rm2 = Arc::new(ResourceMgr::new());
    let d = make(&rm2, create_node("ConditionalAccumulator", DataType::Float, Some(&[2]), "MEAN")).unwrap();
    let k = node("SparseAccumulatorTakeGradient", &[("dtype", attr::ty(DataType::Float))]);
    let rx = start(&test_step(rm2), k, vec![d, Value::Tensor(Tensor::scalar(1i32))], 3);
    err(done(&rx), ia, "needs one created by SparseConditionalAccumulator");
    // Values of another dtype, num_required < 1.
    let a64 = SAcc { dtype: DataType::Double, ..SAcc::new(&rm, DataType::Float, None, "MEAN") };
    err(a64.apply(0, &[0], 1, vec![1.0f64]), ia, "holds float32 gradients");
    err(done(&a.take(0)), ia, "Argument num_required must be positive, but was 0");
}

#[test]
fn a_waiting_take_is_cancelled_with_the_step_or_ends_at_its_deadline() {
    let rm = Arc::new(ResourceMgr::new());
    let a = SAcc::new(&rm, DataType::Float, Some(&[4, 2]), "MEAN");
    let tok = CancelToken::new();
    a.apply(0, &[1], 2, vec![1.0f32, 1.0]).unwrap();
    let rx = a.take_on(&step_with(&rm, tok.clone(), None), 2);
    still_waiting(&rx);
    tok.cancel(ferroflow_core::Status::cancelled("step 3 was cancelled"));
    err(done(&rx), Code::Cancelled, "sparse accumulator 'emb'");
    // The gradient stays; the next take gets it with the new one.
    assert_eq!(a.num(), 1);
    a.apply(0, &[1], 2, vec![3.0f32, 3.0]).unwrap();
    let (_, v, _, _) = slices::<f32>(done(&a.take(2)));
    assert_eq!(v, [2.0, 2.0]);
    let step = step_with(&rm, CancelToken::new(), Some(Instant::now() + Duration::from_millis(30)));
    err(done(&a.take_on(&step, 1)), Code::DeadlineExceeded, "deadline");
}

// ---- golden values: TensorFlow 2.21, scripts/golden/sparse_accumulator.py ----

#[test]
fn golden_float32_mean_of_overlapping_gradients() {
    let a = SAcc::new(&Arc::new(ResourceMgr::new()), DataType::Float, Some(&[6, 3]), "MEAN");
    let g1 = vec![0.75f32, 1.078125, -1.59375, 1.859375, -0.9375, 1.3125, 0.375, -0.375, -0.546875];
    a.apply_t(0, Tensor::vec(vec![0i64, 2, 5]), Tensor::new(vec![3, 3], g1).unwrap(), Some(vec![6, 3])).unwrap();
    a.apply(0, &[2, 3], 3, vec![0.90625f32, 0.234375, -1.625, -0.859375, -0.59375, -0.265625]).unwrap();
    let g3 = vec![-1.328125f32, 1.421875, 0.140625, 0.625, 1.609375, -0.921875, 0.765625, 0.0, 0.125];
    a.apply_t(0, Tensor::vec(vec![0i64, 3, 5]), Tensor::new(vec![3, 3], g3).unwrap(), Some(vec![6, 3])).unwrap();
    let (i, v, d, s) = slices::<f32>(done(&a.take(3)));
    assert_eq!((i, d, s), (vec![0, 2, 3, 5], vec![4, 3], vec![6, 3]));
    let want = [
        -0.2890625f32,
        1.25,
        -0.7265625,
        1.3828125,
        -0.3515625,
        -0.15625,
        -0.1171875,
        0.5078125,
        -0.59375,
        0.5703125,
        -0.1875,
        -0.2109375,
    ];
    assert_eq!(v, want);
}

#[test]
fn golden_float64_sum() {
    let a = SAcc::new(&Arc::new(ResourceMgr::new()), DataType::Double, Some(&[6, 3]), "SUM");
    let g1 = vec![0.234375, -0.6614583333333334, -0.2708333333333333, -0.375, 0.640625, -0.6302083333333334];
    a.apply(0, &[1, 4], 3, g1).unwrap();
    let g2 = vec![
        -0.24107142857142858,
        0.13616071428571427,
        -0.18526785714285715,
        0.14285714285714285,
        -0.12946428571428573,
        -0.15848214285714285,
        0.05580357142857143,
        0.125,
        0.12053571428571429,
    ];
    a.apply(0, &[0, 1, 4], 3, g2).unwrap();
    let (i, v, _, s) = slices::<f64>(done(&a.take(2)));
    assert_eq!((i, s), (vec![0, 1, 4], vec![6, 3]));
    let want = [
        -0.24107142857142858,
        0.13616071428571427,
        -0.18526785714285715,
        0.37723214285714285,
        -0.7909226190476191,
        -0.42931547619047616,
        -0.31919642857142855,
        0.765625,
        -0.5096726190476191,
    ];
    assert_eq!(v, want);
}

#[test]
fn golden_float16_mean_rounds_like_tensorflow() {
    let a = SAcc::new(&Arc::new(ResourceMgr::new()), DataType::Half, Some(&[4, 2]), "MEAN");
    let h = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>();
    a.apply(0, &[1], 2, h(&[1.0, 2.0])).unwrap();
    a.apply(0, &[1, 2], 2, h(&[1.0, 3.0, 0.1, 0.2])).unwrap();
    a.apply(0, &[1], 2, h(&[1.0, 3.0])).unwrap();
    let (i, v, _, _) = slices::<f16>(done(&a.take(3)));
    assert_eq!(i, [1, 2]);
    let got: Vec<f64> = v.iter().map(|x| x.to_f64()).collect();
    assert_eq!(got, [1.0, 2.666015625, 0.0999755859375, 0.199951171875]);
}

#[test]
fn golden_repeated_indices_and_shapes() {
    let a = SAcc::new(&Arc::new(ResourceMgr::new()), DataType::Float, Some(&[4, 2]), "MEAN");
    a.apply(0, &[3, 1, 3], 2, vec![1.0f32, 1.0, 2.0, 2.0, 3.0, 3.0]).unwrap();
    a.apply(0, &[3, 3], 2, vec![10.0f32, 10.0, 20.0, 20.0]).unwrap();
    a.apply(0, &[0, 3], 2, vec![5.0f32, 5.0, 7.0, 7.0]).unwrap();
    let (i, v, _, _) = slices::<f32>(done(&a.take(3)));
    assert_eq!(i, [0, 3, 1, 3]);
    assert_eq!(v, [5.0, 5.0, 6.0, 6.0, 2.0, 2.0, 11.5, 11.5]);

    // Unknown rank: the dense shape's first dimension is -1, the rest come from the values.
    let a = SAcc::new(&Arc::new(ResourceMgr::new()), DataType::Double, None, "MEAN");
    let r3 = |i: Vec<i64>, v: Vec<f64>| (Tensor::vec(i), Tensor::new(vec![2, 2, 2], v).unwrap());
    let (i1, v1) = r3(vec![2, 0], (0..8).map(f64::from).collect());
    a.apply_t(0, i1, v1, None).unwrap();
    let (i2, v2) = r3(vec![0, 2], vec![1.0; 8]);
    a.apply_t(0, i2, v2, None).unwrap();
    let (i, v, d, s) = slices::<f64>(done(&a.take(2)));
    assert_eq!((i, d, s), (vec![0, 2, 0], vec![3, 2, 2], vec![-1, 2, 2]));
    assert_eq!(v, [1.0, 1.0, 1.0, 1.0, 0.5, 1.0, 1.5, 2.0, 4.0, 5.0, 6.0, 7.0]);

    // Rank 0, what SyncReplicasOptimizer declares: nothing is bounded, first dimension -1.
    let a = SAcc::new(&Arc::new(ResourceMgr::new()), DataType::Float, Some(&[]), "MEAN");
    let t = |i: Vec<i64>, v: Vec<f32>| (Tensor::vec(i.clone()), Tensor::new(vec![i.len(), 2], v).unwrap());
    let (i1, v1) = t(vec![4], vec![0.5, 0.25]);
    a.apply_t(0, i1, v1, Some(vec![9, 2])).unwrap();
    let (i2, v2) = t(vec![1, 4], vec![1.0, 1.0, 0.5, 0.75]);
    a.apply_t(0, i2, v2, Some(vec![9, 2])).unwrap();
    let (i, v, _, s) = slices::<f32>(done(&a.take(2)));
    assert_eq!((i, s), (vec![1, 4], vec![-1, 2]));
    assert_eq!(v, [1.0, 1.0, 0.5, 0.5]);
}

#[test]
fn golden_stale_gradient_after_set_global_step() {
    let a = SAcc::new(&Arc::new(ResourceMgr::new()), DataType::Float, Some(&[4, 2]), "MEAN");
    a.set_step(4);
    a.apply(3, &[0], 2, vec![100.0f32, 100.0]).unwrap();
    a.apply(4, &[2], 2, vec![1.5f32, 2.5]).unwrap();
    a.apply(9, &[2], 2, vec![0.5f32, 0.5]).unwrap();
    let (i, v, _, s) = slices::<f32>(done(&a.take(2)));
    assert_eq!((i, v, s), (vec![2], vec![1.0, 1.5], vec![4, 2]));
}
