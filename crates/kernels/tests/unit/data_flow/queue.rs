//! FIFO queue kernels driven directly: order, blocking on empty and full, close, cancel,
//! timeouts, many-element forms.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, Code, DataType, Status, Tensor};

use ferroflow_kernels::testutil::{node, test_step};
use ferroflow_kernels::{create_kernel, CancelToken, OpContext, ResourceMgr, StepCtx, Value};

use super::accumulator::{done, run, start, step_with, still_waiting, Outcome};

struct Q {
    step: Arc<StepCtx>,
    handle: Value,
    v2: bool,
}

fn list_shape(dims: &[i64]) -> ferroflow_core::proto::AttrValue {
    attr::list_shape([Some(dims)])
}

impl Q {
    /// A FIFOQueueV2 of int64 scalars in a resource manager of its own.
    fn fresh(capacity: i64) -> Q {
        Q::new(&Arc::new(ResourceMgr::new()), true, capacity)
    }

    /// A queue of capacity 1 already holding the element 1.
    fn full() -> Q {
        let q = Q::fresh(1);
        done(&q.enqueue(1)).unwrap();
        q
    }

    fn new(rm: &Arc<ResourceMgr>, v2: bool, capacity: i64) -> Q {
        let step = test_step(rm.clone());
        let n = node(
            if v2 { "FIFOQueueV2" } else { "FIFOQueue" },
            &[
                ("component_types", attr::list_type(&[DataType::Int64])),
                ("shapes", list_shape(&[])),
                ("capacity", attr::int(capacity)),
                ("container", attr::string("")),
                ("shared_name", attr::string("q")),
            ],
        );
        let k = create_kernel(&n).unwrap();
        let mut ctx = OpContext::new(Arc::new(n), vec![], 1, step.clone());
        k.compute(&mut ctx).unwrap();
        Q { step, handle: ctx.take_outputs().unwrap().remove(0), v2 }
    }
    fn op(&self, base: &str) -> String {
        if self.v2 {
            format!("{base}V2")
        } else {
            base.to_string()
        }
    }
    fn node(&self, base: &str, timeout_ms: i64) -> NodeDef {
        node(
            &self.op(base),
            &[
                ("Tcomponents", attr::list_type(&[DataType::Int64])),
                ("component_types", attr::list_type(&[DataType::Int64])),
                ("timeout_ms", attr::int(timeout_ms)),
            ],
        )
    }
    fn enqueue_on(&self, step: &Arc<StepCtx>, v: i64, timeout_ms: i64) -> std::sync::mpsc::Receiver<Outcome> {
        start(
            step,
            self.node("QueueEnqueue", timeout_ms),
            vec![self.handle.clone(), Value::Tensor(Tensor::scalar(v))],
            0,
        )
    }
    fn enqueue(&self, v: i64) -> std::sync::mpsc::Receiver<Outcome> {
        self.enqueue_on(&self.step, v, -1)
    }
    fn enqueue_many(&self, v: Vec<i64>) -> Outcome {
        run(&self.step, self.node("QueueEnqueueMany", -1), vec![self.handle.clone(), Value::Tensor(Tensor::vec(v))], 0)
    }
    fn dequeue_on(&self, step: &Arc<StepCtx>, timeout_ms: i64) -> std::sync::mpsc::Receiver<Outcome> {
        start(step, self.node("QueueDequeue", timeout_ms), vec![self.handle.clone()], 1)
    }
    fn dequeue(&self) -> std::sync::mpsc::Receiver<Outcome> {
        self.dequeue_on(&self.step, -1)
    }
    fn dequeue_many(&self, n: i32) -> std::sync::mpsc::Receiver<Outcome> {
        start(
            &self.step,
            self.node("QueueDequeueMany", -1),
            vec![self.handle.clone(), Value::Tensor(Tensor::scalar(n))],
            1,
        )
    }
    fn close(&self, cancel_pending: bool) {
        let n = node(&self.op("QueueClose"), &[("cancel_pending_enqueues", attr::bool(cancel_pending))]);
        run(&self.step, n, vec![self.handle.clone()], 0).unwrap();
    }
    fn size(&self) -> i32 {
        run(&self.step, node(&self.op("QueueSize"), &[]), vec![self.handle.clone()], 1).unwrap()[0]
            .scalar_value::<i32>()
            .unwrap()
    }
}

fn int(o: Outcome) -> i64 {
    o.unwrap()[0].scalar_value::<i64>().unwrap()
}

#[test]
fn fifo_order_and_blocking_dequeue() {
    for v2 in [true, false] {
        let rm = Arc::new(ResourceMgr::new());
        let q = Q::new(&rm, v2, -1);
        done(&q.enqueue(1)).unwrap();
        done(&q.enqueue(2)).unwrap();
        assert_eq!(q.size(), 2);
        assert_eq!(int(done(&q.dequeue())), 1);
        assert_eq!(int(done(&q.dequeue())), 2);
        let rx = q.dequeue();
        still_waiting(&rx);
        done(&q.enqueue(3)).unwrap();
        assert_eq!(int(done(&rx)), 3);
        assert_eq!(q.size(), 0);
    }
}

#[test]
fn enqueue_blocks_while_full() {
    let q = Q::full();
    let rx = q.enqueue(2);
    still_waiting(&rx);
    assert_eq!(q.size(), 1);
    assert_eq!(int(done(&q.dequeue())), 1);
    done(&rx).unwrap();
    assert_eq!(int(done(&q.dequeue())), 2);
}

#[test]
fn enqueue_many_and_dequeue_many() {
    let q = Q::fresh(2);
    // Larger than the capacity: the dequeue gathers while the enqueue refills.
    let rx = q.dequeue_many(3);
    q.enqueue_many(vec![4, 5, 6, 7]).unwrap();
    let got = done(&rx).unwrap();
    assert_eq!(got[0].dims(), &[3]);
    assert_eq!(got[0].as_slice::<i64>().unwrap(), &[4, 5, 6]);
    assert_eq!(q.size(), 1);
    let empty = done(&q.dequeue_many(0)).unwrap();
    assert_eq!(empty[0].dims(), &[0]);
}

#[test]
fn close_fails_starved_dequeues_and_later_enqueues() {
    let q = Q::fresh(-1);
    done(&q.enqueue(1)).unwrap();
    let rx = q.dequeue_many(2);
    still_waiting(&rx);
    q.close(false);
    let e = done(&rx).unwrap_err();
    assert_eq!(e.code, Code::OutOfRange, "{e}");
    assert!(e.message.contains("is closed and has insufficient elements (requested 2, current size 1)"), "{e}");
    // The gathered element went back: a single dequeue still gets it, then OutOfRange.
    assert_eq!(int(done(&q.dequeue())), 1);
    assert_eq!(done(&q.dequeue()).unwrap_err().code, Code::OutOfRange);
    let e = done(&q.enqueue(9)).unwrap_err();
    assert_eq!(e.code, Code::Cancelled);
    assert!(e.message.contains("FIFOQueue 'q' is closed."), "{e}");
}

#[test]
fn close_keeps_or_cancels_pending_enqueues() {
    let q = Q::full();
    let pending = q.enqueue(2);
    still_waiting(&pending);
    q.close(false);
    still_waiting(&pending);
    assert_eq!(int(done(&q.dequeue())), 1);
    done(&pending).unwrap();
    assert_eq!(int(done(&q.dequeue())), 2);

    let q = Q::full();
    let pending = q.enqueue(2);
    still_waiting(&pending);
    q.close(true);
    assert_eq!(done(&pending).unwrap_err().code, Code::Cancelled);
    assert_eq!(int(done(&q.dequeue())), 1);
}

#[test]
fn cancel_and_timeouts_bound_waits() {
    let rm = Arc::new(ResourceMgr::new());
    let q = Q::new(&rm, true, 1);
    let tok = CancelToken::new();
    let rx = q.dequeue_on(&step_with(&rm, tok.clone(), None), -1);
    still_waiting(&rx);
    tok.cancel(Status::cancelled("client went away"));
    let e = done(&rx).unwrap_err();
    assert_eq!(e.code, Code::Cancelled);
    assert!(e.message.contains("FIFOQueue 'q'") && e.message.contains("client went away"), "{e}");

    let e = done(&q.dequeue_on(&q.step, 30)).unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
    assert!(e.message.contains("timed out after 30 ms"), "{e}");

    done(&q.enqueue(1)).unwrap();
    let e = done(&q.enqueue_on(&q.step, 2, 30)).unwrap_err();
    assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
    let step = step_with(&rm, CancelToken::new(), Some(Instant::now() + Duration::from_millis(20)));
    assert_eq!(done(&q.enqueue_on(&step, 2, -1)).unwrap_err().code, Code::DeadlineExceeded);
    // Timed-out attempts left nothing behind.
    assert_eq!(q.size(), 1);
    assert_eq!(int(done(&q.dequeue())), 1);
    still_waiting(&q.dequeue_on(&q.step, 200));
}

#[test]
fn type_and_shape_checks() {
    let q = Q::fresh(-1);
    let n =
        node("QueueEnqueueV2", &[("Tcomponents", attr::list_type(&[DataType::Float])), ("timeout_ms", attr::int(-1))]);
    let e = run(&q.step, n, vec![q.handle.clone(), Value::Tensor(Tensor::scalar(1.0f32))], 0).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("component 0 must be int64"), "{e}");
    let e = run(&q.step, q.node("QueueEnqueue", -1), vec![q.handle.clone(), Value::Tensor(Tensor::vec(vec![1i64]))], 0)
        .unwrap_err();
    assert!(e.message.contains("shape mismatch"), "{e}");
    let e = q.enqueue_many(vec![]).map(|_| ());
    assert!(e.is_ok());
    assert_eq!(q.size(), 0);
}

#[test]
fn queues_split_batches_of_every_dtype() {
    use ferroflow_kernels::data_flow::queue::FifoQueue;
    let q = FifoQueue::new("q", vec![DataType::Half, DataType::Int16, DataType::UInt32], vec![], -1).unwrap();
    let h = Tensor::new(
        vec![3, 2],
        (0..6).map(|i| ferroflow_core::half::f16::from_f32(i as f32 * 0.5)).collect::<Vec<_>>(),
    )
    .unwrap();
    let s = Tensor::new(vec![3], vec![-7i16, 0, 7]).unwrap();
    let u = Tensor::new(vec![3], vec![1u32, 2, u32::MAX]).unwrap();
    let tuples = q.split_many(&[h, s, u]).unwrap();
    assert_eq!(tuples.len(), 3);
    assert_eq!(tuples[2][0].dims(), &[2]);
    assert_eq!(
        tuples[2][0].as_slice::<ferroflow_core::half::f16>().unwrap(),
        &[ferroflow_core::half::f16::from_f32(2.0), ferroflow_core::half::f16::from_f32(2.5)]
    );
    assert_eq!(tuples[0][1].scalar_value::<i16>().unwrap(), -7);
    assert_eq!(tuples[2][2].scalar_value::<u32>().unwrap(), u32::MAX);
}
