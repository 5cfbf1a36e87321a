//! Fetching a tensor from the task that produces it. The client rewrite puts every fetch's
//! client-terminated `_Send` on the client device, so a tensor made on another task (a
//! variable read on a ps) travels producer → client task by RecvTensor, then to the client
//! in the client partition's RunGraph reply: three RPCs and an executor run on the client
//! task for a value the producer could return itself. After placement, a fetch whose
//! producer is on another ferroflow task gets its `_Send` moved there (`send_device` and
//! incarnation become the producer's), and the master asks that task's RunGraph for it by
//! `recv_key`. The client partition may then have nothing left to run and is not run.
//!
//! Only ferroflow workers get such sends: a TensorFlow worker would also accept them, but
//! nothing in TensorFlow's own master does this, so a mixed cluster keeps TensorFlow's
//! layout exactly.

use std::collections::HashMap;

use ferroflow_core::proto::GraphDef;
use ferroflow_core::{attr, DeviceName, Status};
use ferroflow_kernels::rendezvous_key;

use crate::graph_util::parse_input;
use crate::ClientTensor;

/// Moves the `_Send` of each fetch produced on another task for which `eligible(task)` is
/// true to its producer's device, updating its attrs and the fetch's rendezvous key.
/// Returns, per fetch (in `fetches` order), the task whose RunGraph yields it.
pub(crate) fn relocate_fetches(
    graph: &mut GraphDef,
    fetches: &mut [ClientTensor],
    client_device: &str,
    incarnations: &HashMap<String, u64>,
    eligible: impl Fn(&str) -> bool,
) -> Result<Vec<String>, Status> {
    let client_task = DeviceName::parse(client_device)?.task_name();
    let device_of: HashMap<String, String> = graph.node.iter().map(|n| (n.name.clone(), n.device.clone())).collect();
    let index: HashMap<String, usize> = graph.node.iter().enumerate().map(|(i, n)| (n.name.clone(), i)).collect();
    let mut source_task = Vec::with_capacity(fetches.len());
    for f in fetches.iter_mut() {
        let &i = index.get(&f.node).ok_or_else(|| {
            Status::internal(format!("fetch '{}': its _Send '{}' is not in the graph", f.name, f.node))
        })?;
        let producer = match graph.node[i].input.first() {
            Some(s) => parse_input(&graph.node[i], s)?.node().to_string(),
            None => return Err(Status::internal(format!("fetch _Send '{}' has no input", f.node))),
        };
        let device = device_of.get(&producer).cloned().unwrap_or_default();
        let task = match DeviceName::parse(&device) {
            Ok(d) => d.task_name(),
            Err(_) => client_task.clone(),
        };
        let incarnation = incarnations.get(&device).copied();
        match incarnation {
            Some(inc) if task != client_task && eligible(&task) => {
                let node = &mut graph.node[i];
                node.device = device.clone();
                node.attr.insert("send_device".into(), attr::string(&device));
                node.attr.insert("send_device_incarnation".into(), attr::int(inc as i64));
                f.key = rendezvous_key(&device, inc, client_device, &f.name);
                source_task.push(task);
            }
            _ => source_task.push(client_task.clone()),
        }
    }
    Ok(source_task)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite_for_client;
    use ferroflow_core::proto::NodeDef;

    const CLIENT: &str = "/job:worker/replica:0/task:0/device:CPU:0";
    const PS: &str = "/job:ps/replica:0/task:0/device:CPU:0";

    fn node(name: &str, op: &str, device: &str, inputs: &[&str]) -> NodeDef {
        let mut n = NodeDef {
            name: name.into(),
            op: op.into(),
            device: device.into(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        n.attr.insert("dtype".into(), attr::ty(ferroflow_core::DataType::Float));
        n.attr.insert("T".into(), attr::ty(ferroflow_core::DataType::Float));
        n.attr.insert("value".into(), attr::tensor(&ferroflow_core::Tensor::scalar(1.0f32)));
        n
    }

    fn graph() -> GraphDef {
        GraphDef {
            node: vec![node("a", "Const", PS, &[]), node("b", "Identity", CLIENT, &["a"])],
            ..Default::default()
        }
    }

    #[test]
    fn a_fetch_made_on_another_eligible_task_is_sent_from_there() {
        let mut cg = rewrite_for_client(&graph(), &[] as &[&str], &["a", "b"], &[], CLIENT, 7).unwrap();
        let inc = HashMap::from([(PS.to_string(), 0x2au64), (CLIENT.to_string(), 7u64)]);
        let tasks = relocate_fetches(&mut cg.graph, &mut cg.fetches, CLIENT, &inc, |_| true).unwrap();
        assert_eq!(tasks, vec!["/job:ps/replica:0/task:0".to_string(), "/job:worker/replica:0/task:0".to_string()]);
        let send_a = cg.graph.node.iter().find(|n| n.name == "_send_a_0").unwrap();
        assert_eq!(send_a.device, PS);
        assert_eq!(send_a.attr["send_device"], attr::string(PS));
        assert_eq!(send_a.attr["send_device_incarnation"], attr::int(0x2a));
        assert_eq!(send_a.attr["recv_device"], attr::string(CLIENT));
        assert_eq!(cg.fetches[0].key, format!("{PS};000000000000002a;{CLIENT};a:0;0:0"));
        // b is made on the client task: unchanged.
        let send_b = cg.graph.node.iter().find(|n| n.name == "_send_b_0").unwrap();
        assert_eq!(send_b.device, CLIENT);
        assert_eq!(cg.fetches[1].key, format!("{CLIENT};0000000000000007;{CLIENT};b:0;0:0"));
    }

    #[test]
    fn ineligible_tasks_keep_tensorflow_layout() {
        let mut cg = rewrite_for_client(&graph(), &[] as &[&str], &["a"], &[], CLIENT, 7).unwrap();
        let before = cg.clone();
        let inc = HashMap::from([(PS.to_string(), 0x2au64)]);
        let tasks = relocate_fetches(&mut cg.graph, &mut cg.fetches, CLIENT, &inc, |_| false).unwrap();
        assert_eq!(tasks, vec!["/job:worker/replica:0/task:0".to_string()]);
        assert_eq!(cg, before);
    }
}
