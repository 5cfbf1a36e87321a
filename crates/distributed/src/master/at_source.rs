//! Feeding and fetching at the task that uses or makes a tensor. The client rewrite puts
//! every fetch's client-terminated `_Send` and every feed's `_Recv` on the client device,
//! so a tensor made on another task (a variable read on a ps) travels producer → client
//! task by RecvTensor, then to the client in the client partition's RunGraph reply, and a
//! fed value used only on a ps is pulled from the client task the same way: extra RPCs and
//! an executor run on the client task for a value the other task could take or return
//! itself. After placement:
//!
//! - a fetch whose producer is on another ferroflow task gets its `_Send` moved there
//!   (`send_device` and incarnation become the producer's); the master asks that task's
//!   RunGraph for it by `recv_key`;
//! - a feed whose consumers are all on one device of another ferroflow task gets its
//!   `_Recv` moved there (send and receive device both that device, as TensorFlow does on
//!   the client device); the master hands the value to that task's RunGraph in `send`.
//!
//! The client partition may then have nothing left to run and is not run. Only ferroflow
//! workers get such nodes: a TensorFlow worker would also accept them, but nothing in
//! TensorFlow's own master does this, so a mixed cluster keeps TensorFlow's layout exactly.

use std::collections::HashMap;

use ferroflow_core::proto::{GraphDef, NodeDef};
use ferroflow_core::rendezvous_key;
use ferroflow_core::{attr, DeviceName, Status};

use ferroflow_graph::graph_util::parse_input;
use ferroflow_graph::ClientTensor;

/// Where client-terminated nodes may move: the client device, the devices'
/// incarnations, and which tasks may take them (`eligible`).
pub(crate) struct AtSource<'a, F: Fn(&str) -> bool> {
    /// The session's client device.
    pub client_device: &'a str,
    /// Device name → incarnation, for the rendezvous keys.
    pub incarnations: &'a HashMap<String, u64>,
    /// Whether a task may take a moved node (ferroflow workers only).
    pub eligible: F,
}

impl<F: Fn(&str) -> bool> AtSource<'_, F> {
    fn client_task(&self) -> Result<String, Status> {
        Ok(DeviceName::parse(self.client_device)?.task_name())
    }

    /// Moves the `_Send` of each fetch produced on another task for which `eligible(task)` is
    /// true to its producer's device, updating its attrs and the fetch's rendezvous key.
    /// Returns, per fetch (in `fetches` order), the task whose RunGraph yields it.
    pub(crate) fn fetches(&self, graph: &mut GraphDef, fetches: &mut [ClientTensor]) -> Result<Vec<String>, Status> {
        let (client_device, client_task) = (self.client_device, self.client_task()?);
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
            let device = index.get(&producer).map(|&j| graph.node[j].device.clone()).unwrap_or_default();
            let task = match DeviceName::parse(&device) {
                Ok(d) => d.task_name(),
                Err(_) => client_task.clone(),
            };
            let incarnation = self.incarnations.get(&device).copied();
            match incarnation {
                Some(inc) if task != client_task && (self.eligible)(&task) => {
                    move_client_node(&mut graph.node[i], f, &device, inc, client_device);
                    source_task.push(task);
                }
                _ => source_task.push(client_task.clone()),
            }
        }
        Ok(source_task)
    }

    /// Moves the `_Recv` of each used feed whose consumers all sit on one device of another
    /// task for which `eligible(task)` is true to that device, updating its attrs and the
    /// feed's rendezvous key. Returns, per feed (in `feeds` order), the task whose RunGraph
    /// takes it.
    pub(crate) fn feeds(&self, graph: &mut GraphDef, feeds: &mut [ClientTensor]) -> Result<Vec<String>, Status> {
        let client_task = self.client_task()?;
        // Feed node name → the devices of its consumers.
        let mut consumers: HashMap<&str, Vec<&str>> = feeds.iter().map(|f| (f.node.as_str(), Vec::new())).collect();
        for n in &graph.node {
            for s in &n.input {
                if let Some(devs) = consumers.get_mut(parse_input(n, s)?.node()) {
                    devs.push(n.device.as_str());
                }
            }
        }
        let mut moves: Vec<(usize, String, u64)> = Vec::new();
        let mut target_task = Vec::with_capacity(feeds.len());
        for (i, f) in feeds.iter().enumerate() {
            let devs = consumers.get(f.node.as_str()).map(Vec::as_slice).unwrap_or_default();
            let one_device = devs.first().filter(|d| devs.iter().all(|x| x == *d));
            let target = one_device.and_then(|d| {
                let task = DeviceName::parse(d).ok()?.task_name();
                let inc = self.incarnations.get(*d).copied()?;
                (f.used && task != client_task && (self.eligible)(&task)).then(|| (d.to_string(), task, inc))
            });
            match target {
                Some((device, task, inc)) => {
                    moves.push((i, device, inc));
                    target_task.push(task);
                }
                None => target_task.push(client_task.clone()),
            }
        }
        for (i, device, inc) in moves {
            let f = &mut feeds[i];
            let n = graph.node.iter_mut().find(|n| n.name == f.node).ok_or_else(|| {
                Status::internal(format!("feed '{}': its _Recv '{}' is not in the graph", f.name, f.node))
            })?;
            move_client_node(n, f, &device, inc, &device);
        }
        Ok(target_task)
    }
}

/// Places a client-terminated `_Send`/`_Recv` on `device` (incarnation `inc`) as its
/// sending device, with `recv_device` as the receiving one, and rekeys its tensor.
fn move_client_node(node: &mut NodeDef, t: &mut ClientTensor, device: &str, inc: u64, recv_device: &str) {
    node.device = device.to_string();
    node.attr.insert("send_device".into(), attr::string(device));
    node.attr.insert("recv_device".into(), attr::string(recv_device));
    node.attr.insert("send_device_incarnation".into(), attr::int(inc as i64));
    t.key = rendezvous_key(device, inc, recv_device, &t.name);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_graph::rewrite_for_client;

    const CLIENT: &str = "/job:worker/replica:0/task:0/device:CPU:0";
    const PS: &str = "/job:ps/replica:0/task:0/device:CPU:0";

    /// Moves to every task (`all`) or to none.
    fn at(incarnations: &HashMap<String, u64>, all: bool) -> AtSource<'_, impl Fn(&str) -> bool> {
        AtSource { client_device: CLIENT, incarnations, eligible: move |_: &str| all }
    }

    fn node(name: &str, op: &str, device: &str, inputs: &[&str]) -> NodeDef {
        let mut n = crate::test_graphs::node(name, op, device, inputs);
        n.attr.insert("dtype".into(), attr::ty(ferroflow_core::DataType::Float));
        n.attr.insert("T".into(), attr::ty(ferroflow_core::DataType::Float));
        n.attr.insert("value".into(), attr::tensor(&ferroflow_core::Tensor::scalar(1.0f32)));
        n
    }

    /// The ps task's incarnation is 0x2a, the client's 7.
    fn incarnations() -> HashMap<String, u64> {
        HashMap::from([(PS.to_string(), 0x2au64), (CLIENT.to_string(), 7u64)])
    }

    const BOTH_TASKS: [&str; 2] = ["/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"];

    fn find<'a>(g: &'a GraphDef, name: &str) -> &'a NodeDef {
        g.node.iter().find(|n| n.name == name).unwrap()
    }

    /// Asserts that `g`'s node `name` was moved to the ps, where it sends to `recv_device`,
    /// and that `key`, its tensor's (`tensor`) rendezvous key, says so.
    fn assert_on_ps(g: &GraphDef, name: &str, recv_device: &str, key: &str, tensor: &str) {
        let n = find(g, name);
        assert_eq!(n.device, PS);
        assert_eq!(n.attr["send_device"], attr::string(PS));
        assert_eq!(n.attr["send_device_incarnation"], attr::int(0x2a));
        assert_eq!(n.attr["recv_device"], attr::string(recv_device));
        assert_eq!(key, format!("{PS};000000000000002a;{recv_device};{tensor};0:0"));
    }

    /// Asserts that `g`'s node `name` stayed on the client, as did `key`, its tensor's
    /// (`tensor`) rendezvous key.
    fn assert_on_client(g: &GraphDef, name: &str, key: &str, tensor: &str) {
        assert_eq!(find(g, name).device, CLIENT);
        assert_eq!(key, format!("{CLIENT};0000000000000007;{CLIENT};{tensor};0:0"));
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
        let tasks = at(&incarnations(), true).fetches(&mut cg.graph, &mut cg.fetches).unwrap();
        assert_eq!(tasks, BOTH_TASKS);
        assert_on_ps(&cg.graph, "_send_a_0", CLIENT, &cg.fetches[0].key, "a:0");
        // b is made on the client task: unchanged.
        assert_on_client(&cg.graph, "_send_b_0", &cg.fetches[1].key, "b:0");
    }

    #[test]
    fn a_feed_used_only_on_another_eligible_task_is_received_there() {
        // p (fed) feeds c on the ps; q (fed) feeds d on the ps and e on the client.
        let mut g = graph();
        g.node.push(node("p", "Const", CLIENT, &[]));
        g.node.push(node("q", "Const", CLIENT, &[]));
        g.node.push(node("c", "Identity", PS, &["p"]));
        g.node.push(node("d", "Identity", PS, &["q"]));
        g.node.push(node("e", "Identity", CLIENT, &["q"]));
        let mut cg = rewrite_for_client(&g, &["p", "q"], &["c", "d", "e"], &[], CLIENT, 7).unwrap();
        let inc = incarnations();
        let tasks = at(&inc, true).feeds(&mut cg.graph, &mut cg.feeds).unwrap();
        assert_eq!(tasks, BOTH_TASKS);
        assert_on_ps(&cg.graph, "_recv_p_0", PS, &cg.feeds[0].key, "p:0");
        // q is used on two tasks: it stays on the client.
        assert_on_client(&cg.graph, "_recv_q_0", &cg.feeds[1].key, "q:0");
        // Not eligible: nothing moves.
        let mut cg2 = rewrite_for_client(&g, &["p", "q"], &["c", "d", "e"], &[], CLIENT, 7).unwrap();
        let before = cg2.clone();
        at(&inc, false).feeds(&mut cg2.graph, &mut cg2.feeds).unwrap();
        assert_eq!(cg2, before);
    }

    #[test]
    fn ineligible_tasks_keep_tensorflow_layout() {
        let mut cg = rewrite_for_client(&graph(), &[] as &[&str], &["a"], &[], CLIENT, 7).unwrap();
        let before = cg.clone();
        let inc = HashMap::from([(PS.to_string(), 0x2au64)]);
        let tasks = at(&inc, false).fetches(&mut cg.graph, &mut cg.fetches).unwrap();
        assert_eq!(tasks, vec!["/job:worker/replica:0/task:0".to_string()]);
        assert_eq!(cg, before);
    }
}
