//! Enqueue (and StreamingEnqueue), WaitQueueDone and RunComponentFunction: the items a
//! client queues into a context — operations, tensors it sends, functions it registers,
//! handles it releases — run in order, each answered with its outputs' shapes.

use std::time::Instant;

use ferroflow_core::proto::eager::{
    operation::input::Item as In, queue_item::Item, EnqueueRequest, EnqueueResponse, Operation, QueueResponse,
    RunComponentFunctionRequest, RunComponentFunctionResponse, WaitQueueDoneRequest,
};
use ferroflow_core::{Status, Tensor};

use super::context::{EagerContext, Held};
use super::EagerService;

impl EagerService {
    /// Enqueue: runs the request's items in order; the first failure ends the request.
    pub(crate) async fn enqueue(
        &self,
        req: EnqueueRequest,
        caller: Option<Instant>,
    ) -> Result<EnqueueResponse, Status> {
        let ctx = self.context(req.context_id)?;
        let mut out = EnqueueResponse { queue_response: Vec::with_capacity(req.queue.len()) };
        for item in req.queue {
            let r = self.enqueue_item(&ctx, item.item, caller).await;
            out.queue_response.push(r?);
        }
        Ok(out)
    }

    async fn enqueue_item(
        &self,
        ctx: &EagerContext,
        item: Option<Item>,
        caller: Option<Instant>,
    ) -> Result<QueueResponse, Status> {
        let mut q = QueueResponse::default();
        match item {
            None => {}
            Some(Item::HandleToDecref(h)) => {
                if let Some(t) = ctx.release((h.op_id, h.output_num)) {
                    self.free_anonymous(&t);
                }
            }
            Some(Item::Operation(op)) => {
                let function = super::execute::is_function_call(ctx, &op);
                let t0 = Instant::now();
                let (tensors, device) = self.execute(ctx, &op, caller, &[]).await?;
                tracing::debug!(task = %ctx.task, op = %op.name, id = op.id, us = t0.elapsed().as_micros() as u64, "eager operation ran");
                for t in &tensors {
                    if op.id == NO_OP_ID {
                        q.tensor.push(t.to_proto());
                    } else {
                        q.shape.push(t.shape().to_proto());
                        // Only a function's outputs say where they are (TensorFlow's rule).
                        if function {
                            q.device.push(device.clone());
                        }
                    }
                }
            }
            Some(Item::SendTensor(s)) => {
                for (k, p) in s.tensors.iter().enumerate() {
                    let t = Tensor::from_proto(p)
                        .map_err(|e| e.context(format!("SendTensor of op {} output {k} to {}", s.op_id, ctx.task)))?;
                    ctx.put((s.op_id, k as i32), Held { tensor: t });
                }
            }
            Some(Item::RegisterFunction(r)) => {
                let f = r.function_def.unwrap_or_default();
                let name = f.signature.as_ref().map(|s| s.name.clone()).unwrap_or_default();
                ctx.register(f, r.library)?;
                tracing::debug!(task = %ctx.task, function = %name, component = r.is_component_function, "eager function registered");
            }
            Some(Item::CleanupFunction(c)) => {
                self.worker.steps.cleanup(c.step_id);
            }
            Some(Item::SyncRemoteExecutorForStream(_)) => {}
            Some(Item::SendPackedHandle(p)) => self.send_packed_handle(ctx, p, self.deadline(caller)).await?,
            Some(Item::RemoveFunction(r)) => ctx.remove_function(&r.function_name),
        }
        Ok(q)
    }

    /// Deletes the variable of a released handle when nothing else can name it (an eager
    /// variable's anonymous name: TensorFlow frees it with its last handle).
    fn free_anonymous(&self, t: &Tensor) {
        let Ok(hs) = t.as_slice::<ferroflow_core::ResourceHandle>() else { return };
        for h in hs {
            if h.name.starts_with(ferroflow_kernels::state::ANONYMOUS_NAME) {
                let _ = self.worker.shared_resources.delete::<ferroflow_kernels::Var>(&h.container, &h.name);
            }
        }
    }

    pub(crate) fn device(&self, ctx: &EagerContext) -> String {
        format!("{}/device:CPU:0", ctx.task)
    }

    /// Runs one operation of the context with its inputs; keeps output `k` as the
    /// context's tensor `(op.id, output_num[k])` (`(op.id, k)` when `output_num` is empty),
    /// unless `op.id` is -1; returns the outputs and their device.
    async fn execute(
        &self,
        ctx: &EagerContext,
        op: &Operation,
        caller: Option<Instant>,
        output_num: &[i32],
    ) -> Result<(Vec<Tensor>, String), Status> {
        let deadline = self.deadline(caller);
        let mut inputs = Vec::with_capacity(op.op_inputs.len());
        // Where each input's resource lives, when some live on other tasks.
        let own = self.device(ctx);
        let mut at = Vec::with_capacity(op.op_inputs.len());
        // The packed handles among the inputs (functions only: see `packed`).
        let mut packed: Vec<Option<super::packed::Packed>> = Vec::new();
        for (i, input) in op.op_inputs.iter().enumerate() {
            if let Some(In::RemoteHandle(h)) = &input.item {
                if let Some(p) = ctx.packed((h.op_id, h.output_num)) {
                    if !super::execute::is_function_call(ctx, op) {
                        return Err(Status::invalid_argument(format!(
                            "input {i} of eager operation {} ({}) on {} is a packed handle (op {}): packed handles \
                             are inputs of functions only",
                            op.id, op.name, ctx.task, h.op_id
                        )));
                    }
                    packed.resize(i, None);
                    packed.push(Some(p));
                    at.push(own.clone());
                    inputs.push(Tensor::scalar(0i32));
                    continue;
                }
            }
            let t = match &input.item {
                Some(In::RemoteHandle(h)) => match ctx.get((h.op_id, h.output_num)) {
                    Ok(held) => held.tensor,
                    Err(e) => match elsewhere(ctx, h) {
                        Some(dev) => {
                            let t = self.fetch_remote(ctx, h, deadline).await.map_err(|e| {
                                e.context(format!("input {i} of eager operation {} ({})", op.id, op.name))
                            })?;
                            if t.dtype() == ferroflow_core::DataType::Resource {
                                at.push(dev);
                            } else {
                                at.push(own.clone());
                            }
                            inputs.push(t);
                            continue;
                        }
                        None => return Err(e),
                    },
                },
                Some(In::Tensor(p)) => Tensor::from_proto(p)
                    .map_err(|e| e.context(format!("input {i} of eager operation {} ({})", op.id, op.name)))?,
                None => {
                    return Err(Status::invalid_argument(format!(
                        "input {i} of eager operation {} ({}) is empty",
                        op.id, op.name
                    )))
                }
            };
            at.push(own.clone());
            inputs.push(t);
        }
        packed.resize(inputs.len(), None);
        if at.iter().any(|d| *d != own) || packed.iter().any(Option::is_some) {
            if !super::execute::is_function_call(ctx, op) {
                return Err(Status::unimplemented(format!(
                    "eager operation {} ({}) on {}: an op (not a function) given a resource of another task ({}) \
                     is not supported by ferroflow",
                    op.id,
                    op.name,
                    ctx.task,
                    at.iter().find(|d| **d != own).cloned().unwrap_or_default()
                )));
            }
            let outputs = self.run_spanning(ctx, op, inputs, at, packed, deadline).await?;
            if op.id != NO_OP_ID {
                for (k, t) in outputs.iter().enumerate() {
                    let num = output_num.get(k).copied().unwrap_or(k as i32);
                    ctx.put((op.id, num), Held { tensor: t.clone() });
                }
            }
            return Ok((outputs, own));
        }
        let types: Vec<_> = inputs.iter().map(Tensor::dtype).collect();
        let arc = self.context(ctx.id)?;
        let prepared = self.prepare(&arc, op, &types)?;
        // A component function runs at its call's step; a `_Send`/`_Recv` of an eager copy
        // at the context's (TensorFlow's rule: the client's RecvTensor names the context id
        // as the step); any other op at a step of its own.
        let transfer = TRANSFER_OPS.contains(&op.name.as_str());
        let step_id = match () {
            _ if op.is_component_function => op.func_step_id,
            _ if transfer => ctx.id as i64,
            _ => crate::ids::new_step_id(),
        };
        let run = self.run_prepared(ctx, &prepared, inputs, step_id, deadline).await;
        let outputs = run.map_err(|e| e.context(format!("eager operation {} ({}) on {}", op.id, op.name, ctx.task)))?;
        let device = self.device(ctx);
        if op.id != NO_OP_ID {
            for (k, t) in outputs.iter().enumerate() {
                let num = output_num.get(k).copied().unwrap_or(k as i32);
                ctx.put((op.id, num), Held { tensor: t.clone() });
            }
        }
        debug_assert_eq!(outputs.len(), prepared.num_outputs());
        Ok((outputs, device))
    }

    /// WaitQueueDone: operations run inside Enqueue (their errors answer it), so every
    /// operation of the context is done.
    pub(crate) fn wait_queue_done(&self, req: &WaitQueueDoneRequest) -> Result<(), Status> {
        self.context(req.context_id)?;
        if !req.op_id.is_empty() {
            return Err(Status::unimplemented(
                "EagerServiceImpl::WaitQueueDone is not implemented for particular op IDs.",
            ));
        }
        Ok(())
    }

    /// RunComponentFunction: runs one component of a multi-device function at the call's
    /// step id (its `_Send`/`_Recv` nodes meet the other components' there). Its outputs
    /// stay here as the context's tensors `(id, output_num[k])` and their shapes are
    /// returned; with id -1 the values are returned instead.
    pub(crate) async fn run_component_function(
        &self,
        req: RunComponentFunctionRequest,
        caller: Option<Instant>,
    ) -> Result<RunComponentFunctionResponse, Status> {
        let ctx = self.context(req.context_id)?;
        let op = req.operation.unwrap_or_default();
        if !op.is_function || !op.is_component_function {
            return Err(Status::internal(
                "RunComponentFunction request can only be used to execute component functions.",
            ));
        }
        let (outputs, _) = self.execute(&ctx, &op, caller, &req.output_num).await?;
        let mut resp = RunComponentFunctionResponse::default();
        for t in &outputs {
            if op.id == NO_OP_ID {
                resp.tensor.push(t.to_proto());
            } else {
                resp.shape.push(t.shape().to_proto());
            }
        }
        Ok(resp)
    }
}

/// The ops of eager copies between tasks, run at the context's step.
const TRANSFER_OPS: [&str; 4] = ["_Send", "_Recv", "_HostSend", "_HostRecv"];

/// The op id of an operation whose outputs are returned rather than kept.
pub(crate) const NO_OP_ID: i64 = -1;

/// The device of a tensor the client says lives on another task of the cluster.
fn elsewhere(ctx: &EagerContext, h: &ferroflow_core::proto::eager::RemoteTensorHandle) -> Option<String> {
    let dev = if h.device.is_empty() { &h.op_device } else { &h.device };
    let d = ferroflow_core::DeviceName::parse(dev).ok()?;
    let here = ferroflow_core::DeviceName::parse(&ctx.task).ok()?;
    if d.job == here.job && d.task == here.task {
        return None;
    }
    Some(d.to_string())
}
