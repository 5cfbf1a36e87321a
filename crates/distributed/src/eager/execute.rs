//! Runs a remote eager operation on this task: a single op, a function call or a component
//! function of a multi-device function becomes a graph (inputs fed, outputs fetched, as a
//! session's client graph), registered once per signature in the context's worker session
//! and run as a step of the worker (its rendezvous, resources, deadline and cancellation).
//! A component function runs at the step id its caller gave all components
//! (`func_step_id`), so its `_Send`/`_Recv` nodes meet their peers' on other tasks through
//! RecvTensor exactly as graph partitions do.

use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::eager::Operation;
use ferroflow_core::proto::{
    attr_value::Value as AV, AttrValue, GraphDef, NodeDef, RegisterGraphRequest, RunGraphRequest,
};
use ferroflow_core::{attr, DataType, Status, Tensor};

use super::context::EagerContext;
use crate::worker::Worker;
use crate::worker_api::RunGraphCall;

/// A registered graph of the context and how to feed and fetch it.
#[derive(Clone)]
pub(crate) struct Prepared {
    graph_handle: String,
    feed_keys: Vec<String>,
    fetch_keys: Vec<String>,
    /// For each output, its position in `fetch_keys`.
    ret_fetch: Vec<usize>,
}

impl Prepared {
    pub(crate) fn num_outputs(&self) -> usize {
        self.ret_fetch.len()
    }
}

/// Whether `op` calls a function of the context rather than an op.
pub(crate) fn is_function_call(ctx: &EagerContext, op: &Operation) -> bool {
    op.is_function || op.is_component_function || ctx.has_function(&op.name)
}

/// The cache key of a single op: its type, attrs (sorted) and input types.
fn op_key(op: &Operation, input_types: &[DataType]) -> Vec<u8> {
    let mut key = format!("op\0{}\0", op.name).into_bytes();
    let mut names: Vec<&String> = op.attrs.keys().collect();
    names.sort();
    for n in names {
        key.extend_from_slice(n.as_bytes());
        key.push(0);
        key.extend_from_slice(&prost::Message::encode_to_vec(&op.attrs[n]));
        key.push(0);
    }
    for t in input_types {
        key.extend_from_slice(&(*t as i32).to_le_bytes());
    }
    key
}

/// Whether an attr names a function (a dataset's map function, `If`'s branches, …).
fn names_function(v: &AttrValue) -> bool {
    match &v.value {
        Some(AV::Func(_)) => true,
        Some(AV::List(l)) => !l.func.is_empty(),
        _ => false,
    }
}

/// The graph of one op: a `Placeholder` per input, the op, its outputs fetched.
fn op_graph(op: &Operation, input_types: &[DataType]) -> Result<(GraphDef, Vec<String>, Vec<String>), Status> {
    let mut nodes = Vec::with_capacity(input_types.len() + 1);
    let mut feeds = Vec::with_capacity(input_types.len());
    let mut node = NodeDef { name: "eager_op".into(), op: op.name.clone(), ..Default::default() };
    for (i, t) in input_types.iter().enumerate() {
        let mut p = NodeDef { name: format!("eager_in_{i}"), op: "Placeholder".into(), ..Default::default() };
        p.attr.insert("dtype".into(), attr::ty(*t));
        feeds.push(format!("eager_in_{i}:0"));
        node.input.push(format!("eager_in_{i}:0"));
        nodes.push(p);
    }
    node.attr = op.attrs.clone().into_iter().collect();
    let mut resolved = node.clone();
    let sig = ferroflow_graph::resolve_node(&mut resolved)
        .map_err(|e| e.context(format!("eager operation {} ({})", op.id, op.name)))?;
    for (i, (want, _)) in sig.inputs.iter().enumerate() {
        if *want != input_types[i] {
            return Err(Status::invalid_argument(format!(
                "eager operation {} ({}): input {i} is a {:?} tensor where the op expects {:?}",
                op.id, op.name, input_types[i], want
            )));
        }
    }
    let fetches = (0..sig.outputs.len()).map(|k| format!("eager_op:{k}")).collect();
    nodes.push(resolved);
    Ok((GraphDef { node: nodes, ..Default::default() }, feeds, fetches))
}

impl super::EagerService {
    /// The registered graph for `op` with inputs of `input_types`, made on first use.
    pub(crate) fn prepare(
        &self,
        ctx: &Arc<EagerContext>,
        op: &Operation,
        input_types: &[DataType],
    ) -> Result<Prepared, Status> {
        let function = is_function_call(ctx, op);
        let key = if function { format!("fn\0{}", op.name).into_bytes() } else { op_key(op, input_types) };
        if let Some(p) = ctx.graphs.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(p.clone());
        }
        let device = format!("{}/device:CPU:0", ctx.task);
        let library = ctx.library();
        let (gd, feeds, fetches, ret_fetch, targets) = if function {
            let fg = ferroflow_runtime::function_graph(&op.name, Some(&library)).map_err(|e| {
                e.context(format!("eager context {:016x} on {}: function '{}'", ctx.id, ctx.task, op.name))
            })?;
            (fg.graph, fg.feeds, fg.fetches, fg.ret_fetch, fg.targets)
        } else {
            let (gd, feeds, fetches) = op_graph(op, input_types)?;
            let ret_fetch = (0..fetches.len()).collect();
            (gd, feeds, fetches, ret_fetch, vec!["eager_op".to_string()])
        };
        let rw =
            ferroflow_graph::rewrite_for_client(&gd, &feeds, &fetches, &targets, &device, self.worker.incarnation)?;
        let (feed_keys, fetch_keys) = (rw.feed_keys(), rw.fetch_keys());
        let mut graph = rw.graph;
        let needs_library = function || op.attrs.values().any(names_function);
        if needs_library {
            graph.library = Some(library);
        }
        let reply = self.worker.register_graph(RegisterGraphRequest {
            session_handle: ctx.session_handle.clone(),
            create_worker_session_called: true,
            graph_def: Some(graph),
            ..Default::default()
        })?;
        let p = Prepared { graph_handle: reply.graph_handle, feed_keys, fetch_keys, ret_fetch };
        ctx.graphs.lock().unwrap_or_else(|e| e.into_inner()).insert(key, p.clone());
        Ok(p)
    }

    /// Runs a prepared graph at `step_id` with `inputs`; returns its outputs in order.
    pub(crate) async fn run_prepared(
        &self,
        ctx: &EagerContext,
        p: &Prepared,
        inputs: Vec<Tensor>,
        step_id: i64,
        deadline: Instant,
    ) -> Result<Vec<Tensor>, Status> {
        if inputs.len() != p.feed_keys.len() {
            return Err(Status::invalid_argument(format!(
                "eager context {:016x} on {}: {} inputs given where {} are expected",
                ctx.id,
                ctx.task,
                inputs.len(),
                p.feed_keys.len()
            )));
        }
        let req = RunGraphRequest {
            session_handle: ctx.session_handle.clone(),
            create_worker_session_called: true,
            graph_handle: p.graph_handle.clone(),
            step_id,
            recv_key: p.fetch_keys.clone(),
            ..Default::default()
        };
        let send = p.feed_keys.iter().cloned().zip(inputs).collect();
        let reply = run_on(&self.worker, RunGraphCall { req, send }, deadline).await?;
        let fetched: Vec<Tensor> = reply.into_iter().map(|(_, t)| t).collect();
        Ok(p.ret_fetch.iter().map(|&i| fetched[i].clone()).collect())
    }
}

async fn run_on(worker: &Worker, call: RunGraphCall, deadline: Instant) -> Result<Vec<(String, Tensor)>, Status> {
    Ok(worker.run_graph(call, Some(deadline)).await?.recv)
}
