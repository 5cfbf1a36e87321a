//! Collective groups and broadcast instances as the group leader resolves them
//! (TensorFlow's `CollectiveParamResolverLocal`, served to the other tasks by
//! `CompleteGroup`/`CompleteInstance`): a group is complete once `group_size` devices
//! joined, then ranked TensorFlow's way; a broadcast instance once every member reported,
//! so its source is known. Waits end with the caller's deadline.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use ferroflow_core::proto::DeviceAttributes;
use ferroflow_core::{DeviceName, Status};
use tokio::sync::oneshot;

/// A complete group: its members in rank order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Group {
    pub(crate) key: i32,
    pub(crate) device_type: String,
    pub(crate) members: Vec<DeviceAttributes>,
    pub(crate) num_tasks: usize,
}

impl Group {
    /// The rank of `device`.
    pub(crate) fn rank_of(&self, device: &str) -> Option<usize> {
        self.members.iter().position(|m| m.name == device)
    }
}

/// The task part of a full device name (`/job:J/replica:R/task:T`).
pub(crate) fn task_of(device: &str) -> String {
    match device.find("/device:") {
        Some(i) => device[..i].to_string(),
        None => device.to_string(),
    }
}

/// TensorFlow's default ranking: devices sorted by (job, replica, task, type, id), then
/// grouped by task with the tasks in the string order of their names (so task 10 comes
/// before task 2), each task's devices in sorted order.
pub(crate) fn rank_members(mut members: Vec<DeviceAttributes>) -> (Vec<DeviceAttributes>, usize) {
    let sort_key = |m: &DeviceAttributes| {
        let d = DeviceName::parse(&m.name).unwrap_or_default();
        (
            d.job.unwrap_or_default(),
            d.replica.unwrap_or(0),
            d.task.unwrap_or(0),
            d.device_type.unwrap_or_default(),
            d.id,
        )
    };
    members.sort_by_key(sort_key);
    let tasks: std::collections::BTreeSet<String> = members.iter().map(|m| task_of(&m.name)).collect();
    let mut ranked = Vec::with_capacity(members.len());
    for t in &tasks {
        ranked.extend(members.iter().filter(|m| &task_of(&m.name) == t).cloned());
    }
    (ranked, tasks.len())
}

type Waiter = oneshot::Sender<Result<Arc<Group>, Status>>;

enum GroupRec {
    Forming { size: i32, device_type: String, members: Vec<DeviceAttributes>, waiters: Vec<Waiter> },
    Done(Arc<Group>),
}

/// A broadcast instance while its members report.
struct InstanceRec {
    seen: HashSet<String>,
    source: Option<i32>,
    waiters: Vec<oneshot::Sender<Result<i32, Status>>>,
    done: Option<Result<i32, Status>>,
}

/// The groups and instances this task resolves (as the leader) or has learned.
#[derive(Default)]
pub(crate) struct Groups {
    groups: Mutex<HashMap<i32, GroupRec>>,
    instances: Mutex<HashMap<(i32, i32), InstanceRec>>,
}

impl Groups {
    /// A group this task already knows complete.
    pub(crate) fn known(&self, key: i32) -> Option<Arc<Group>> {
        match self.groups.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            Some(GroupRec::Done(g)) => Some(g.clone()),
            _ => None,
        }
    }

    /// Remembers a group the leader resolved.
    pub(crate) fn learn(&self, g: Group) -> Arc<Group> {
        let g = Arc::new(g);
        self.groups.lock().unwrap_or_else(|e| e.into_inner()).insert(g.key, GroupRec::Done(g.clone()));
        g
    }

    /// Joins `device` to group `key` of `size` (as the leader); the receiver gets the group
    /// once complete. TensorFlow's errors (INTERNAL) for a size or device type that differs
    /// from the group's, or a full group. A failed group is forgotten after its error was
    /// given to every waiting member, so a corrected program can form it again.
    pub(crate) fn join(
        &self,
        key: i32,
        size: i32,
        device_type: &str,
        device: DeviceAttributes,
    ) -> oneshot::Receiver<Result<Arc<Group>, Status>> {
        let (tx, rx) = oneshot::channel();
        let mut groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        let rec = groups.entry(key).or_insert_with(|| GroupRec::Forming {
            size,
            device_type: device_type.to_string(),
            members: Vec::new(),
            waiters: Vec::new(),
        });
        match rec {
            GroupRec::Done(g) => {
                let r = if g.rank_of(&device.name).is_some() {
                    Ok(g.clone())
                } else if g.members.len() as i32 != size {
                    Err(size_error(&device.name, size, g.members.len() as i32, key))
                } else {
                    Err(Status::internal(format!(
                        "Device {} is joining a group that is already full (group_key={key})",
                        device.name
                    )))
                };
                let _ = tx.send(r);
            }
            GroupRec::Forming { size: want, device_type: ty, members, waiters } => {
                let err = if *want != size {
                    Some(size_error(&device.name, size, *want, key))
                } else if ty != device_type {
                    Some(Status::internal(format!(
                        "Device {} is joining a group with incompatible device type{device_type} (group_key={key})",
                        device.name
                    )))
                } else {
                    None
                };
                if let Some(e) = err {
                    for w in waiters.drain(..) {
                        let _ = w.send(Err(e.clone()));
                    }
                    let _ = tx.send(Err(e));
                    groups.remove(&key);
                    return rx;
                }
                match members.iter_mut().find(|m| m.name == device.name) {
                    Some(m) => *m = device,
                    None => members.push(device),
                }
                waiters.push(tx);
                if members.len() as i32 >= *want {
                    let (ranked, num_tasks) = rank_members(std::mem::take(members));
                    let g = Arc::new(Group { key, device_type: ty.clone(), members: ranked, num_tasks });
                    for w in waiters.drain(..) {
                        let _ = w.send(Ok(g.clone()));
                    }
                    *rec = GroupRec::Done(g);
                }
            }
        }
        rx
    }

    /// A broadcast member reports to the leader (`source` when it sends); the receiver gets
    /// the source's rank once every member of `group` reported.
    pub(crate) fn report(
        &self,
        group: &Group,
        instance: i32,
        device: &str,
        source: bool,
    ) -> oneshot::Receiver<Result<i32, Status>> {
        let (tx, rx) = oneshot::channel();
        let mut all = self.instances.lock().unwrap_or_else(|e| e.into_inner());
        let rec = all.entry((group.key, instance)).or_insert_with(|| InstanceRec {
            seen: HashSet::new(),
            source: None,
            waiters: Vec::new(),
            done: None,
        });
        if let Some(d) = &rec.done {
            let _ = tx.send(d.clone());
            return rx;
        }
        let Some(rank) = group.rank_of(device) else {
            let _ = tx.send(Err(Status::internal(format!(
                "Device {device} is not a member of group {} (instance {instance})",
                group.key
            ))));
            return rx;
        };
        let rank = rank as i32;
        if source {
            if let Some(s) = rec.source.filter(|&s| s != rank) {
                let e = Status::internal(format!(
                    "Instance {instance} already has source {s}, received second claim from {rank}"
                ));
                let _ = tx.send(Err(e));
                return rx;
            }
            rec.source = Some(rank);
        }
        rec.seen.insert(device.to_string());
        rec.waiters.push(tx);
        if rec.seen.len() >= group.members.len() {
            let r = rec.source.ok_or_else(|| {
                Status::internal(format!(
                    "Instance {instance} found no source for broadcast. This could mean that there were \
                     group_size={} BcastRecvs but no BcastSend.",
                    group.members.len()
                ))
            });
            for w in rec.waiters.drain(..) {
                let _ = w.send(r.clone());
            }
            if r.is_ok() {
                rec.done = Some(r);
            } else {
                all.remove(&(group.key, instance));
            }
        }
        rx
    }
}

fn size_error(device: &str, size: i32, want: i32, key: i32) -> Status {
    Status::internal(format!(
        "Device {device} is joining a group with size{size}, but that group has size {want} (group_key={key})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(task: u32) -> DeviceAttributes {
        DeviceAttributes {
            name: format!("/job:worker/replica:0/task:{task}/device:CPU:0"),
            device_type: "CPU".into(),
            incarnation: 7 + u64::from(task),
            ..Default::default()
        }
    }

    #[test]
    fn tasks_ranked_by_name_string() {
        let (r, tasks) = rank_members((0..11).rev().map(dev).collect());
        let order: Vec<u32> = r.iter().map(|m| m.incarnation as u32 - 7).collect();
        assert_eq!(order, [0, 1, 10, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(tasks, 11);
    }

    #[tokio::test]
    async fn group_completes_then_errors() {
        let g = Groups::default();
        let a = g.join(1, 2, "CPU", dev(1));
        let b = g.join(1, 2, "CPU", dev(0));
        let (a, b) = (a.await.unwrap().unwrap(), b.await.unwrap().unwrap());
        assert_eq!(a, b);
        assert_eq!(a.rank_of("/job:worker/replica:0/task:0/device:CPU:0"), Some(0));
        let e = g.join(1, 3, "CPU", dev(2)).await.unwrap().unwrap_err();
        assert_eq!(
            e.message,
            "Device /job:worker/replica:0/task:2/device:CPU:0 is joining a group with size3, but that group has \
             size 2 (group_key=1)"
        );
        let e = g.join(1, 2, "CPU", dev(2)).await.unwrap().unwrap_err();
        assert!(e.message.contains("already full"), "{e}");
        // A size mismatch while forming fails every member, and the group can form again.
        let w = g.join(5, 2, "CPU", dev(0));
        assert!(g.join(5, 3, "CPU", dev(1)).await.unwrap().is_err());
        assert!(w.await.unwrap().is_err());
        let w = g.join(5, 2, "CPU", dev(0));
        assert!(g.join(5, 2, "CPU", dev(1)).await.unwrap().is_ok());
        assert!(w.await.unwrap().is_ok());
        // Broadcast: the source is known once all reported; no source is an error.
        let r0 = g.report(&a, 3, &dev(0).name, false);
        let r1 = g.report(&a, 3, &dev(1).name, true);
        assert_eq!(r0.await.unwrap().unwrap(), 1);
        assert_eq!(r1.await.unwrap().unwrap(), 1);
        let pending = g.report(&a, 4, &dev(0).name, false);
        let e = g.report(&a, 4, &dev(1).name, false).await.unwrap().unwrap_err();
        assert!(e.message.contains("found no source for broadcast"), "{e}");
        assert!(pending.await.unwrap().is_err());
    }
}
