//! `While` and `StatelessWhile` (`tf.while_loop` under TensorFlow 2 behaviour): the `cond`
//! function of the graph's library runs on the loop variables; while its result is true the
//! `body` function maps them to the next ones. One iteration at a time, each a sub-step of
//! the caller's step (same resources, deadline and cancellation), on the loop's device.
//! The signatures are checked when the kernel is built (see `function::call_kernel`).

use std::sync::Arc;

use ferroflow_core::{Status, Tensor};
use ferroflow_kernels::{AsyncOpKernel, DoneCallback, OpContext, StepCtx};

use crate::function::{truth, CallDone, FunctionBody};

/// The kernel of `While`/`StatelessWhile`.
pub(crate) struct WhileKernel {
    cond: Arc<FunctionBody>,
    body: Arc<FunctionBody>,
}

impl WhileKernel {
    pub(crate) fn new(cond: Arc<FunctionBody>, body: Arc<FunctionBody>) -> WhileKernel {
        WhileKernel { cond, body }
    }
}

/// One iteration: `cond(vars)`, then `body(vars)` and the next iteration, or the outputs.
/// Each iteration after the first starts from a fresh rayon task, so a long loop whose
/// bodies finish inline does not grow the stack.
fn iterate(
    k: Arc<(Arc<FunctionBody>, Arc<FunctionBody>)>,
    step: Arc<StepCtx>,
    vars: Vec<Tensor>,
    iteration: u64,
    done: CallDone,
) {
    if let Some(s) = step.cancel.status() {
        return done(Err(s));
    }
    let k2 = k.clone();
    let s2 = step.clone();
    k.0.call(
        &step,
        vars.clone(),
        Box::new(move |r| {
            let go = match r.and_then(|c| match c.first() {
                Some(t) => truth(t),
                None => Err(Status::invalid_argument(format!("while loop condition '{}' returned nothing", k2.0.name))),
            }) {
                Ok(go) => go,
                Err(e) => return done(Err(e)),
            };
            if !go {
                return done(Ok(vars));
            }
            let k3 = k2.clone();
            let s3 = s2.clone();
            k2.1.call(
                &s2,
                vars,
                Box::new(move |r| match r {
                    Ok(next) => rayon::spawn(move || iterate(k3, s3, next, iteration + 1, done)),
                    Err(e) => done(Err(e.context(format!("while loop iteration {iteration}")))),
                }),
            );
        }),
    );
}

impl AsyncOpKernel for WhileKernel {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        let vars = match (0..ctx.num_inputs()).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>() {
            Ok(v) => v,
            Err(e) => return done(ctx, Err(e)),
        };
        let step = ctx.step().clone();
        let k = Arc::new((self.cond.clone(), self.body.clone()));
        iterate(
            k,
            step,
            vars,
            0,
            Box::new(move |r| {
                let mut ctx = ctx;
                let r = r.and_then(|outs| outs.into_iter().enumerate().try_for_each(|(i, t)| ctx.set_output(i, t)));
                done(ctx, r)
            }),
        );
    }
}
