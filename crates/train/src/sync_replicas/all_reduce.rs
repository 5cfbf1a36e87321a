//! Synchronous training by all-reduce instead of through the ps: every worker holds a
//! replica of the variables on its own task, each step's gradients are averaged over the
//! workers with TensorFlow's collective ops (`CollectiveReduceV2`, `Add` then `Div`: a ring
//! all-reduce among the workers, no ps traffic), and every replica applies the same average,
//! so the replicas stay equal (TensorFlow's `MultiWorkerMirroredStrategy` in graph mode).
//! Worker 0's variables (initialized, or restored from its checkpoint) reach the others by
//! a collective broadcast when a session opens, and [`AllReduceReplicas::verify`] checks at
//! the end that every replica holds the same bytes.

use std::time::Duration;

use ferroflow_core::{Code, DataType, Status, Tensor};
use ferroflow_graph::ops::{self, CollectiveKeys};
use ferroflow_graph::{Operation, Output, Scope, Variable};
use ferroflow_runtime::{RunOptions, StepRunner};

use crate::monitored::SessionRunHook;
use crate::optimizer::GradAndVar;

/// The collective group of the trainer's replicas (one member per worker task).
pub const ALL_REDUCE_GROUP: i32 = 1;
/// Instance keys: gradient `k` is `GRADIENT_INSTANCES + k`, variable `i`'s broadcast
/// `BROADCAST_INSTANCES + i`, the replica check `CHECK_INSTANCE`.
const GRADIENT_INSTANCES: i32 = 1;
const BROADCAST_INSTANCES: i32 = 100_000;
const CHECK_INSTANCE: i32 = 200_000;

/// One worker's view of the all-reduce replicas: how many there are and which one it is.
#[derive(Clone, Copy, Debug)]
pub struct AllReduceReplicas {
    /// Workers in the group.
    pub num_replicas: usize,
    /// This worker's task index (rank 0 broadcasts its variables).
    pub rank: usize,
}

impl AllReduceReplicas {
    /// The replicas of `num_replicas` workers, seen from worker `rank`.
    pub fn new(num_replicas: usize, rank: usize) -> Result<AllReduceReplicas, Status> {
        if num_replicas == 0 || rank >= num_replicas || num_replicas > i32::MAX as usize {
            return Err(Status::invalid_argument(format!(
                "all-reduce replicas: worker {rank} is not one of {num_replicas} replicas"
            )));
        }
        Ok(AllReduceReplicas { num_replicas, rank })
    }

    fn keys(&self, instance_key: i32) -> CollectiveKeys {
        CollectiveKeys { group_size: self.num_replicas as i32, group_key: ALL_REDUCE_GROUP, instance_key }
    }

    /// Each gradient replaced by its mean over the replicas (one all-reduce per gradient,
    /// keyed by its position, so every worker must pass its gradients in the same order:
    /// between-graph replicas building the same graph do).
    pub fn average_gradients(&self, s: &Scope, grads: &[GradAndVar]) -> Result<Vec<GradAndVar>, Status> {
        let s = s.sub("all_reduce");
        grads
            .iter()
            .enumerate()
            .map(|(k, (g, v))| {
                let key = self.keys(GRADIENT_INSTANCES + k as i32);
                let mean = ops::collective_reduce(&s, g.clone(), v.dtype(), key, ("Add", "Div"))?;
                Ok((mean, v.clone()))
            })
            .collect()
    }

    /// The op that makes `vars` equal to rank 0's: rank 0 broadcasts each value, the others
    /// assign what they receive. Every variable needs a fully known shape.
    pub fn broadcast_variables(&self, s: &Scope, vars: &[Variable]) -> Result<Operation, Status> {
        let s = s.sub("broadcast_variables");
        let mut done: Vec<String> = Vec::with_capacity(vars.len());
        for (i, v) in vars.iter().enumerate() {
            let key = self.keys(BROADCAST_INSTANCES + i as i32);
            if self.rank == 0 {
                done.push(ops::collective_bcast_send(&s, v.value(), v.dtype(), key)?.node);
            } else {
                let shape = v.shape().filter(|d| d.iter().all(|&n| n >= 0)).ok_or_else(|| {
                    Status::invalid_argument(format!(
                        "all-reduce replicas: variable '{}' has no fully known shape to receive",
                        v.name()
                    ))
                })?;
                let got = ops::collective_bcast_recv(&s, v.dtype(), &shape, key)?;
                done.push(v.assign(&s, got).name);
            }
        }
        let refs: Vec<&String> = done.iter().collect();
        Ok(ops::group(&s, &refs))
    }

    /// The nodes of the replica check: a fed checksum gathered from every replica.
    pub fn check_nodes(&self, s: &Scope) -> Result<ReplicaCheck, Status> {
        let s = s.sub("replica_check");
        let mine = ops::placeholder(&s, DataType::Int64, Some(&[1]));
        let all = ops::collective_gather(&s, mine.clone(), DataType::Int64, self.keys(CHECK_INSTANCE))?;
        Ok(ReplicaCheck { mine, all })
    }
}

/// The fed checksum and the gathered checksums of [`AllReduceReplicas::check_nodes`].
#[derive(Clone, Debug)]
pub struct ReplicaCheck {
    mine: Output,
    all: Output,
}

/// CRC-32C over every byte of `tensors` (each preceded by its shape).
fn checksum(tensors: &[Tensor]) -> Result<u32, Status> {
    let mut crc = 0u32;
    for t in tensors {
        for d in t.dims() {
            crc = crc32c::crc32c_append(crc, &(*d as u64).to_le_bytes());
        }
        let bytes = t.raw_bytes().ok_or_else(|| {
            Status::unimplemented(format!("replica check: no raw bytes for a {:?} variable", t.dtype()))
        })?;
        crc = crc32c::crc32c_append(crc, bytes);
    }
    Ok(crc)
}

impl ReplicaCheck {
    /// Reads `vars` on this replica, exchanges their checksum with every replica and fails
    /// (Internal) when any replica holds different bytes; returns the checksum.
    pub fn verify(&self, sess: &dyn StepRunner, vars: &[Variable], timeout: Duration) -> Result<u32, Status> {
        let values: Vec<Output> = vars.iter().map(|v| v.value()).collect();
        let refs: Vec<&Output> = values.iter().collect();
        let mine = checksum(&sess.run(&[], &refs, &[])?)?;
        let opts = RunOptions { timeout: Some(timeout), ..Default::default() };
        let feeds = [(self.mine.name(), Tensor::new(vec![1], vec![mine as i64])?)];
        let all = sess.run_by_name(&feeds, &[self.all.name()], &[], &opts)?;
        let all = all[0].as_slice::<i64>()?;
        if let Some(r) = all.iter().position(|&c| c != mine as i64) {
            return Err(Status::new(
                Code::Internal,
                format!(
                    "all-reduce replicas diverged: worker {r}'s variables have checksum {:#010x}, this worker's {mine:#010x}",
                    all[r]
                ),
            ));
        }
        Ok(mine)
    }
}

/// Runs the broadcast of rank 0's variables on every new session, each bounded by
/// `timeout` (the time the replicas have to meet).
pub struct BroadcastHook {
    op: String,
    timeout: Duration,
}

impl BroadcastHook {
    /// The hook running `op` (from [`AllReduceReplicas::broadcast_variables`]).
    pub fn new(op: &Operation, timeout: Duration) -> BroadcastHook {
        BroadcastHook { op: op.name.clone(), timeout }
    }
}

impl SessionRunHook for BroadcastHook {
    fn after_create_session(&mut self, session: &dyn StepRunner) -> Result<(), Status> {
        let opts = RunOptions { timeout: Some(self.timeout), ..Default::default() };
        session.run_by_name(&[], &[], std::slice::from_ref(&self.op), &opts).map(|_| ()).map_err(|e| {
            Status::new(e.code, format!("broadcasting worker 0's variables to the replicas: {}", e.message))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_are_checked_for_a_valid_rank() {
        assert!(AllReduceReplicas::new(3, 2).is_ok());
        assert_eq!(AllReduceReplicas::new(3, 3).unwrap_err().code, Code::InvalidArgument);
        assert_eq!(AllReduceReplicas::new(0, 0).unwrap_err().code, Code::InvalidArgument);
    }

    #[test]
    fn the_checksum_sees_every_byte_and_the_shape() {
        let a = Tensor::new(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let b = Tensor::new(vec![4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let c = Tensor::new(vec![2, 2], vec![1.0f32, 2.0, 3.0, 4.000001]).unwrap();
        let x = checksum(std::slice::from_ref(&a)).unwrap();
        assert_ne!(x, checksum(&[a.clone(), Tensor::new(vec![0], Vec::<f32>::new()).unwrap()]).unwrap());
        assert_ne!(x, checksum(&[b]).unwrap());
        assert_ne!(x, checksum(&[c]).unwrap());
    }

    #[test]
    fn gradients_are_averaged_in_order_with_one_instance_each() {
        let s = Scope::new_root();
        let r = AllReduceReplicas::new(2, 1).unwrap();
        let v = Variable::new(&s, "v", ops::constant(&s, Tensor::new(vec![2], vec![1.0f32, 2.0]).unwrap()));
        let w = Variable::new(&s, "w", ops::constant(&s, Tensor::new(vec![1], vec![3.0f32]).unwrap()));
        let g: Vec<GradAndVar> = vec![(v.value(), v.clone()), (w.value(), w.clone())];
        let out = r.average_gradients(&s, &g).unwrap();
        assert_eq!(out.len(), 2);
        let g = s.graph().to_graph_def();
        let reduces: Vec<_> = g.node.iter().filter(|n| n.op == "CollectiveReduceV2").collect();
        assert_eq!(reduces.len(), 2);
        let b = r.broadcast_variables(&s, &[v, w]).unwrap();
        assert!(b.name.contains("broadcast_variables"));
        s.status().unwrap();
    }
}
