//! `MutexV2`, `MutexLock`, `ConsumeMutexLock`: the mutex behind `tf.CriticalSection`.
//!
//! `MutexV2` creates (or finds) the mutex. `MutexLock` is asynchronous: it waits, without a
//! thread, until the mutex is free, then outputs a scalar variant holding the lock; waits
//! are served first come, first served and are bounded by the step's cancellation and
//! deadline. The lock is released when `ConsumeMutexLock` consumes it, or when the last copy
//! of the variant is dropped (a step that fails before consuming it), whichever is first.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{Opaque, Status, Tensor, Variant};

use super::handles::{container_and_name, named_resource, session_private_name, set_handle_output};
use super::waiters::{enter_parked, park, Abortable, Completion, Pending};
use crate::{AsyncOpKernel, DoneCallback, KernelRegistry, OpContext, OpKernel};

/// The type name of mutexes in resource handles.
pub const MUTEX_TYPE_NAME: &str = "tensorflow::Mutex";
/// The type name of the lock variant (TensorFlow's `SharedLockReleaser`).
pub const LOCK_TYPE_NAME: &str = "tensorflow::SharedLockReleaser";

#[derive(Default)]
struct State {
    locked: bool,
    next_id: u64,
    waiters: VecDeque<Pending<()>>,
}

/// A mutex resource.
pub struct MutexResource {
    name: String,
    state: Mutex<State>,
}

/// What a lock variant holds: releases its mutex once.
struct Held {
    mutex: Arc<MutexResource>,
    released: AtomicBool,
}

impl Held {
    fn release(&self) {
        if !self.released.swap(true, Ordering::AcqRel) {
            MutexResource::unlock(&self.mutex);
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.release();
    }
}

impl MutexResource {
    fn lock_state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands the mutex to the first waiter, or frees it.
    fn unlock(m: &Arc<MutexResource>) {
        let next = {
            let mut g = m.lock_state();
            let next = g.waiters.pop_front();
            if next.is_none() {
                g.locked = false;
            }
            next
        };
        if let Some(p) = next {
            grant(m, p)();
        }
    }

    /// Whether the mutex is held.
    #[cfg(test)]
    pub fn is_locked(&self) -> bool {
        self.lock_state().locked
    }
}

impl Abortable for MutexResource {
    fn abort(&self, id: u64, s: Status) -> Option<Completion> {
        let mut g = self.lock_state();
        let pos = g.waiters.iter().position(|p| p.id == id)?;
        let p = g.waiters.remove(pos)?;
        Some(p.finish(Err(s)))
    }
}

/// Completes the waiting `p` with a new lock of `m` (which the caller has marked held).
fn grant(m: &Arc<MutexResource>, mut p: Pending<()>) -> Completion {
    let held = Arc::new(Held { mutex: m.clone(), released: AtomicBool::new(false) });
    let v = Variant::Opaque(Opaque { type_name: LOCK_TYPE_NAME, value: held });
    let r = p.ctx.set_output(0, Tensor::scalar(v));
    p.finish(r)
}

op_kernel! {
    struct Create { container: String, name: String, shared: bool }
    fn compute(&self, ctx) {
        let name = if self.shared { self.name.clone() } else { session_private_name(ctx, &self.name) };
        ctx.resources().lookup_or_create(&self.container, &name, || {
            Ok(MutexResource { name: name.clone(), state: Mutex::new(State::default()) })
        })?;
        set_handle_output(ctx, &self.container, &name, MUTEX_TYPE_NAME, false)
    }
}

struct Lock;

impl AsyncOpKernel for Lock {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        let m = match named_resource::<MutexResource>(&ctx, "mutex") {
            Ok(m) => m,
            Err(e) => return done(ctx, Err(e)),
        };
        let id = {
            let mut g = m.lock_state();
            g.next_id += 1;
            g.next_id
        };
        let what = format!("MutexLock on mutex '{}'", m.name);
        let p = park(&m, id, (), ctx, done, None, &what);
        enter_parked(&m, p, &what, |p| {
            let mut g = m.lock_state();
            if g.locked {
                g.waiters.push_back(p);
                return Vec::new();
            }
            g.locked = true;
            drop(g);
            vec![grant(&m, p)]
        });
    }
}

op_kernel! {
    struct Consume;
    fn compute(&self, ctx) {
        let t = ctx.input(0)?;
        let held = match t.as_slice::<Variant>() {
            Ok([Variant::Opaque(o)]) if o.type_name == LOCK_TYPE_NAME => o.value.downcast_ref::<Held>(),
            _ => None,
        };
        let Some(held) = held else {
            return Err(ctx.error(format!(
                "Expected input mutex_lock to contain a SharedLockReleaser object, but saw a {} tensor of shape {}",
                t.dtype(),
                t.shape()
            )));
        };
        held.release();
        Ok(())
    }
}

fn create(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    use ferroflow_core::NodeAttrs;
    let (container, name) = container_and_name(n)?;
    let shared = !n.attr_string("shared_name")?.is_empty();
    Ok(Box::new(Create { container, name, shared }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("MutexV2", create);
    r.add("MutexLock", |_| Ok(Box::new(Lock)));
    r.add_cheap("ConsumeMutexLock", |_| Ok(Box::new(Consume)));
}

#[cfg(test)]
#[path = "mutex_tests.rs"]
mod tests;
