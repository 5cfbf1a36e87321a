//! `_Send` and `_Recv`: hand tensors to the step's rendezvous under TensorFlow's key.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{rendezvous_key, DataType, NodeAttrs, Status};

use crate::array::util::node_context;
use crate::{key_in_frame, AsyncOpKernel, DoneCallback, KernelRegistry, OpContext};

fn key_of(node: &NodeDef) -> Result<String, Status> {
    Ok(rendezvous_key(
        &node.attr_string("send_device")?,
        node.attr_int("send_device_incarnation")? as u64,
        &node.attr_string("recv_device")?,
        &node.attr_string("tensor_name")?,
    ))
}

op_kernel! {
    struct Send { key: String }
    fn compute(&self, ctx) {
        let t = ctx.take_input(0)?;
        ctx.step().rendezvous.send(&key_in_frame(&self.key, ctx.frame_iter()), t, false)
    }
}

struct Recv {
    key: String,
    dtype: DataType,
}

impl AsyncOpKernel for Recv {
    fn start(&self, mut ctx: OpContext, done: DoneCallback) {
        let rv = ctx.step().rendezvous.clone();
        let dtype = self.dtype;
        let key = key_in_frame(&self.key, ctx.frame_iter()).into_owned();
        rv.recv_async(
            &key.clone(),
            Box::new(move |r| {
                let r = r.and_then(|(t, dead)| {
                    if dead {
                        return ctx.set_output_dead(0);
                    }
                    if t.dtype() != dtype {
                        return Err(node_context(
                            &ctx.node().name,
                            Status::invalid_argument(format!(
                                "received a {} tensor for '{key}' but {dtype} was expected",
                                t.dtype()
                            )),
                        ));
                    }
                    ctx.set_output(0, t)
                });
                done(ctx, r)
            }),
        );
    }
}

/// What a dead `_Send` does (the executor runs no kernel for a dead node): it tells the
/// receiver, under the node's key, that the tensor is dead, so deadness crosses devices
/// as in TensorFlow; `frame_iter` is the loop frame instance and iteration it runs in.
pub fn send_dead(node: &NodeDef, step: &crate::StepCtx, frame_iter: (u64, u64)) -> Result<(), Status> {
    step.rendezvous.send(&key_in_frame(&key_of(node)?, frame_iter), ferroflow_core::Tensor::scalar(0f32), true)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add_cheap("_Send", |n| Ok(Box::new(Send { key: key_of(n)? })));
    r.add_cheap("_HostSend", |n| Ok(Box::new(Send { key: key_of(n)? })));
    r.add_cheap("_Recv", |n| Ok(Box::new(Recv { key: key_of(n)?, dtype: n.attr_type("tensor_type")? })));
    r.add_cheap("_HostRecv", |n| Ok(Box::new(Recv { key: key_of(n)?, dtype: n.attr_type("tensor_type")? })));
}
