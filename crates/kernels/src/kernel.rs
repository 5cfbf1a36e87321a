//! The kernel trait.

use ferroflow_core::Status;

use crate::OpContext;

/// Completion callback of an asynchronous kernel.
pub type DoneCallback = Box<dyn FnOnce(OpContext, Result<(), Status>) + Send>;

/// A kernel: created once per node, computed once per step (possibly concurrently from
/// several steps, hence `&self`).
pub trait OpKernel: Send + Sync {
    /// Computes outputs from inputs.
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status>;

    /// Whether [`OpKernel::compute_async`] must be used (kernels that wait, like `_Recv`).
    fn is_async(&self) -> bool {
        false
    }

    /// Asynchronous compute; the default runs [`OpKernel::compute`] inline.
    fn compute_async(&self, mut ctx: OpContext, done: DoneCallback) {
        let r = self.compute(&mut ctx);
        done(ctx, r)
    }

    /// Cheap kernels (Const, Identity, NoOp, shape ops) run inline in the executor instead of
    /// being handed to the compute pool.
    fn is_expensive(&self) -> bool {
        true
    }
}

/// A kernel that only runs asynchronously because it waits (`_Recv`, queues, function
/// calls, loops): it is an [`OpKernel`] whose synchronous `compute` is an error.
pub trait AsyncOpKernel: Send + Sync {
    /// Starts the computation; `done` is called once, when it has finished.
    fn start(&self, ctx: OpContext, done: DoneCallback);

    /// As [`OpKernel::is_expensive`].
    fn is_expensive(&self) -> bool {
        true
    }
}

impl<K: AsyncOpKernel> OpKernel for K {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        Err(ctx.error(format!("{} runs asynchronously only", ctx.node().op)))
    }

    fn is_async(&self) -> bool {
        true
    }

    fn compute_async(&self, ctx: OpContext, done: DoneCallback) {
        self.start(ctx, done)
    }

    fn is_expensive(&self) -> bool {
        AsyncOpKernel::is_expensive(self)
    }
}
