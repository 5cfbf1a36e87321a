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
