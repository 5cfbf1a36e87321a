//! Tests of [`super::partition`] and [`super::partition_graph`].

use super::*;
use crate::test_graphs::{ident, konst, PS, W0, W1};
use ferroflow_core::{rendezvous_key, Code, NodeAttrs};

fn incarnations() -> HashMap<String, u64> {
    [(PS, 0xa1b2c3d4e5f60708u64), (W0, 7), (W1, 9)].into_iter().map(|(d, i)| (d.to_string(), i)).collect()
}

fn key_of(n: &NodeDef) -> String {
    rendezvous_key(
        &n.attr_string("send_device").unwrap(),
        n.attr_int("send_device_incarnation").unwrap() as u64,
        &n.attr_string("recv_device").unwrap(),
        &n.attr_string("tensor_name").unwrap(),
    )
}

fn find<'g>(g: &'g GraphDef, name: &str) -> &'g NodeDef {
    g.node.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("no node {name} in {g:?}"))
}

fn ops(g: &GraphDef) -> Vec<(String, String)> {
    g.node.iter().map(|n| (n.name.clone(), n.op.clone())).collect()
}

/// Partitions by task, checking that [`partition_graph`] (which moves the nodes) gives
/// what [`partition`] (which copies them) gives.
fn run(nodes: Vec<NodeDef>) -> Result<BTreeMap<String, GraphDef>, Status> {
    let inc = incarnations();
    let g = GraphDef { node: nodes, ..Default::default() };
    let opts = PartitionOptions { incarnations: &inc, split_by: SplitBy::Task };
    let copied = partition(&g, &opts);
    let moved = partition_graph(g, &opts);
    match (&copied, &moved) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => assert_eq!(a.message, b.message),
        _ => panic!("partition gave {copied:?}, partition_graph {moved:?}"),
    }
    copied
}

#[test]
fn ps_const_worker_consumer() {
    let mut noop = NodeDef { name: "step".into(), op: "NoOp".into(), device: W0.into(), ..Default::default() };
    noop.input = vec!["^x".into(), "^y".into()];
    let parts =
        run(vec![konst("w", PS, vec![1., 2.]), konst("x", W0, vec![3., 4.]), ident("y", W0, "w"), noop]).unwrap();
    assert_eq!(parts.keys().collect::<Vec<_>>(), vec!["/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"]);
    let ps = &parts["/job:ps/replica:0/task:0"];
    let wk = &parts["/job:worker/replica:0/task:0"];
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(ops(ps), vec![s("w", "Const"), s("w_S0", "_Send")]);
    assert_eq!(ops(wk), vec![s("x", "Const"), s("w_S1", "_Recv"), s("y", "Identity"), s("step", "NoOp")]);
    let send = find(ps, "w_S0");
    let recv = find(wk, "w_S1");
    assert_eq!(send.input, vec!["w"]);
    assert_eq!(send.device, PS);
    assert_eq!(send.attr_type("T").unwrap(), DataType::Float);
    assert_eq!(recv.attr_type("tensor_type").unwrap(), DataType::Float);
    assert_eq!(recv.device, W0);
    for n in [send, recv] {
        assert_eq!(n.attr_string("tensor_name").unwrap(), "edge_0_w");
        assert_eq!(n.attr_string("send_device").unwrap(), PS);
        assert_eq!(n.attr_string("recv_device").unwrap(), W0);
        assert!(!n.attr_bool("client_terminated").unwrap());
    }
    assert_eq!(key_of(send), key_of(recv));
    assert_eq!(key_of(send), rendezvous_key(PS, 0xa1b2c3d4e5f60708, W0, "edge_0_w"));
    assert_eq!(find(wk, "y").input, vec!["w_S1"]);
    assert_eq!(find(wk, "step").input, vec!["^x", "^y"]);
}

#[test]
fn control_edge_across_tasks() {
    let mut noop = NodeDef { name: "done".into(), op: "NoOp".into(), device: W0.into(), ..Default::default() };
    noop.input = vec!["^w".into()];
    let parts = run(vec![konst("w", PS, vec![1.]), noop]).unwrap();
    let ps = &parts["/job:ps/replica:0/task:0"];
    let wk = &parts["/job:worker/replica:0/task:0"];
    let dummy = find(ps, "w_S0");
    assert_eq!(dummy.op, "Const");
    assert_eq!(dummy.input, vec!["^w"]);
    let t = dummy.attr_tensor("value").unwrap();
    assert_eq!((t.dtype(), t.shape().dims().to_vec()), (DataType::Float, vec![0]));
    let send = find(ps, "w_S1");
    assert_eq!((send.op.as_str(), send.input.clone()), ("_Send", vec!["w_S0".to_string()]));
    let recv = find(wk, "w_S2");
    assert_eq!(recv.op, "_Recv");
    assert_eq!(key_of(send), key_of(recv));
    assert_eq!(recv.attr_string("tensor_name").unwrap(), "edge_0_w");
    let ident = find(wk, "w_S3");
    assert_eq!((ident.op.as_str(), ident.input.clone()), ("Identity", vec!["w_S2".to_string()]));
    assert_eq!(find(wk, "done").input, vec!["^w_S3"]);
}

#[test]
fn pairs_are_shared_per_destination_partition() {
    let parts = run(vec![
        konst("w", PS, vec![1.]),
        ident("a", W0, "w"),
        ident("b", W0, "w:0"),
        ident("c", W1, "w"),
        ident("d", W1, "w"),
    ])
    .unwrap();
    let ps = &parts["/job:ps/replica:0/task:0"];
    let sends: Vec<&NodeDef> = ps.node.iter().filter(|n| n.op == "_Send").collect();
    assert_eq!(sends.len(), 2, "one pair per destination task: {:?}", ops(ps));
    let w0 = &parts["/job:worker/replica:0/task:0"];
    let w1 = &parts["/job:worker/replica:0/task:1"];
    assert_eq!(w0.node.iter().filter(|n| n.op == "_Recv").count(), 1);
    assert_eq!(w1.node.iter().filter(|n| n.op == "_Recv").count(), 1);
    let r0 = w0.node.iter().find(|n| n.op == "_Recv").unwrap();
    let r1 = w1.node.iter().find(|n| n.op == "_Recv").unwrap();
    assert_eq!(find(w0, "a").input, vec![r0.name.clone()]);
    assert_eq!(find(w0, "b").input, vec![r0.name.clone()]);
    assert_eq!(find(w1, "c").input, vec![r1.name.clone()]);
    assert_eq!(find(w1, "d").input, vec![r1.name.clone()]);
    // Edges are numbered a: 0, b: 1, c: 2, d: 3.
    assert_eq!(r0.attr_string("tensor_name").unwrap(), "edge_0_w");
    assert_eq!(r1.attr_string("tensor_name").unwrap(), "edge_2_w");
    let keys: Vec<String> = sends.iter().map(|s| key_of(s)).collect();
    assert_eq!(keys, vec![key_of(r0), key_of(r1)]);
    assert!(key_of(r1).contains(W1));
}

#[test]
fn same_task_needs_no_pair_and_versions_are_kept() {
    let g = GraphDef {
        node: vec![konst("w", W0, vec![1.]), ident("a", W0, "w")],
        versions: Some(ferroflow_core::proto::VersionDef { producer: 7, ..Default::default() }),
        ..Default::default()
    };
    let inc = incarnations();
    let parts = partition(&g, &PartitionOptions { incarnations: &inc, split_by: SplitBy::Task }).unwrap();
    assert_eq!(parts.len(), 1);
    let p = &parts["/job:worker/replica:0/task:0"];
    assert_eq!(p.node, g.node);
    assert_eq!(p.versions.as_ref().unwrap().producer, 7);
}

#[test]
fn split_by_device() {
    let cpu1 = "/job:worker/replica:0/task:0/device:CPU:1";
    let mut inc = incarnations();
    inc.insert(cpu1.into(), 3);
    let g = GraphDef { node: vec![konst("w", W0, vec![1.]), ident("a", cpu1, "w")], ..Default::default() };
    let parts = partition(&g, &PartitionOptions { incarnations: &inc, split_by: SplitBy::Device }).unwrap();
    assert_eq!(parts.keys().collect::<Vec<_>>(), vec![W0, cpu1]);
    let by_task = partition(&g, &PartitionOptions { incarnations: &inc, split_by: SplitBy::Task }).unwrap();
    assert_eq!(by_task.len(), 1);
}

#[test]
fn errors_name_the_problem() {
    let e = run(vec![konst("w", "/job:ps/task:0", vec![1.])]).unwrap_err();
    assert!(e.message.contains("node 'w'") && e.message.contains("not a full device name"), "{e}");
    let e = run(vec![konst("w", W0, vec![1.]), ident("a", W0, "nope")]).unwrap_err();
    assert!(e.message.contains("'nope' names no node"), "{e}");
    let e = run(vec![konst("w", PS, vec![1.]), ident("a", W0, "w:3")]).unwrap_err();
    assert!(e.message.contains("has only 1 outputs"), "{e}");
    let other = "/job:ps/replica:0/task:5/device:CPU:0";
    let e = run(vec![konst("w", other, vec![1.]), ident("a", W0, "w")]).unwrap_err();
    assert_eq!(e.code, Code::FailedPrecondition);
    assert!(e.message.contains(other) && e.message.contains(PS), "{e}");
    let e = run(vec![konst("w", W0, vec![1.]), konst("w", W0, vec![1.])]).unwrap_err();
    assert!(e.message.contains("two nodes named 'w'"), "{e}");
}

#[test]
fn the_client_rewrite_then_partition_links_client_and_ps() {
    let mut x = NodeDef { name: "x".into(), op: "Placeholder".into(), device: W0.into(), ..Default::default() };
    x.attr.insert("dtype".into(), ferroflow_core::attr::ty(ferroflow_core::DataType::Float));
    let g = GraphDef {
        node: vec![konst("w", PS, vec![1., 2.]), x, ident("y", W0, "x"), ident("z", W0, "y"), ident("wy", W0, "w")],
        ..Default::default()
    };
    let c = ferroflow_graph::rewrite_for_client(&g, &["x:0"], &["z:0", "wy:0"], &[], W0, 5).unwrap();
    let inc: HashMap<String, u64> = [(PS.to_string(), 11), (W0.to_string(), 5)].into_iter().collect();
    let parts = partition(&c.graph, &PartitionOptions { incarnations: &inc, split_by: SplitBy::Task }).unwrap();
    assert_eq!(parts.len(), 2);
    let ps = &parts["/job:ps/replica:0/task:0"];
    assert_eq!(ps.node.iter().map(|n| n.op.as_str()).collect::<Vec<_>>(), vec!["Const", "_Send"]);
    let wk = &parts["/job:worker/replica:0/task:0"];
    let ops: Vec<&str> = wk.node.iter().map(|n| n.op.as_str()).collect();
    assert_eq!(ops, vec!["_Recv", "Identity", "Identity", "_Recv", "Identity", "_Send", "_Send"]);
    let edge_recv = &wk.node[3];
    assert!(!edge_recv.attr_bool("client_terminated").unwrap());
    assert_eq!(edge_recv.attr_int("send_device_incarnation").unwrap(), 11);
}
