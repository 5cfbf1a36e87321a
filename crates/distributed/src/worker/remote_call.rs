//! `RemoteCall` to another task, run by the caller step's rendezvous: the function is
//! registered on the target task as a graph (its arguments fed, its results fetched, as
//! TensorFlow's cluster function library does), once per worker session, target device and
//! function; each call is then one RunGraph under a fresh step id, bounded by the caller's
//! deadline and cancelled with the caller's step.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use ferroflow_core::proto::{GraphDef, NodeDef, RegisterGraphRequest, RunGraphRequest};
use ferroflow_core::{attr, DeviceName, Status, Tensor};
use ferroflow_kernels::{FunctionCall, FunctionDone};

use super::remote_rendezvous::RemoteRendezvous;
use super::session::{RemoteFunction, WorkerSession};
use crate::ids::new_step_id;
use crate::master::worker_handle::TaskWorker;
use crate::worker_api::RunGraphCall;
use crate::worker_cache::WorkerCache;

impl RemoteRendezvous {
    /// Runs `call` on its target task; `done` gets the results.
    pub(crate) fn run_remote_function(&self, call: FunctionCall, done: FunctionDone) {
        let deadline = call.deadline.map_or(self.deadline, |d| d.min(self.deadline));
        let (tx, rx) = tokio::sync::oneshot::channel::<Status>();
        let tx = Mutex::new(Some(tx));
        let link = call.cancel.register(move |s| {
            if let Some(t) = tx.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = t.send(s.clone());
            }
        });
        let Some(link) = link else {
            return done(Err(call.cancel.status().unwrap_or_else(|| Status::cancelled("step cancelled"))));
        };
        let session = self.session.clone();
        let peers = self.peers.clone();
        self.runtime.spawn(async move {
            let what = format!("RemoteCall of function '{}' on '{}'", call.function, call.target);
            let r = tokio::select! {
                r = run(&session, peers.as_ref(), &call, deadline) => r.map_err(|e| e.context(what)),
                s = rx => Err(s.unwrap_or_else(|_| Status::cancelled(format!("{what}: the step ended")))),
            };
            call.cancel.deregister(link);
            done(r)
        });
    }
}

/// The target's full device name and its task.
fn target_device(target: &str) -> Result<(String, String), Status> {
    let d = DeviceName::parse(target)?;
    if d.job.is_none() || d.task.is_none() {
        return Err(Status::invalid_argument(format!(
            "target '{target}' must name a job and a task (e.g. /job:ps/replica:0/task:0/device:CPU:0)"
        )));
    }
    let ty = d.device_type.clone().unwrap_or_else(|| "CPU".into());
    if !ty.eq_ignore_ascii_case("CPU") {
        return Err(Status::invalid_argument(format!("target '{target}': ferroflow tasks have only CPU devices")));
    }
    let task =
        format!("/job:{}/replica:{}/task:{}", d.job.unwrap_or_default(), d.replica.unwrap_or(0), d.task.unwrap_or(0));
    Ok((format!("{task}/device:CPU:{}", d.id.unwrap_or(0)), task))
}

/// The graph that runs `call`'s function on `device`: placeholders for the arguments, a
/// `StatefulPartitionedCall`, rewritten so the arguments are fed and the results fetched.
fn function_graph(call: &FunctionCall, device: &str) -> Result<ferroflow_graph::ClientGraph, Status> {
    let mut nodes = Vec::with_capacity(call.args.len() + 1);
    let mut feeds = Vec::with_capacity(call.args.len());
    for (i, a) in call.args.iter().enumerate() {
        let mut p =
            NodeDef { name: format!("arg_{i}"), op: "Placeholder".into(), device: device.into(), ..Default::default() };
        p.attr.insert("dtype".into(), attr::ty(a.dtype()));
        feeds.push(format!("arg_{i}:0"));
        nodes.push(p);
    }
    let mut c = NodeDef {
        name: "call".into(),
        op: "StatefulPartitionedCall".into(),
        device: device.into(),
        input: (0..call.args.len()).map(|i| format!("arg_{i}")).collect(),
        ..Default::default()
    };
    c.attr.insert("Tin".into(), attr::list_type(&call.args.iter().map(Tensor::dtype).collect::<Vec<_>>()));
    c.attr.insert("Tout".into(), attr::list_type(&call.tout));
    c.attr.insert("f".into(), attr::func(&call.function));
    nodes.push(c);
    let fetches: Vec<String> = (0..call.tout.len()).map(|i| format!("call:{i}")).collect();
    let gd = GraphDef { node: nodes, library: Some((*call.library).clone()), ..Default::default() };
    ferroflow_graph::rewrite_for_client(&gd, &feeds, &fetches, &[], device, 1)
}

async fn run(
    session: &Arc<WorkerSession>,
    peers: &dyn WorkerCache,
    call: &FunctionCall,
    deadline: Instant,
) -> Result<Vec<Tensor>, Status> {
    let (device, task) = target_device(&call.target)?;
    let addr = session.address_of(&task)?;
    let worker = TaskWorker::peer(task.clone(), addr.clone(), peers.peer(&task, &addr)?);
    let key = (device.clone(), call.function.clone());
    let RemoteFunction { handle, feed_keys, fetch_keys } = match session.remote_function(&key) {
        Some(f) => f,
        None => {
            let rw = function_graph(call, &device)?;
            let (feed_keys, fetch_keys) = (rw.feed_keys(), rw.fetch_keys());
            let req = RegisterGraphRequest {
                session_handle: session.handle.clone(),
                create_worker_session_called: !session.handle.is_empty(),
                graph_def: Some(rw.graph),
                ..Default::default()
            };
            let handle = worker.register_graph(req, deadline).await?;
            let f = RemoteFunction { handle, feed_keys, fetch_keys };
            session.set_remote_function(key.clone(), f.clone());
            f
        }
    };
    let step_id = new_step_id();
    let req = RunGraphRequest {
        session_handle: session.handle.clone(),
        create_worker_session_called: !session.handle.is_empty(),
        graph_handle: handle,
        step_id,
        recv_key: fetch_keys.clone(),
        ..Default::default()
    };
    let send = call.args.iter().zip(&feed_keys).map(|(t, k)| (k.clone(), t.clone())).collect();
    let mut resp = match worker.run_graph(RunGraphCall { req, send }, deadline).await {
        Ok(r) => r,
        Err(e) => {
            if e.worker_possibly_restarted() {
                // The target restarted: register again at the next call.
                session.forget_remote_function(&key);
            }
            if !worker.releases_steps() {
                let _ = worker.cleanup_graph(step_id, deadline).await;
            }
            return Err(e);
        }
    };
    if !worker.releases_steps() {
        let _ = worker.cleanup_graph(step_id, deadline).await;
    }
    let mut out = Vec::with_capacity(fetch_keys.len());
    for (i, k) in fetch_keys.iter().enumerate() {
        let at =
            resp.recv.iter().position(|(name, _)| name == k).ok_or_else(|| {
                Status::internal(format!("the target's RunGraph reply has no result {i} (key '{k}')"))
            })?;
        let t = resp.recv.swap_remove(at).1;
        if t.dtype() != call.tout[i] {
            return Err(Status::invalid_argument(format!(
                "result {i} is {} but Tout says {}",
                t.dtype(),
                call.tout[i]
            )));
        }
        out.push(t);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_completed_or_refused() {
        let (d, t) = target_device("/job:ps/task:1").unwrap();
        assert_eq!(d, "/job:ps/replica:0/task:1/device:CPU:0");
        assert_eq!(t, "/job:ps/replica:0/task:1");
        assert_eq!(target_device("/job:ps/replica:0/task:0/cpu:2").unwrap().0, "/job:ps/replica:0/task:0/device:CPU:2");
        assert!(target_device("/device:CPU:0").unwrap_err().message.contains("job and a task"));
        assert!(target_device("/job:ps/task:0/device:GPU:0").is_err());
    }
}
