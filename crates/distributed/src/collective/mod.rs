//! Collective ops across tasks, speaking TensorFlow's protocol: a task's [`Collectives`]
//! resolves groups (as the group leader named by the server config's
//! `experimental.collective_group_leader`, or by asking it with `CompleteGroup` /
//! `CompleteInstance`), keeps the chunks its members provide ([`bufs`]) for peers to take
//! with `RecvBuf`, answers `GetStepSequence` as the leader, and runs its members' parts of
//! the ring all-reduce, ring all-gather and tree broadcast ([`algo`]).

mod algo;
mod bufs;
mod group;
mod member;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use ferroflow_core::proto::{
    CompleteGroupRequest, CompleteGroupResponse, CompleteInstanceRequest, CompleteInstanceResponse,
    GetStepSequenceResponse, RecvBufRequest, StepSequence,
};
use ferroflow_core::{DeviceName, Status};

use crate::worker_api::{CollectiveReply, CollectiveRpc};
pub(crate) use member::PeerFinder;

/// One task's side of the collectives of its cluster.
pub(crate) struct Collectives {
    /// This task (`/job:J/replica:0/task:T`).
    task: String,
    /// The group leader's task, in the same form.
    leader: String,
    groups: group::Groups,
    bufs: bufs::BufTable,
    /// Broadcast sources learned from the leader, by (group, instance).
    sources: Mutex<HashMap<(i32, i32), i32>>,
    /// As the leader: the next step id of each collective graph key.
    step_seqs: Mutex<HashMap<i64, i64>>,
    /// RecvBuf replies carry a chunk in pieces of at most this many bytes.
    piece: usize,
}

/// The canonical task name of a task or device name (`/job:J/replica:R/task:T`).
pub(crate) fn canonical_task(name: &str) -> Result<String, Status> {
    let d = DeviceName::parse(name)?;
    match (d.job, d.task) {
        (Some(j), Some(t)) => Ok(format!("/job:{j}/replica:{}/task:{t}", d.replica.unwrap_or(0))),
        _ => Err(Status::invalid_argument(format!("'{name}' does not name a job and a task"))),
    }
}

impl Collectives {
    /// The collectives of `task`; `leader` from the server's config (TensorFlow's
    /// `collective_group_leader`), else `default_leader`; `max_chunk` is
    /// `recv_buf_max_chunk` (0 or negative: one piece).
    pub(crate) fn new(task: &str, leader: Option<&str>, default_leader: &str, max_chunk: i32) -> Collectives {
        let leader = leader
            .filter(|l| !l.is_empty())
            .and_then(|l| canonical_task(l).ok())
            .unwrap_or_else(|| default_leader.to_string());
        // TensorFlow's default piece is 4096 bytes; every client (TensorFlow's too) joins
        // the pieces, so ferroflow's default sends a chunk whole, without thousands of
        // small fields to encode and decode.
        let piece = match max_chunk {
            0 => usize::MAX,
            n if n < 0 => usize::MAX,
            n => n as usize,
        };
        Collectives {
            task: task.to_string(),
            leader,
            groups: Default::default(),
            bufs: Default::default(),
            sources: Default::default(),
            step_seqs: Default::default(),
            piece,
        }
    }

    /// The piece size of RecvBuf replies.
    pub(crate) fn recv_piece(&self) -> usize {
        self.piece
    }

    fn is_leader(&self, task: &str) -> bool {
        self.leader == task
    }

    /// The group leader's task.
    pub(crate) fn leader(&self) -> &str {
        &self.leader
    }

    /// Serves a peer's collective RPC (`incarnation`: this task's devices').
    pub(crate) async fn serve(
        &self,
        req: CollectiveRpc,
        incarnation: u64,
        deadline: Instant,
    ) -> Result<CollectiveReply, Status> {
        match req {
            CollectiveRpc::CompleteGroup(r) => {
                self.complete_group(r, deadline).await.map(CollectiveReply::CompleteGroup)
            }
            CollectiveRpc::CompleteInstance(r) => {
                self.complete_instance(r, deadline).await.map(CollectiveReply::CompleteInstance)
            }
            CollectiveRpc::RecvBuf(r) => self.recv_buf(r, incarnation, deadline).await.map(CollectiveReply::RecvBuf),
            CollectiveRpc::GetStepSequence(r) => {
                if !self.is_leader(&self.task) {
                    return Err(Status::internal(format!(
                        "GetStepSequenceAsync called at non-group-leader {} (the leader is {})",
                        self.task, self.leader
                    )));
                }
                let mut seqs = self.step_seqs.lock().unwrap_or_else(|e| e.into_inner());
                let step_sequence = r
                    .graph_key
                    .iter()
                    .map(|&k| StepSequence {
                        graph_key: k,
                        next_step_id: *seqs.entry(k).or_insert_with(random_step_id),
                    })
                    .collect();
                Ok(CollectiveReply::GetStepSequence(GetStepSequenceResponse { step_sequence }))
            }
        }
    }

    async fn complete_group(
        &self,
        r: CompleteGroupRequest,
        deadline: Instant,
    ) -> Result<CompleteGroupResponse, Status> {
        let Some(dev) = r.device_attributes else {
            return Err(Status::internal("CompleteGroupRequest device_attributes is not set. Make sure you're running the same version of Tensorflow on all workers."));
        };
        if r.group_size <= 0 || canonical_task(&dev.name).is_err() {
            return Err(Status::invalid_argument(format!(
                "CompleteGroup: group {} needs a positive group_size (got {}) and a full device name (got '{}')",
                r.group_key, r.group_size, dev.name
            )));
        }
        if !self.is_leader(&self.task) {
            return Err(Status::internal(format!(
                "CompleteGroup for group {} reached {}, which is not the group leader ({})",
                r.group_key, self.task, self.leader
            )));
        }
        let name = dev.name.clone();
        let rx = self.groups.join(r.group_key, r.group_size, &r.device_type, dev);
        let g = member::bounded(rx, deadline, || {
            format!("CompleteGroup of group {} for {name}: the group did not complete in time", r.group_key)
        })
        .await?;
        Ok(CompleteGroupResponse {
            group_key: g.key,
            group_size: g.members.len() as i32,
            device_type: g.device_type.clone(),
            num_tasks: g.num_tasks as i32,
            communicator_key: Vec::new(),
            device_attributes: g.members.clone(),
        })
    }

    async fn complete_instance(
        &self,
        r: CompleteInstanceRequest,
        deadline: Instant,
    ) -> Result<CompleteInstanceResponse, Status> {
        let Some(g) = self.groups.known(r.group_key) else {
            return Err(Status::failed_precondition(format!(
                "group {} is not initialized. Please call group initialization methods before the collective",
                r.group_key
            )));
        };
        // Broadcasts wait for their source; reductions and gathers need nothing more.
        if r.r#type != 1 {
            return Ok(CompleteInstanceResponse { instance_key: r.instance_key, source_rank: -1 });
        }
        let rx = self.groups.report(&g, r.instance_key, &r.device, r.is_source);
        let source = member::bounded(rx, deadline, || {
            format!("CompleteInstance {} of group {}: not every member reported in time", r.instance_key, r.group_key)
        })
        .await?;
        Ok(CompleteInstanceResponse { instance_key: r.instance_key, source_rank: source })
    }

    async fn recv_buf(&self, r: RecvBufRequest, incarnation: u64, deadline: Instant) -> Result<Vec<u8>, Status> {
        if r.src_incarnation != 0 && r.src_incarnation != incarnation {
            return Err(Status::failed_precondition(format!(
                "RecvBuf expects a different device incarnation: {} vs. {incarnation}. Your worker job that contains \
                 the device (\"{}\") was probably restarted. Check your worker job for the reason why it was \
                 restarted.",
                r.src_incarnation, r.src_device
            )));
        }
        if r.buf_rendezvous_key.is_empty() || r.num_bytes < 0 {
            return Err(Status::invalid_argument(format!(
                "RecvBuf on {}: a request must name a chunk (buf_rendezvous_key '{}') and its size (num_bytes {})",
                self.task, r.buf_rendezvous_key, r.num_bytes
            )));
        }
        let rx = self.bufs.take(r.step_id, &r.buf_rendezvous_key)?;
        let key = r.buf_rendezvous_key.clone();
        let got = member::bounded_value(rx, deadline).await;
        match got {
            Some(b) => Ok(b),
            None => {
                self.bufs.give_up(r.step_id, &key);
                Err(Status::deadline_exceeded(format!(
                    "RecvBuf on {}: chunk '{key}' of step {} was not provided in time",
                    self.task, r.step_id
                )))
            }
        }
    }
}

/// The step ids of a graph with collective ops, as TensorFlow's masters take them so that
/// several masters running the same graph (one client per worker) agree: from this
/// server's sequence for the graph key, which the group leader starts (asked once with
/// `GetStepSequence` by the other masters) and each master advances after a step.
pub(crate) struct StepIds {
    pub(crate) graph_key: i64,
    pub(crate) collectives: std::sync::Arc<Collectives>,
    /// The leader's worker, when the session reaches it.
    pub(crate) leader: Option<std::sync::Arc<dyn crate::worker_api::WorkerApi>>,
}

impl StepIds {
    /// The step id of the next step.
    pub(crate) async fn next(&self, deadline: Instant) -> Result<i64, Status> {
        let c = &self.collectives;
        if let Some(&id) = c.step_seqs.lock().unwrap_or_else(|e| e.into_inner()).get(&self.graph_key) {
            return Ok(id);
        }
        let id = match (&self.leader, c.is_leader(&c.task)) {
            (Some(leader), false) => {
                let req = ferroflow_core::proto::GetStepSequenceRequest { graph_key: vec![self.graph_key] };
                match leader.collective(CollectiveRpc::GetStepSequence(req), deadline).await? {
                    CollectiveReply::GetStepSequence(r) => r
                        .step_sequence
                        .iter()
                        .find(|s| s.graph_key == self.graph_key)
                        .map(|s| s.next_step_id)
                        .ok_or_else(|| Status::internal("GetStepSequence: the leader returned no sequence"))?,
                    _ => return Err(Status::internal("GetStepSequence: wrong reply kind")),
                }
            }
            _ => random_step_id(),
        };
        Ok(*c.step_seqs.lock().unwrap_or_else(|e| e.into_inner()).entry(self.graph_key).or_insert(id))
    }

    /// After a step: the sequence moves on past a successful `step_id` that was the
    /// expected one (TensorFlow's `RetireStepId`), and is started again (the leader) or
    /// asked for again (the others) after a failed or unexpected one. TensorFlow keeps a
    /// failed step's id; ferroflow's workers refuse a step id they already ended, so a new
    /// sequence starts.
    pub(crate) fn retire(&self, step_id: i64, ok: bool) {
        let mut seqs = self.collectives.step_seqs.lock().unwrap_or_else(|e| e.into_inner());
        match seqs.get_mut(&self.graph_key) {
            Some(next) if ok && *next == step_id => *next = (step_id + 1) & ((1i64 << 57) - 1),
            _ => {
                seqs.remove(&self.graph_key);
            }
        }
    }
}

/// TensorFlow's random step id of a collective graph (57 bits).
fn random_step_id() -> i64 {
    (crate::ids::random_u64() & ((1u64 << 57) - 1)) as i64
}

/// TensorFlow's `collective_graph_key` of a graph (in RegisterGraph: a TensorFlow worker
/// runs collectives only in graphs that have one): 0 without collective ops; with V1 ops a
/// hash of their instance keys; with V2 ops only, a constant.
pub(crate) fn collective_graph_key(nodes: &[ferroflow_core::proto::NodeDef]) -> i64 {
    use ferroflow_core::NodeAttrs;
    const SEED: u64 = 0x8774_aa60_5c72_9c72;
    let v1 = ["CollectiveReduce", "CollectiveBcastSend", "CollectiveBcastRecv", "CollectiveGather"];
    let v2 = ["CollectiveReduceV2", "CollectiveGatherV2", "CollectiveBcastSendV2", "CollectiveBcastRecvV2"];
    let keys: std::collections::BTreeSet<i32> = nodes
        .iter()
        .filter(|n| v1.contains(&n.op.as_str()))
        .filter_map(|n| n.attr_int("instance_key").ok())
        .map(|k| k as i32)
        .collect();
    let any_v1 = nodes.iter().any(|n| v1.contains(&n.op.as_str()));
    if any_v1 {
        // TensorFlow's Hash64Combine over the keys in ascending order.
        let mut h = SEED;
        for k in keys {
            let a = k as u32 as u64;
            h = a ^ (h.wrapping_add(0x9e37_79b9_7f4a_7800).wrapping_add(a << 10).wrapping_add(a >> 4));
        }
        h as i64
    } else if nodes.iter().any(|n| v2.contains(&n.op.as_str())) {
        SEED as i64
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use ferroflow_core::attr;
    use ferroflow_core::proto::NodeDef;

    #[test]
    fn graph_keys_as_tensorflow() {
        let node = |op: &str, ik: i64| {
            let mut n = NodeDef { op: op.into(), ..Default::default() };
            n.attr.insert("instance_key".into(), attr::int(ik));
            n
        };
        assert_eq!(super::collective_graph_key(&[node("MatMul", 0)]), 0);
        // Keys seen on TensorFlow 2.21's wire.
        assert_eq!(super::collective_graph_key(&[node("CollectiveReduceV2", 0)]), -8686130450446246798);
        let v1 = [node("CollectiveReduce", 1), node("CollectiveReduceV2", 0)];
        assert_eq!(super::collective_graph_key(&v1), 2714584368876951667);
    }
}
