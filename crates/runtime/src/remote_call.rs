//! `RemoteCall`: runs function `f` of the graph's library on the device its `target` input
//! names (a string tensor, known only when the step runs). On the caller's own task the
//! function runs as a sub-step, like `PartitionedCall`; on another task the step's
//! rendezvous runs it there (on a worker: the function registered as a graph on the target
//! task once per session, then a RunGraph per call, cancelled with the caller's step).

use std::sync::Arc;

use ferroflow_core::proto::FunctionDefLibrary;
use ferroflow_core::{DataType, DeviceName, Status, Tensor};
use ferroflow_kernels::{AsyncOpKernel, DoneCallback, FunctionCall, OpContext};

use crate::function::FunctionBody;

/// The kernel of a `RemoteCall` node.
pub(crate) struct RemoteCallKernel {
    /// The function, instantiated for runs on this task.
    body: Arc<FunctionBody>,
    library: Arc<FunctionDefLibrary>,
    tout: Vec<DataType>,
}

impl RemoteCallKernel {
    pub(crate) fn new(body: FunctionBody, library: Option<&FunctionDefLibrary>, tout: Vec<DataType>) -> Self {
        RemoteCallKernel { body: Arc::new(body), library: Arc::new(library.cloned().unwrap_or_default()), tout }
    }
}

/// Whether `target` names a device of the task that runs the step (`step_device`).
fn on_this_task(target: &DeviceName, step_device: &str) -> Result<bool, Status> {
    let here = DeviceName::parse(step_device)?;
    Ok(target.job.as_ref().is_none_or(|j| Some(j) == here.job.as_ref())
        && target.task.is_none_or(|t| Some(t) == here.task)
        && target.replica.unwrap_or(0) == here.replica.unwrap_or(0))
}

impl AsyncOpKernel for RemoteCallKernel {
    fn start(&self, ctx: OpContext, done: DoneCallback) {
        let parsed = (|| -> Result<(String, DeviceName, Vec<Tensor>), Status> {
            let t = ctx.input(0)?;
            let target = match t.as_slice::<Vec<u8>>() {
                Ok([s]) => String::from_utf8_lossy(s).into_owned(),
                _ => {
                    return Err(ctx.error(format!(
                        "target must be a scalar string naming a device, got a {} tensor of shape {}",
                        t.dtype(),
                        t.shape()
                    )))
                }
            };
            let dev = DeviceName::parse(&target)
                .map_err(|e| ctx.error(format!("target '{target}' is not a device name: {}", e.message)))?;
            let args = (1..ctx.num_inputs()).map(|i| ctx.input(i)).collect::<Result<Vec<_>, _>>()?;
            Ok((target, dev, args))
        })();
        let (target, dev, args) = match parsed {
            Ok(p) => p,
            Err(e) => return done(ctx, Err(e)),
        };
        let step = ctx.step().clone();
        let finish = move |ctx: OpContext, r: Result<Vec<Tensor>, Status>| {
            let mut ctx = ctx;
            let r = r.and_then(|outs| outs.into_iter().enumerate().try_for_each(|(i, t)| ctx.set_output(i, t)));
            done(ctx, r)
        };
        match on_this_task(&dev, &step.device) {
            Ok(true) => self.body.call(&step, args, Box::new(move |r| finish(ctx, r))),
            Ok(false) => {
                let call = FunctionCall {
                    target,
                    function: self.body.name.clone(),
                    library: self.library.clone(),
                    args,
                    tout: self.tout.clone(),
                    cancel: step.cancel.clone(),
                    deadline: step.deadline,
                };
                step.rendezvous.call_function(call, Box::new(move |r| finish(ctx, r)));
            }
            Err(e) => {
                let e = ctx.error(format!("the step's device '{}': {}", step.device, e.message));
                finish(ctx, Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_task_or_not() {
        let here = "/job:worker/replica:0/task:1/device:CPU:0";
        let p = |s: &str| DeviceName::parse(s).unwrap();
        assert!(on_this_task(&p("/job:worker/replica:0/task:1/device:CPU:0"), here).unwrap());
        assert!(on_this_task(&p("/job:worker/task:1"), here).unwrap());
        assert!(on_this_task(&p("/device:CPU:0"), here).unwrap());
        assert!(!on_this_task(&p("/job:worker/task:0/device:CPU:0"), here).unwrap());
        assert!(!on_this_task(&p("/job:ps/replica:0/task:1/device:CPU:0"), here).unwrap());
    }
}
