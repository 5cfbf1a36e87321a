//! Functions whose inputs live on other tasks: ParameterServerStrategy's step function runs
//! on a worker and takes the variables of the ps tasks as resource handles. TensorFlow's
//! worker partitions such a function itself and runs the parts on the other tasks as
//! component functions; ferroflow's hands it to its own master instead: the function's body
//! becomes a master session's graph whose resource arguments are placed on the tasks their
//! resources live on (the placer puts each op that uses a resource with it), partitioned,
//! registered and run by the same code as a TF 1.x step. A resource handle's value (which
//! variable it names) is fetched once from its task with an eager `_Send` and a RecvTensor,
//! as TensorFlow's client copies a tensor between tasks.

use std::collections::HashMap;
use std::time::Instant;

use ferroflow_core::proto::config_proto::Experimental;
use ferroflow_core::proto::eager::eager_service_client::EagerServiceClient;
use ferroflow_core::proto::eager::{operation, EnqueueRequest, Operation, QueueItem, RemoteTensorHandle};
use ferroflow_core::proto::{
    attr_value::Value as AV, AttrValue, CloseSessionRequest, ConfigProto, CreateSessionRequest, RecvTensorRequest,
    RunOptions, RunStepRequest,
};
use ferroflow_core::proto::{FunctionDefLibrary, NodeDef};
use ferroflow_core::{DataType, DeviceName, ResourceHandle, Status, Tensor};

use super::context::EagerContext;
use super::packed::Packed;
use super::EagerService;
use crate::master_api::RunStepCall;

/// A master session running one function over tasks.
pub(crate) struct Span {
    handle: String,
    feeds: Vec<(String, Feed)>,
    fetches: Vec<String>,
    ret_fetch: Vec<usize>,
    targets: Vec<String>,
}

/// Where a fed value comes from.
#[derive(Clone, Copy)]
enum Feed {
    /// The call's input `i`.
    Input(usize),
    /// Element `k` of the packed handle given as input `i`.
    Element(usize, usize),
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
        let mut client = EagerServiceClient::new(crate::PeerChannel::new(channel))
            .max_decoding_message_size(crate::rpc_util::MAX_MESSAGE_SIZE)
            .max_encoding_message_size(crate::rpc_util::MAX_MESSAGE_SIZE);
        let item = QueueItem { item: Some(ferroflow_core::proto::eager::queue_item::Item::Operation(op)) };
        let req =
            crate::rpc_util::request_with_deadline(EnqueueRequest { context_id: ctx.id, queue: vec![item] }, deadline);
        client.enqueue(req).await.map_err(|e| {
            let what =
                format!("eager context {:016x}: sending op {} output {} from {from}", ctx.id, h.op_id, h.output_num);
            crate::rpc_util::from_grpc_call(&e, &what, deadline)
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
    /// lives on (this task's device for a value); `packed[i]` is set when input `i` is a
    /// packed handle.
    pub(crate) async fn run_spanning(
        &self,
        ctx: &EagerContext,
        op: &Operation,
        inputs: Vec<Tensor>,
        at: Vec<String>,
        packed: Vec<Option<Packed>>,
        deadline: Instant,
    ) -> Result<Vec<Tensor>, Status> {
        let own = self.device(ctx);
        // A variable of another task is named in the graph by a `VarHandleOp` on that task
        // (the same container and name: the same variable), so the ops on it run there.
        let pins: Vec<Option<ResourceHandle>> = inputs
            .iter()
            .zip(&at)
            .zip(&packed)
            .map(|((t, dev), p)| if p.is_some() { None } else { super::packed::pinned(t, dev, &own) })
            .collect();
        let mut key = format!("{}\0{}", op.name, at.join("\0"));
        for h in pins.iter().flatten() {
            key.push_str(&format!("\0{}/{}@{}", h.container, h.name, h.device));
        }
        for (i, p) in packed.iter().enumerate() {
            if let Some(p) = p {
                key.push_str(&format!("\0packed {i}: {}", super::packed::key(p)));
            }
        }
        let mut spans = ctx.spans.lock().await;
        if !spans.contains_key(key.as_bytes()) {
            let span = self.plan_span(ctx, op, &at, &pins, &packed, deadline).await?;
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
        let feeds = span
            .feeds
            .iter()
            .map(|(name, from)| {
                let t = match *from {
                    Feed::Input(i) => inputs[i].clone(),
                    Feed::Element(i, k) => {
                        packed[i].as_ref().map_or_else(|| Tensor::scalar(0i32), |p| p[k].value.clone())
                    }
                };
                (name.clone(), t)
            })
            .collect();
        let ret_fetch = span.ret_fetch.clone();
        let handle = span.handle.clone();
        drop(spans);
        let t0 = Instant::now();
        let reply = self.master.run_step(RunStepCall { req, feeds }).await;
        tracing::debug!(task = %ctx.task, function = %op.name, us = t0.elapsed().as_micros() as u64, "function over tasks ran");
        let reply = reply.map_err(|e| {
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
        packed: &[Option<Packed>],
        deadline: Instant,
    ) -> Result<Span, Status> {
        let library = ctx.library();
        let fg = ferroflow_runtime::function_graph(&op.name, Some(&library))
            .map_err(|e| e.context(format!("eager context {:016x} on {}", ctx.id, ctx.task)))?;
        let mut graph = fg.graph;
        let own = self.device(ctx);
        let mut tasks = vec![ctx.task.clone()];
        let mut feeds = Vec::with_capacity(fg.feeds.len());
        let mut targets = fg.targets.clone();
        for (i, ((feed, dev), pin)) in fg.feeds.iter().zip(at).zip(pins).enumerate() {
            let name = feed.split(':').next().unwrap_or_default();
            if let Some(p) = &packed[i] {
                let requested = requested_devices(&library, &op.name);
                let x = super::packed::expand(&mut graph, name, p, &requested, &own, &fg.targets)
                    .map_err(|e| e.context(format!("function {} input {i}", op.name)))?;
                feeds.extend(x.feeds.into_iter().map(|(f, k)| (f, Feed::Element(i, k))));
                targets.extend(x.targets);
                for e in p.iter() {
                    let task = DeviceName::parse(&e.device)?.task_name();
                    if !tasks.contains(&task) {
                        tasks.push(task);
                    }
                }
                continue;
            }
            if let Some(n) = graph.node.iter_mut().find(|n| n.name == name) {
                n.device = dev.clone();
                if let Some(h) = pin {
                    *n = var_handle_node(name, dev, h);
                }
            }
            if pin.is_none() {
                feeds.push((feed.clone(), Feed::Input(i)));
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
            experimental: Some(Experimental {
                share_session_state_in_clusterspec_propagation: true,
                ..Default::default()
            }),
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
        Ok(Span { handle: created.session_handle, feeds, fetches: fg.fetches, ret_fetch: fg.ret_fetch, targets })
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

/// The device each node of function `name`'s body asked for (`with tf.device`).
fn requested_devices(library: &FunctionDefLibrary, name: &str) -> HashMap<String, String> {
    let f = library.function.iter().find(|f| f.signature.as_ref().is_some_and(|s| s.name == name));
    f.map(|f| f.node_def.iter().map(|n| (n.name.clone(), n.device.clone())).collect()).unwrap_or_default()
}

/// A `VarHandleOp` on `device` naming the variable of handle `h`.
pub(crate) fn var_handle_node(name: &str, device: &str, h: &ResourceHandle) -> NodeDef {
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
