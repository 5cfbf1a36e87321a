//! Accumulator kernels driven directly, including the asynchronous take.

use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::data_flow::ConditionalAccumulator;
use ferroflow_kernels::testutil::{node, test_step};
use ferroflow_kernels::{create_kernel, CancelToken, OpContext, ResourceMgr, StepCtx, Value};

pub(super) type Outcome = Result<Vec<Tensor>, Status>;

/// Starts a kernel (async or not) and returns a channel with its outcome.
pub(super) fn start(step: &Arc<StepCtx>, n: NodeDef, inputs: Vec<Value>, outs: usize) -> Receiver<Outcome> {
    let (tx, rx) = channel();
    let k = create_kernel(&n).unwrap();
    let ctx = OpContext::new(Arc::new(n), inputs, outs, step.clone());
    k.compute_async(
        ctx,
        Box::new(move |mut ctx, r| {
            let out = r.and_then(|_| ctx.take_outputs()).and_then(|v| v.iter().map(|x| x.tensor()).collect());
            let _ = tx.send(out);
        }),
    );
    rx
}

/// Runs a kernel to completion (within 5 s).
pub(super) fn run(step: &Arc<StepCtx>, n: NodeDef, inputs: Vec<Value>, outs: usize) -> Outcome {
    start(step, n, inputs, outs).recv_timeout(Duration::from_secs(5)).expect("kernel did not complete")
}

/// Asserts that the kernel is still waiting.
pub(super) fn still_waiting(rx: &Receiver<Outcome>) {
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "expected the op to be waiting");
}

pub(super) fn done(rx: &Receiver<Outcome>) -> Outcome {
    rx.recv_timeout(Duration::from_secs(5)).expect("op did not complete")
}

pub(super) fn step_with(rm: &Arc<ResourceMgr>, cancel: CancelToken, deadline: Option<Instant>) -> Arc<StepCtx> {
    let s = test_step(rm.clone());
    Arc::new(StepCtx { cancel, deadline, ..StepCtx::new(s.step_id, s.rendezvous.clone(), rm.clone(), &s.device) })
}

fn create_node(op: &str, shared: &str) -> NodeDef {
    node(
        op,
        &[
            ("dtype", attr::ty(DataType::Float)),
            ("shape", attr::shape(Some(&[2]))),
            ("container", attr::string("")),
            ("shared_name", attr::string(shared)),
            ("reduction_type", attr::string("MEAN")),
        ],
    )
}

fn typed(op: &str) -> NodeDef {
    node(op, &[("dtype", attr::ty(DataType::Float))])
}

struct Acc {
    step: Arc<StepCtx>,
    handle: Value,
}

impl Acc {
    fn new(rm: &Arc<ResourceMgr>, op: &str) -> Acc {
        let step = test_step(rm.clone());
        let k = create_kernel(&create_node(op, "acc")).unwrap();
        let mut ctx = OpContext::new(Arc::new(create_node(op, "acc")), vec![], 1, step.clone());
        k.compute(&mut ctx).unwrap();
        let handle = ctx.take_outputs().unwrap().remove(0);
        Acc { step, handle }
    }
    fn prefix(&self) -> &'static str {
        if matches!(self.handle, Value::Ref(_)) {
            ""
        } else {
            "Resource"
        }
    }
    fn apply(&self, local_step: i64, g: Vec<f32>) -> Outcome {
        let op = format!("{}AccumulatorApplyGradient", self.prefix());
        let ins = vec![self.handle.clone(), Value::Tensor(Tensor::scalar(local_step)), Value::Tensor(Tensor::vec(g))];
        run(&self.step, typed(&op), ins, 0)
    }
    fn take(&self, step: &Arc<StepCtx>, n: i32) -> Receiver<Outcome> {
        let op = format!("{}AccumulatorTakeGradient", self.prefix());
        start(step, typed(&op), vec![self.handle.clone(), Value::Tensor(Tensor::scalar(n))], 1)
    }
    fn num(&self) -> i32 {
        let op = format!("{}AccumulatorNumAccumulated", self.prefix());
        run(&self.step, node(&op, &[]), vec![self.handle.clone()], 1).unwrap()[0].scalar_value::<i32>().unwrap()
    }
    fn set_step(&self, s: i64) {
        let op = format!("{}AccumulatorSetGlobalStep", self.prefix());
        run(&self.step, node(&op, &[]), vec![self.handle.clone(), Value::Tensor(Tensor::scalar(s))], 0).unwrap();
    }
}

fn floats(o: Outcome) -> Vec<f32> {
    o.unwrap()[0].as_slice::<f32>().unwrap().to_vec()
}

#[test]
fn take_waits_for_num_required_and_averages_distinct_gradients() {
    for op in ["ResourceConditionalAccumulator", "ConditionalAccumulator"] {
        let rm = Arc::new(ResourceMgr::new());
        let a = Acc::new(&rm, op);
        let acc = rm.lookup::<ConditionalAccumulator>("", "acc").unwrap();
        a.apply(0, vec![1.0, 2.0]).unwrap();
        let rx = a.take(&a.step, 2);
        still_waiting(&rx);
        assert_eq!(a.num(), 1);
        a.apply(0, vec![3.0, 6.0]).unwrap();
        assert_eq!(floats(done(&rx)), vec![2.0, 4.0]);
        // A take resets the sum and advances the accumulator's global step.
        assert_eq!(a.num(), 0);
        assert_eq!(acc.global_step(), 1);
        // The next round starts from zero.
        a.apply(1, vec![10.0, 10.0]).unwrap();
        assert_eq!(floats(done(&a.take(&a.step, 1))), vec![10.0, 10.0]);
        assert_eq!(acc.global_step(), 2);
    }
}

#[test]
fn stale_gradients_are_dropped_and_counted() {
    let rm = Arc::new(ResourceMgr::new());
    let a = Acc::new(&rm, "ResourceConditionalAccumulator");
    let acc = rm.lookup::<ConditionalAccumulator>("", "acc").unwrap();
    let before = ferroflow_kernels::data_flow::stale_gradients_dropped_total();
    a.set_step(5);
    assert_eq!(acc.global_step(), 5);
    a.apply(4, vec![100.0, 100.0]).unwrap();
    assert_eq!(a.num(), 0);
    assert_eq!(acc.stale_dropped(), 1);
    assert!(ferroflow_kernels::data_flow::stale_gradients_dropped_total() > before);
    a.apply(5, vec![1.0, 1.0]).unwrap();
    a.apply(7, vec![3.0, 3.0]).unwrap();
    assert_eq!(a.num(), 2);
    assert_eq!(floats(done(&a.take(&a.step, 2))), vec![2.0, 2.0]);
    assert_eq!(acc.global_step(), 6);
    // Gradients computed for step 5 are now stale.
    a.apply(5, vec![9.0, 9.0]).unwrap();
    assert_eq!((a.num(), acc.stale_dropped()), (0, 2));
}

#[test]
fn cancelled_step_fails_a_waiting_take_with_cancelled() {
    let rm = Arc::new(ResourceMgr::new());
    let a = Acc::new(&rm, "ResourceConditionalAccumulator");
    let tok = CancelToken::new();
    let rx = a.take(&step_with(&rm, tok.clone(), None), 2);
    still_waiting(&rx);
    tok.cancel(Status::cancelled("step 7 was cancelled"));
    let e = done(&rx).unwrap_err();
    assert_eq!(e.code, Code::Cancelled, "{e}");
    assert!(e.message.contains("accumulator 'acc'"), "{e}");
    // The cancelled attempt is gone: a later take is served normally.
    a.apply(0, vec![1.0, 1.0]).unwrap();
    assert_eq!(floats(done(&a.take(&a.step, 1))), vec![1.0, 1.0]);
    // A take on an already-cancelled step fails at once.
    let e = done(&a.take(&step_with(&rm, tok, None), 1)).unwrap_err();
    assert_eq!(e.code, Code::Cancelled);
}

#[test]
fn step_deadline_bounds_a_waiting_take() {
    let rm = Arc::new(ResourceMgr::new());
    let a = Acc::new(&rm, "ResourceConditionalAccumulator");
    let step = step_with(&rm, CancelToken::new(), Some(Instant::now() + Duration::from_millis(30)));
    let e = done(&a.take(&step, 1)).unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
}

#[test]
fn bad_arguments_are_invalid_argument() {
    let rm = Arc::new(ResourceMgr::new());
    let a = Acc::new(&rm, "ResourceConditionalAccumulator");
    let e = done(&a.take(&a.step, 0)).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("num_required must be positive"), "{e}");
    let e = a.apply(0, vec![1.0, 2.0, 3.0]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("incompatible with the accumulator's shape"), "{e}");
    let ins = vec![a.handle.clone(), Value::Tensor(Tensor::scalar(0i64)), Value::Tensor(Tensor::vec(vec![1i32, 2]))];
    let e = run(&a.step, node("ResourceAccumulatorApplyGradient", &[("dtype", attr::ty(DataType::Int32))]), ins, 0)
        .unwrap_err();
    assert!(e.message.contains("holds float32 gradients"), "{e}");
    // A handle to an accumulator nobody created.
    let rm2 = Arc::new(ResourceMgr::new());
    let e =
        run(&test_step(rm2), node("ResourceAccumulatorNumAccumulated", &[]), vec![a.handle.clone()], 1).unwrap_err();
    assert_eq!(e.code, Code::NotFound, "{e}");
}
