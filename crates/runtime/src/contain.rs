//! Containing kernel panics: a kernel that panics (a bug, or an input no check caught)
//! fails its step with INTERNAL naming the node, instead of unwinding through the
//! executor's thread (on a rayon thread that would abort the whole task).

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::Status;
use ferroflow_kernels::{DoneCallback, OpContext, OpKernel};

/// The status for a panic of `node`'s kernel.
pub(crate) fn panic_status(node: &NodeDef, payload: Box<dyn Any + Send>) -> Status {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_string());
    Status::internal(format!(
        "node '{}' (op {}, device '{}'): the kernel panicked: {what}",
        node.name, node.op, node.device
    ))
    .with_node(&node.name)
}

/// `kernel.compute(ctx)`, a panic becoming an INTERNAL status.
pub(crate) fn compute(kernel: &dyn OpKernel, ctx: &mut OpContext) -> Result<(), Status> {
    let node = ctx.node_arc().clone();
    catch_unwind(AssertUnwindSafe(|| kernel.compute(ctx))).unwrap_or_else(|p| Err(panic_status(&node, p)))
}

/// `kernel.compute_async(ctx, done)`; if the kernel panics before calling `done`,
/// `on_panic` gets the INTERNAL status instead (`done` is then never called).
pub(crate) fn compute_async(kernel: &dyn OpKernel, ctx: OpContext, done: DoneCallback, on_panic: impl FnOnce(Status)) {
    let node = ctx.node_arc().clone();
    let slot: Arc<Mutex<Option<DoneCallback>>> = Arc::new(Mutex::new(Some(done)));
    let inner = slot.clone();
    let wrapped: DoneCallback = Box::new(move |c, r| {
        let d = inner.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(d) = d {
            d(c, r);
        }
    });
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| kernel.compute_async(ctx, wrapped))) {
        let pending = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        if pending.is_some() {
            on_panic(panic_status(&node, p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::Code;

    struct Boom;
    impl OpKernel for Boom {
        fn compute(&self, _ctx: &mut OpContext) -> Result<(), Status> {
            let v: Vec<u8> = Vec::new();
            let i = v.len() + 3;
            Err(Status::internal(format!("unreachable {}", v[i])))
        }
    }

    #[test]
    fn a_panicking_kernel_gives_internal_naming_the_node() {
        let node =
            Arc::new(NodeDef { name: "bad".into(), op: "Boom".into(), device: "/cpu:0".into(), ..Default::default() });
        let step = ferroflow_kernels::testutil::test_step(Default::default());
        let mut ctx = OpContext::new(node, vec![], 0, step.clone());
        let e = compute(&Boom, &mut ctx).unwrap_err();
        assert_eq!(e.code, Code::Internal);
        assert!(e.message.contains("node 'bad' (op Boom") && e.message.contains("index out of bounds"), "{e}");
        let got = Arc::new(Mutex::new(None));
        let g = got.clone();
        let ctx = OpContext::new(Arc::new(NodeDef { name: "bad2".into(), ..Default::default() }), vec![], 0, step);
        compute_async(&Boom, ctx, Box::new(|_, _| panic!("done must not run")), move |s| *g.lock().unwrap() = Some(s));
        let s = got.lock().unwrap().take().expect("on_panic ran");
        assert!(s.message.contains("node 'bad2'"), "{s}");
    }
}
