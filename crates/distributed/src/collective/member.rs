//! One member's part of a collective: its group resolved (by the leader), then its chunks
//! exchanged with the other members through this task's buffer table and `RecvBuf` calls.

use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::{CompleteGroupRequest, CompleteInstanceRequest, DeviceAttributes, RecvBufRequest};
use ferroflow_core::{Status, Tensor};
use ferroflow_kernels::collective::tensor_of_bytes;
use ferroflow_kernels::{CollectiveCall, CollectiveKind};
use tokio::sync::oneshot;

use super::algo::{self, Link};
use super::group::{rank_members, task_of, Group};
use super::Collectives;
use crate::worker_api::{CollectiveReply, CollectiveRpc, WorkerApi};

/// How a member reaches the worker of a task (by its `/job:J/replica:R/task:T` name).
pub(crate) type PeerFinder = Arc<dyn Fn(&str) -> Result<Arc<dyn WorkerApi>, Status> + Send + Sync>;

/// A result from `rx`, or DEADLINE_EXCEEDED with `what` at `deadline`.
pub(crate) async fn bounded<T>(
    rx: oneshot::Receiver<Result<T, Status>>,
    deadline: Instant,
    what: impl FnOnce() -> String,
) -> Result<T, Status> {
    match tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), rx).await {
        Ok(Ok(r)) => r,
        Ok(Err(_)) => Err(Status::cancelled(format!("{}: the wait was dropped", what()))),
        Err(_) => Err(Status::deadline_exceeded(what())),
    }
}

/// A value from `rx`, or `None` once `deadline` passed (or the sender went away).
pub(crate) async fn bounded_value<T>(rx: oneshot::Receiver<T>, deadline: Instant) -> Option<T> {
    tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), rx).await.ok().and_then(Result::ok)
}

/// The member's link to its group in one step.
struct StepLink {
    coll: Arc<Collectives>,
    step_id: i64,
    group: Arc<Group>,
    me: String,
    peers: PeerFinder,
    deadline: Instant,
    /// Keys provided: those no peer took are withdrawn when the member ends.
    provided: std::sync::Mutex<Vec<String>>,
}

impl Drop for StepLink {
    fn drop(&mut self) {
        for k in self.provided.get_mut().unwrap_or_else(|e| e.into_inner()).drain(..) {
            self.coll.bufs.withdraw(self.step_id, &k);
        }
    }
}

#[async_trait::async_trait]
impl Link for StepLink {
    fn provide(&self, key: String, bytes: Vec<u8>) -> Result<oneshot::Receiver<()>, Status> {
        let rx = self.coll.bufs.provide(self.step_id, &key, bytes)?;
        self.provided.lock().unwrap_or_else(|e| e.into_inner()).push(key);
        Ok(rx)
    }

    async fn take(&self, from: usize, key: String, len: usize) -> Result<Vec<u8>, Status> {
        let peer = &self.group.members[from];
        let task = task_of(&peer.name);
        let bytes = if task == task_of(&self.me) {
            let rx = self.coll.bufs.take(self.step_id, &key)?;
            match bounded_value(rx, self.deadline).await {
                Some(b) => b,
                None => {
                    self.coll.bufs.give_up(self.step_id, &key);
                    return Err(Status::deadline_exceeded(format!(
                        "{}: chunk '{key}' of {} was not provided in time",
                        self.me, peer.name
                    )));
                }
            }
        } else {
            let req = RecvBufRequest {
                step_id: self.step_id,
                buf_rendezvous_key: key.clone(),
                num_bytes: len as i64,
                src_device: peer.name.clone(),
                dst_device: self.me.clone(),
                request_id: (crate::ids::random_u64() >> 1) as i64,
                src_incarnation: peer.incarnation,
                ..Default::default()
            };
            match (self.peers)(&task)?.collective(CollectiveRpc::RecvBuf(req), self.deadline).await? {
                CollectiveReply::RecvBuf(b) => b,
                _ => return Err(Status::internal("RecvBuf: wrong reply kind")),
            }
        };
        if bytes.len() != len {
            return Err(Status::internal(format!(
                "Tensor Size Mismatch: RecvBufResponse returned {} bytes, expected: {len} (chunk '{key}' from {}: \
                 the members' inputs differ in shape)",
                bytes.len(),
                peer.name
            )));
        }
        Ok(bytes)
    }
}

impl Collectives {
    /// Runs `call` (a member on device `me` of this task) in step `step_id`.
    pub(crate) async fn run(
        self: Arc<Self>,
        call: CollectiveCall,
        step_id: i64,
        me: DeviceAttributes,
        peers: PeerFinder,
        deadline: Instant,
    ) -> Result<Tensor, Status> {
        let timeout = call.timeout.map(|t| Instant::now() + t);
        let resolve_by = timeout.map_or(deadline, |t| t.min(deadline));
        let resolved = self.resolve(&call, &me, &peers, resolve_by).await;
        let (group, source) = match resolved {
            Err(e) if e.code == ferroflow_core::Code::DeadlineExceeded && timeout.is_some_and(|t| t <= deadline) => {
                return Err(Status::deadline_exceeded(format!(
                    "Collective has timed out waiting for other workers. ({})",
                    e.message
                )))
            }
            r => r?,
        };
        let rank = group
            .rank_of(&call.device)
            .ok_or_else(|| Status::internal(format!("{} is not a member of group {}", call.device, call.group_key)))?;
        let n = group.members.len();
        let link = StepLink {
            coll: self.clone(),
            step_id,
            group: group.clone(),
            me: call.device.clone(),
            peers,
            deadline: timeout.map_or(deadline, |t| t.min(deadline)),
            provided: Default::default(),
        };
        let input = call.input.as_ref().map(|t| {
            t.raw_bytes()
                .map(<[u8]>::to_vec)
                .ok_or_else(|| Status::invalid_argument(format!("{} tensors cannot be exchanged", t.dtype())))
        });
        let input = input.transpose()?;
        let exec = call.exec_key.as_str();
        let elem = call.dtype.byte_size().unwrap_or(1);
        let (bytes, shape) = match &call.kind {
            CollectiveKind::Reduce { merge, divide } => {
                let data = input.unwrap_or_default();
                let subdivs = match call.subdivs {
                    Some(s) => s.max(1),
                    None => algo::ring_subdivs(call.max_subdivs_per_device, data.len(), n),
                };
                if subdivs > 1 && group.num_tasks != n {
                    return Err(Status::unimplemented(format!(
                        "{}: a ring all-reduce in {subdivs} subdivisions over tasks with several devices each",
                        call.node
                    )));
                }
                let out = algo::all_reduce(&link, exec, (n, rank), data, call.dtype, (*merge, *divide), subdivs).await;
                (out, call.shape.clone())
            }
            CollectiveKind::Gather => {
                let mut shape = call.shape.clone();
                if let Some(d) = shape.first_mut() {
                    *d *= n;
                }
                (algo::all_gather(&link, exec, (n, rank), input.unwrap_or_default()).await, shape)
            }
            CollectiveKind::BcastSend | CollectiveKind::BcastRecv => {
                let len = call.shape.iter().product::<usize>() * elem;
                let source = source as usize;
                (algo::broadcast(&link, exec, (n, rank, source), input, len).await, call.shape.clone())
            }
        };
        let bytes = match bytes {
            Err(e) if e.code == ferroflow_core::Code::DeadlineExceeded && timeout.is_some_and(|t| t <= deadline) => {
                return Err(Status::deadline_exceeded(format!(
                    "Collective has timed out during execution. ({})",
                    e.message
                )))
            }
            r => r?,
        };
        tensor_of_bytes(call.dtype, &shape, &bytes)
    }

    /// The member's group (and a broadcast's source rank).
    async fn resolve(
        &self,
        call: &CollectiveCall,
        me: &DeviceAttributes,
        peers: &PeerFinder,
        deadline: Instant,
    ) -> Result<(Arc<Group>, i32), Status> {
        let my_task = task_of(&call.device);
        let group = match self.groups.known(call.group_key).filter(|g| g.rank_of(&call.device).is_some()) {
            Some(g) => g,
            None if self.is_leader(&my_task) => {
                let rx = self.groups.join(call.group_key, call.group_size, "CPU", me.clone());
                bounded(rx, deadline, || format!("group {} did not complete: not every member joined", call.group_key))
                    .await?
            }
            None => {
                let req = CompleteGroupRequest {
                    group_key: call.group_key,
                    group_size: call.group_size,
                    device_type: "CPU".into(),
                    device_attributes: Some(me.clone()),
                    ..Default::default()
                };
                let resp = match peers(&self.leader)?.collective(CollectiveRpc::CompleteGroup(req), deadline).await? {
                    CollectiveReply::CompleteGroup(r) => r,
                    _ => return Err(Status::internal("CompleteGroup: wrong reply kind")),
                };
                if resp.device_attributes.len() != resp.group_size as usize || resp.device_attributes.is_empty() {
                    return Err(Status::internal("CompleteGroupResponse group_size doesn't match device_name list"));
                }
                let (members, num_tasks) = rank_members(resp.device_attributes);
                self.groups.learn(Group { key: resp.group_key, device_type: resp.device_type, members, num_tasks })
            }
        };
        if group.members.len() as i32 != call.group_size {
            return Err(Status::internal(format!(
                "Device {} is joining a group with size{}, but that group has size {} (group_key={})",
                call.device,
                call.group_size,
                group.members.len(),
                call.group_key
            )));
        }
        if !matches!(call.kind, CollectiveKind::BcastSend | CollectiveKind::BcastRecv) {
            return Ok((group, -1));
        }
        let key = (call.group_key, call.instance_key);
        if let Some(&s) = self.sources.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok((group, s));
        }
        let is_source = call.kind == CollectiveKind::BcastSend;
        let source = if self.is_leader(&my_task) {
            let rx = self.groups.report(&group, call.instance_key, &call.device, is_source);
            bounded(rx, deadline, || {
                format!(
                    "broadcast instance {} of group {}: not every member reported",
                    call.instance_key, call.group_key
                )
            })
            .await?
        } else {
            let req = CompleteInstanceRequest {
                name: call.node.clone(),
                r#type: call.kind.type_number(),
                data_type: call.dtype as i32,
                shape: Some(ferroflow_core::proto::TensorShapeProto {
                    dim: call
                        .shape
                        .iter()
                        .map(|&size| ferroflow_core::proto::tensor_shape_proto::Dim {
                            size: size as i64,
                            name: String::new(),
                        })
                        .collect(),
                    unknown_rank: false,
                }),
                group_key: call.group_key,
                group_size: call.group_size,
                instance_key: call.instance_key,
                device_type: "CPU".into(),
                subdiv_offset: vec![0],
                device: call.device.clone(),
                is_source,
                step_id: 0,
            };
            match peers(&self.leader)?.collective(CollectiveRpc::CompleteInstance(req), deadline).await? {
                CollectiveReply::CompleteInstance(r) => r.source_rank,
                _ => return Err(Status::internal("CompleteInstance: wrong reply kind")),
            }
        };
        self.sources.lock().unwrap_or_else(|e| e.into_inner()).insert(key, source);
        Ok((group, source))
    }
}
