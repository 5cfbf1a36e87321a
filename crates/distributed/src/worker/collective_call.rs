//! A collective op's member run by its step's rendezvous: on the tokio runtime, bounded by
//! the step's deadline and ended by the step's cancellation.

use std::sync::{Arc, Mutex};

use ferroflow_core::Status;
use ferroflow_kernels::{CollectiveCall, CollectiveDone};

use super::remote_rendezvous::RemoteRendezvous;
use crate::collective::PeerFinder;
use crate::worker_cache::WorkerCache;

impl RemoteRendezvous {
    /// Runs `call`; `done` gets the member's output.
    pub(crate) fn run_collective(&self, call: CollectiveCall, done: CollectiveDone) {
        let deadline = call.deadline.map_or(self.deadline, |d| d.min(self.deadline));
        let (tx, rx) = tokio::sync::oneshot::channel::<Status>();
        let tx = Mutex::new(Some(tx));
        let cancel = call.cancel.clone();
        let link = cancel.register(move |s| {
            if let Some(t) = tx.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = t.send(s.clone());
            }
        });
        let Some(link) = link else {
            return done(Err(cancel.status().unwrap_or_else(|| Status::cancelled("step cancelled"))));
        };
        let me = super::worker::cpu_device(call.device.clone(), self.incarnation);
        let session = self.session.clone();
        let peers: Arc<dyn WorkerCache> = self.peers.clone();
        let finder: PeerFinder = Arc::new(move |task: &str| {
            let addr = session.address_of(task)?;
            peers.peer(task, &addr)
        });
        let coll = self.collectives.clone();
        let step_id = self.entry.step_id;
        self.runtime.spawn(async move {
            let what = format!(
                "collective '{}' (group {}, instance {}) on {}",
                call.node, call.group_key, call.instance_key, call.device
            );
            let bounded = tokio::time::timeout_at(
                tokio::time::Instant::from_std(deadline),
                coll.run(call, step_id, me, finder, deadline),
            );
            let r = tokio::select! {
                r = bounded => match r {
                    Ok(r) => r.map_err(|e| e.context(what)),
                    Err(_) => Err(Status::deadline_exceeded(format!("{what}: the step's deadline passed"))),
                },
                s = rx => Err(s.unwrap_or_else(|_| Status::cancelled(format!("{what}: the step ended")))),
            };
            cancel.deregister(link);
            done(r)
        });
    }
}
