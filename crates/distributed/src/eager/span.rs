//! Functions whose inputs live on other tasks: ParameterServerStrategy's step function runs
//! on a worker and takes the variables of the ps tasks as resource handles. TensorFlow's
//! worker partitions such a function itself and runs the parts on the other tasks as
//! component functions; ferroflow's hands it to its own master instead: the function's body
//! becomes a master session's graph whose resource arguments are placed on the tasks their
//! resources live on (the placer puts each op that uses a resource with it), partitioned,
//! registered and run by the same code as a TF 1.x step. A resource handle's value (which
//! variable it names) is fetched once from its task with an eager `_Send` and a RecvTensor,
//! as TensorFlow's client copies a tensor between tasks.

use std::time::Instant;

use ferroflow_core::proto::config_proto::Experimental;
use ferroflow_core::proto::eager::eager_service_client::EagerServiceClient;
use ferroflow_core::proto::eager::{operation, EnqueueRequest, Operation, QueueItem, RemoteTensorHandle};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::proto::{
    attr_value::Value as AV, AttrValue, CloseSessionRequest, ConfigProto, CreateSessionRequest, RecvTensorRequest,
    RunOptions, RunStepRequest,
};
use ferroflow_core::{DataType, DeviceName, ResourceHandle, Status, Tensor};
use ferroflow_kernels::state::VAR_TYPE_NAME;

use super::context::EagerContext;
use super::EagerService;
use crate::master_api::RunStepCall;

/// A master session running one function over tasks.
pub(crate) struct Span {
    handle: String,
    feeds: Vec<String>,
    fetches: Vec<String>,
    ret_fetch: Vec<usize>,
    targets: Vec<String>,
}

fn s(v: &str) -> AttrValue {
    ferroflow_core::attr::string(v)
}

fn remaining_ms(deadline: Instant) -> i64 {
    deadline.saturating_duration_since(Instant::now()).as_millis().max(1) as i64
}

impl EagerService {
    /// The value of a tensor of the context that lives on another task.
    pub(crate) async fn fetch_remote(
        &self,
        ctx: &EagerContext,
        h: &RemoteTensorHandle,
        deadline: Instant,
    ) -> Result<Tensor, Status> {
        let id = (h.op_id, h.output_num);
        if let Some(t) = ctx.remote_values.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
            return Ok(t.clone());
        }
        let from = if h.device.is_empty() { &h.op_device } else { &h.device };
        let from = DeviceName::parse(from)?.to_string();
        let incarnation = ctx.incarnation(&from)?;
        let to = self.device(ctx);
        let session = self.worker.session(&ctx.session_handle, true)?;
        let addr = session.address_of(&from)?;
        let tensor_name = format!("eager_fetch_{:016x}", crate::ids::random_u64());
        let dtype = DataType::from_proto(h.dtype).map(|(t, _)| t).unwrap_or(DataType::Resource);
        let mut op = Operation {
            id: super::queue::NO_OP_ID,
            name: "_Send".into(),
            device: from.clone(),
            op_inputs: vec![operation::Input {
                item: Some(operation::input::Item::RemoteHandle(RemoteTensorHandle {
                    op_id: h.op_id,
                    output_num: h.output_num,
                    device: from.clone(),
                    op_device: from.clone(),
                    dtype: h.dtype,
                    ..Default::default()
                })),
            }],
            ..Default::default()
        };
        op.attrs.insert("T".into(), ferroflow_core::attr::ty(dtype));
        op.attrs.insert("tensor_name".into(), s(&tensor_name));
        op.attrs.insert("send_device".into(), s(&from));
        op.attrs.insert("recv_device".into(), s(&to));
        op.attrs.insert("send_device_incarnation".into(), AttrValue { value: Some(AV::I(incarnation as i64)) });
        op.attrs.insert("client_terminated".into(), AttrValue { value: Some(AV::B(false)) });
        let channel = self.channels.channel(&addr)?;
        let mut client = EagerServiceClient::new(channel)
            .max_decoding_message_size(crate::rpc_util::MAX_MESSAGE_SIZE)
            .max_encoding_message_size(crate::rpc_util::MAX_MESSAGE_SIZE);
        let item = QueueItem { item: Some(ferroflow_core::proto::eager::queue_item::Item::Operation(op)) };
        let req =
            crate::rpc_util::request_with_deadline(EnqueueRequest { context_id: ctx.id, queue: vec![item] }, deadline);
        client.enqueue(req).await.map_err(|e| {
            let what =
                format!("eager context {:016x}: sending op {} output {} from {from}", ctx.id, h.op_id, h.output_num);
            crate::rpc_util::from_grpc(&e, &what)
        })?;
        let key = format!("{from};{incarnation:016x};{to};{tensor_name};0:0");
        let task = DeviceName::parse(&from)?.task_name();
        let peer = self.worker.peers.peer(&task, &addr)?;
        let recv = RecvTensorRequest { step_id: ctx.id as i64, rendezvous_key: key, ..Default::default() };
        let (t, _) = peer.recv_tensor(recv, deadline).await?;
        if t.dtype() == DataType::Resource {
            ctx.remote_values.lock().unwrap_or_else(|e| e.into_inner()).insert(id, t.clone());
        }
        Ok(t)
    }

    /// Runs function `op.name` with `inputs`; `at[i]` is the device input `i`'s resource
    /// lives on (this task's device for a value).
    pub(crate) async fn run_spanning(
        &self,
        ctx: &EagerContext,
        op: &Operation,
        inputs: Vec<Tensor>,
        at: Vec<String>,
        deadline: Instant,
    ) -> Result<Vec<Tensor>, Status> {
        let own = self.device(ctx);
        // A variable of another task is named in the graph by a `VarHandleOp` on that task
        // (the same container and name: the same variable), so the ops on it run there.
        let pins: Vec<Option<ResourceHandle>> = inputs
            .iter()
            .zip(&at)
            .map(|(t, dev)| {
                let h = t.as_slice::<ResourceHandle>().ok()?.first()?;
                (*dev != own && h.maybe_type_name == VAR_TYPE_NAME && !h.dtypes_and_shapes.is_empty())
                    .then(|| h.clone())
            })
            .collect();
        let mut key = format!("{}\0{}", op.name, at.join("\0"));
        for h in pins.iter().flatten() {
            key.push_str(&format!("\0{}/{}@{}", h.container, h.name, h.device));
        }
        let mut spans = ctx.spans.lock().await;
        if !spans.contains_key(key.as_bytes()) {
            let span = self.plan_span(ctx, op, &at, &pins, deadline).await?;
            spans.insert(key.as_bytes().to_vec(), span);
        }
        let span = &spans[key.as_bytes()];
        let req = RunStepRequest {
            session_handle: span.handle.clone(),
            fetch: span.fetches.clone(),
            target: span.targets.clone(),
            options: Some(RunOptions { timeout_in_ms: remaining_ms(deadline), ..Default::default() }),
            ..Default::default()
        };
        let values = inputs.into_iter().zip(&pins).filter(|(_, p)| p.is_none()).map(|(t, _)| t);
        let feeds = span.feeds.iter().cloned().zip(values).collect();
        let ret_fetch = span.ret_fetch.clone();
        let handle = span.handle.clone();
        drop(spans);
        let reply = self.master.run_step(RunStepCall { req, feeds }).await.map_err(|e| {
            let e = e.context(format!("function {} over tasks (master session {handle})", op.name));
            as_peer_error(e, &ctx.task)
        })?;
        let fetched: Vec<Tensor> = reply.tensors.into_iter().map(|(_, t)| t).collect();
        Ok(ret_fetch.iter().map(|&i| fetched[i].clone()).collect())
    }

    async fn plan_span(
        &self,
        ctx: &EagerContext,
        op: &Operation,
        at: &[String],
        pins: &[Option<ResourceHandle>],
        deadline: Instant,
    ) -> Result<Span, Status> {
        let library = ctx.library();
        let fg = ferroflow_runtime::function_graph(&op.name, Some(&library))
            .map_err(|e| e.context(format!("eager context {:016x} on {}", ctx.id, ctx.task)))?;
        let mut graph = fg.graph;
        let own = self.device(ctx);
        let mut tasks = vec![ctx.task.clone()];
        let mut feeds = Vec::with_capacity(fg.feeds.len());
        for ((feed, dev), pin) in fg.feeds.iter().zip(at).zip(pins) {
            let name = feed.split(':').next().unwrap_or_default();
            if let Some(n) = graph.node.iter_mut().find(|n| n.name == name) {
                n.device = dev.clone();
                if let Some(h) = pin {
                    *n = var_handle_node(name, dev, h);
                }
            }
            if pin.is_none() {
                feeds.push(feed.clone());
            }
            let task = DeviceName::parse(dev)?.task_name();
            if !tasks.contains(&task) {
                tasks.push(task);
            }
        }
        // Other nodes are placed by the master: ops on a resource go with it, the rest here.
        for n in graph.node.iter_mut().filter(|n| n.device.is_empty() && n.op == "Placeholder") {
            n.device = own.clone();
        }
        graph.library = Some(library);
        let sd = ctx.server_def.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let cluster = crate::ClusterSpec::from_proto(sd.cluster.as_ref().unwrap_or(&Default::default()))?;
        let own_addr = cluster.task_address(&sd.job_name, sd.task_index)?.to_string();
        let config = ConfigProto {
            cluster_def: sd.cluster.clone(),
            device_filters: tasks.clone(),
            operation_timeout_in_ms: remaining_ms(deadline),
            experimental: Some(Experimental { share_session_state_in_clusterspec_propagation: true }),
            ..Default::default()
        };
        let created = self
            .master
            .create_session(CreateSessionRequest {
                graph_def: Some(graph),
                config: Some(config),
                target: format!("grpc://{own_addr}"),
            })
            .await
            .map_err(|e| e.context(format!("function {} over tasks {}", op.name, tasks.join(", "))))?;
        tracing::debug!(task = %ctx.task, function = %op.name, tasks = %tasks.join(","), session = %created.session_handle, "function over tasks planned");
        Ok(Span {
            handle: created.session_handle,
            feeds,
            fetches: fg.fetches,
            ret_fetch: fg.ret_fetch,
            targets: fg.targets,
        })
    }

    /// Closes the master sessions of a context's functions over tasks.
    pub(crate) fn close_spans(&self, ctx: &EagerContext) {
        let Ok(mut spans) = ctx.spans.try_lock() else { return };
        let handles: Vec<String> = spans.drain().map(|(_, s)| s.handle).collect();
        if handles.is_empty() {
            return;
        }
        let master = self.master.clone();
        self.worker.runtime.spawn(async move {
            for session_handle in handles {
                let _ = master.close_session(CloseSessionRequest { session_handle }).await;
            }
        });
    }
}

/// A `VarHandleOp` on `device` naming the variable of handle `h`.
fn var_handle_node(name: &str, device: &str, h: &ResourceHandle) -> NodeDef {
    let (dtype, dims) = h.dtypes_and_shapes[0].clone();
    let dtype = DataType::from_proto(dtype).map(|(t, _)| t).unwrap_or(DataType::Float);
    let mut n =
        NodeDef { name: name.to_string(), op: "VarHandleOp".into(), device: device.to_string(), ..Default::default() };
    n.attr.insert("container".into(), s(&h.container));
    n.attr.insert("shared_name".into(), s(&h.name));
    n.attr.insert("dtype".into(), ferroflow_core::attr::ty(dtype));
    // A handle's shape has no unknown-rank marker: no dims may be a scalar or unknown.
    let shape = if dims.is_empty() { None } else { Some(dims.as_slice()) };
    n.attr.insert("shape".into(), ferroflow_core::attr::shape(shape));
    n
}

/// A failure of another task, worded as TensorFlow's client words a failed RPC to it
/// ("... GRPC error information from remote target /job:ps/..."): `ClusterCoordinator`
/// tells a lost ps from a lost worker by that text.
fn as_peer_error(mut e: Status, own: &str) -> Status {
    use ferroflow_core::Code;
    let Some(task) = e.task().map(str::to_string) else { return e };
    if task == own || !matches!(e.code, Code::Unavailable | Code::Aborted) {
        return e;
    }
    e.message =
        format!("{}\nAdditional GRPC error information from remote target {task} while calling a step", e.message);
    e
}
