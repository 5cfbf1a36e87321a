//! The mutex serializes lock holders in arrival order, a consumed (or dropped) lock frees
//! it, and a waiting lock ends with Cancelled when its step is cancelled.

use std::sync::mpsc;
use std::sync::Arc;

use ferroflow_core::{attr, Code, Status, Tensor};

use super::MutexResource;
use crate::testutil::{node, run_kernel_values, test_step};
use crate::{create_kernel, OpContext, ResourceMgr, StepCtx, Value};

fn make_mutex(rm: &Arc<ResourceMgr>) -> Tensor {
    let n = node("MutexV2", &[("container", attr::string("")), ("shared_name", attr::string("m"))]);
    run_kernel_values(n, vec![], 1, rm.clone()).unwrap().remove(0).tensor().unwrap()
}

type Outcome = (Result<(), Status>, Option<Value>);

/// Starts `MutexLock` on `handle` in `step`; its outcome arrives on the returned channel.
fn start_lock(step: Arc<StepCtx>, handle: &Tensor) -> mpsc::Receiver<Outcome> {
    let n = Arc::new(node("MutexLock", &[]));
    let k = create_kernel(&n).unwrap();
    let ctx = OpContext::new(n, vec![Value::Tensor(handle.clone())], 1, step);
    let (tx, rx) = mpsc::channel();
    k.compute_async(
        ctx,
        Box::new(move |mut ctx, r| {
            let out = ctx.take_outputs().ok().and_then(|mut v| v.pop());
            let _ = tx.send((r, out));
        }),
    );
    rx
}

fn consume(rm: &Arc<ResourceMgr>, lock: Value) -> Result<Vec<Value>, Status> {
    run_kernel_values(node("ConsumeMutexLock", &[]), vec![lock], 0, rm.clone())
}

fn mutex_of(rm: &Arc<ResourceMgr>) -> Arc<MutexResource> {
    rm.lookup::<MutexResource>("", "m").unwrap()
}

#[test]
fn locks_are_granted_in_turn_and_released_by_consume() {
    let rm = Arc::new(ResourceMgr::new());
    let h = make_mutex(&rm);
    let step = test_step(rm.clone());
    let first = start_lock(step.clone(), &h).try_recv().expect("a free mutex is granted at once");
    first.0.unwrap();
    let second = start_lock(step.clone(), &h);
    let third = start_lock(step, &h);
    assert!(second.try_recv().is_err(), "the second lock waits");
    consume(&rm, first.1.unwrap()).unwrap();
    let (r, lock2) = second.try_recv().expect("consuming the first lock grants the second");
    r.unwrap();
    assert!(third.try_recv().is_err(), "the third lock still waits");
    // Dropping a lock without consuming it releases it too.
    drop(lock2);
    let (r, lock3) = third.try_recv().expect("dropping the second lock grants the third");
    r.unwrap();
    assert!(mutex_of(&rm).is_locked());
    consume(&rm, lock3.unwrap()).unwrap();
    assert!(!mutex_of(&rm).is_locked());
}

#[test]
fn a_waiting_lock_is_cancelled_with_its_step() {
    let rm = Arc::new(ResourceMgr::new());
    let h = make_mutex(&rm);
    let held = start_lock(test_step(rm.clone()), &h).try_recv().unwrap();
    let step = test_step(rm.clone());
    let waiting = start_lock(step.clone(), &h);
    step.cancel.cancel(Status::cancelled("step aborted"));
    let (r, _) = waiting.recv_timeout(std::time::Duration::from_secs(5)).expect("cancellation ends the wait");
    assert_eq!(r.unwrap_err().code, Code::Cancelled);
    consume(&rm, held.1.unwrap()).unwrap();
    assert!(!mutex_of(&rm).is_locked());
}

#[test]
fn consuming_something_else_is_invalid_argument() {
    let rm = Arc::new(ResourceMgr::new());
    let e = consume(&rm, Value::Tensor(Tensor::scalar(1.0f32))).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("SharedLockReleaser"), "{e}");
}
