//! RegisterGraph / DeregisterGraph: validate a partition graph and keep its executor.

use std::sync::Arc;

use ferroflow_core::proto::{DeregisterGraphRequest, RegisterGraphRequest, RegisterGraphResponse};
use ferroflow_core::{DeviceName, Status};
use ferroflow_runtime::Executor;

use super::worker::Worker;

impl Worker {
    /// RegisterGraph: every node must be placed on this task (an empty device means this
    /// task's CPU); every op, attr and edge is validated and every kernel created now, so a
    /// bad graph fails here with InvalidArgument naming the node.
    pub fn register_graph(&self, req: RegisterGraphRequest) -> Result<RegisterGraphResponse, Status> {
        let session = self.session(&req.session_handle, req.create_worker_session_called)?;
        let mut gd = req.graph_def.unwrap_or_default();
        let name = if session.handle.is_empty() { String::new() } else { format!(" of session {}", session.handle) };
        self.opts.graph_limits.check(
            &format!("RegisterGraph on {}: the graph{name}", session.task),
            gd.node.len(),
            prost::Message::encoded_len(&gd) as u64,
        )?;
        let own = DeviceName::parse(&session.device)?;
        let cpus = self.opts.cpu_devices.max(1);
        for n in gd.node.iter_mut() {
            if n.device.is_empty() {
                n.device = session.device.clone();
                continue;
            }
            let d = DeviceName::parse(&n.device).map_err(|e| {
                Status::invalid_argument(format!(
                    "RegisterGraph on {}: node '{}' (op {}) has an invalid device '{}': {}",
                    session.task, n.name, n.op, n.device, e.message
                ))
            })?;
            let on_this_task = d.job.as_ref().is_none_or(|j| Some(j) == own.job.as_ref())
                && d.task.is_none_or(|t| Some(t) == own.task)
                && d.replica.unwrap_or(0) == own.replica.unwrap_or(0);
            let cpu = d.device_type.as_deref().is_none_or(|t| t.eq_ignore_ascii_case("CPU"))
                && d.id.is_none_or(|i| i >= 0 && (i as usize) < cpus);
            if !on_this_task || !cpu {
                return Err(Status::invalid_argument(format!(
                    "RegisterGraph on {}: node '{}' (op {}) is assigned to device '{}', which is not on this task; \
                     this task has [{}]",
                    session.task,
                    n.name,
                    n.op,
                    n.device,
                    (0..cpus).map(|i| format!("{}/device:CPU:{i}", session.task)).collect::<Vec<_>>().join(", ")
                )));
            }
        }
        if ferroflow_runtime::dependency_optimization_enabled(req.graph_options.as_ref()) {
            let n = ferroflow_runtime::convert_control_only(&mut gd, &[]);
            if n > 0 {
                tracing::debug!(task = %self.task, converted = n, "nodes read only through control edges run as NoOps");
            }
        }
        if ferroflow_runtime::remapping_enabled(req.graph_options.as_ref()) {
            let n = ferroflow_runtime::fuse_ops_in_place(&mut gd);
            if n > 0 {
                tracing::debug!(task = %self.task, fused = n, "fused MatMul/Conv2D + BiasAdd (+ Relu) chains, indexed MaxPool gradients");
            }
        }
        let nodes = gd.node.len();
        let exec = Executor::from_graph(gd).map_err(|e| {
            Status::invalid_argument(format!("RegisterGraph on {}: invalid graph: {}", session.task, e.message))
        })?;
        let handle = session.add_graph(Arc::new(exec));
        tracing::debug!(task = %self.task, session = %session.handle, graph = %handle, nodes, "graph registered");
        Ok(RegisterGraphResponse { graph_handle: handle })
    }

    /// DeregisterGraph.
    pub fn deregister_graph(&self, req: &DeregisterGraphRequest) -> Result<(), Status> {
        let session = self.session(&req.session_handle, req.create_worker_session_called)?;
        session.remove_graph(&req.graph_handle)
    }
}
