//! Kernels of TensorFlow 1.x control flow. `Switch` forwards its data to the output its
//! predicate selects and marks the other dead; `Enter`, `Exit`, `NextIteration` and
//! `LoopCond` forward their input (a ref stays a ref): moving values between frames and
//! iterations is the executor's work, as is `Merge` (it takes the first live input, which
//! only the executor knows). `ControlTrigger` does nothing and runs even when dead.

use ferroflow_core::Tensor;

use crate::KernelRegistry;

op_kernel! {
    struct Switch;
    fn compute(&self, ctx) {
        let pred = ctx.input(1)?;
        if pred.num_elements() != 1 {
            return Err(ctx.error(format!("pred must be a scalar, got shape {:?}", pred.shape().dims())));
        }
        let taken = pred.scalar_value::<bool>().map_err(|e| ctx.error(e.message))?;
        let data = ctx.input_value(0)?.clone();
        ctx.set_output_value(taken as usize, data)?;
        ctx.set_output_dead(!taken as usize)
    }
}

op_kernel! {
    /// Forwards input 0 as it is (a reference stays a reference).
    struct ForwardValue;
    fn compute(&self, ctx) {
        let v = ctx.input_value(0)?.clone();
        ctx.set_output_value(0, v)
    }
}

op_kernel! {
    /// `Merge` when every input is given (outside an executor, e.g. in a kernel test): the
    /// first input, index 0. The executor computes `Merge` itself from the first live input.
    struct Merge;
    fn compute(&self, ctx) {
        let v = ctx.input_value(0)?.clone();
        ctx.set_output_value(0, v)?;
        ctx.set_output(1, Tensor::scalar(0i32))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("Switch", |_| Ok(Box::new(Switch)));
    r.add_cheap("RefSwitch", |_| Ok(Box::new(Switch)));
    r.add_cheap("Merge", |_| Ok(Box::new(Merge)));
    r.add_cheap("RefMerge", |_| Ok(Box::new(Merge)));
    for op in ["Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond"] {
        r.add_cheap(op, |_| Ok(Box::new(ForwardValue)));
    }
    r.add_cheap("ControlTrigger", |_| Ok(Box::new(super::plumbing::NoOp)));
}
