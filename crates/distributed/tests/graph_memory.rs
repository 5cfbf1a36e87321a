//! Heap bytes per graph node (issue #22): a counting allocator measures what a session's
//! graph, its step plan and a registered graph keep alive, stage by stage, and bounds it.
//! The bounds are per node of a Placeholder and a chain of Const -> AddV2 -> Identity with
//! TensorFlow's attrs; TensorFlow 2.21's server grows by ~4.3 KB per node for such a graph
//! registered on its worker and ~9 KB through its master (RSS;
//! scripts/bench/graph_memory.py, BENCHMARKS.md).

use std::sync::atomic::{AtomicIsize, Ordering};

use ferroflow_core::proto::*;
use ferroflow_core::{attr, DataType, Tensor, WatchedAlloc};
use ferroflow_distributed::{RunStepCall, Server};

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grow(by: usize) {
    let now = LIVE.fetch_add(by as isize, Ordering::Relaxed) + by as isize;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrink(by: usize) {
    LIVE.fetch_sub(by as isize, Ordering::Relaxed);
}

#[global_allocator]
static GLOBAL: WatchedAlloc = WatchedAlloc { allocated: grow, freed: shrink };

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Starts a stage: the live bytes now, and the peak counted from here.
fn stage() -> isize {
    let now = live();
    PEAK.store(now, Ordering::Relaxed);
    now
}

fn peak() -> isize {
    PEAK.load(Ordering::Relaxed)
}

/// `links` links of Placeholder -> (Const -> AddV2 -> Identity)*, on `device`.
fn chain(links: usize, device: &str) -> (GraphDef, String) {
    let mut node = Vec::with_capacity(3 * links + 1);
    let mut p = NodeDef { name: "input".into(), op: "Placeholder".into(), device: device.into(), ..Default::default() };
    p.attr.insert("dtype".into(), attr::ty(DataType::Float));
    node.push(p);
    let mut prev = "input".to_string();
    for i in 0..links {
        let scope = format!("layer_{}", i / 1000);
        let mut c = NodeDef {
            name: format!("{scope}/Const_{i}"),
            op: "Const".into(),
            device: device.into(),
            ..Default::default()
        };
        c.attr.insert("dtype".into(), attr::ty(DataType::Float));
        c.attr.insert("value".into(), attr::tensor(&Tensor::scalar(i as f32)));
        let mut a = NodeDef {
            name: format!("{scope}/add_{i}"),
            op: "AddV2".into(),
            input: vec![prev.clone(), c.name.clone()],
            device: device.into(),
            ..Default::default()
        };
        a.attr.insert("T".into(), attr::ty(DataType::Float));
        let mut d = NodeDef {
            name: format!("{scope}/Identity_{i}"),
            op: "Identity".into(),
            input: vec![a.name.clone()],
            device: device.into(),
            ..Default::default()
        };
        d.attr.insert("T".into(), attr::ty(DataType::Float));
        prev = d.name.clone();
        node.extend([c, a, d]);
    }
    (GraphDef { node, ..Default::default() }, prev)
}

/// The heap bytes a copy of `g` holds.
fn heap_of(g: &GraphDef) -> isize {
    let t = live();
    let copy = g.clone();
    let bytes = live() - t;
    drop(copy);
    bytes
}

fn per_node(bytes: isize, nodes: usize) -> f64 {
    bytes as f64 / nodes as f64
}

const LINKS: usize = 10_000;

#[test]
fn heap_per_node_through_the_master_and_the_worker() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = Server::create_local_server().unwrap();
    let nodes = 3 * LINKS + 1;
    // Warm-up: a small session and step, so lazily built tables are not counted.
    let run = |g: GraphDef, last: String| {
        let h = rt
            .block_on(server.master().create_session(CreateSessionRequest { graph_def: Some(g), ..Default::default() }))
            .unwrap()
            .session_handle;
        let req = RunStepRequest { session_handle: h.clone(), fetch: vec![format!("{last}:0")], ..Default::default() };
        (h, RunStepCall { req, feeds: vec![("input:0".into(), Tensor::scalar(1.0f32))] })
    };
    let (g, last) = chain(10, "");
    let (h, req) = run(g, last);
    rt.block_on(server.master().run_step(req)).unwrap();
    rt.block_on(server.master().close_session(CloseSessionRequest { session_handle: h })).unwrap();

    let (g, last) = chain(LINKS, "");
    let wire = prost::Message::encoded_len(&g);
    let graphdef = heap_of(&g);
    // CreateSession takes the request's graph: what it keeps beyond it, and its peak.
    let t0 = stage();
    let (h, req) = run(g, last);
    let (session, session_peak) = (live() - t0 + graphdef, peak() - t0 + graphdef);
    let t1 = stage();
    let r = rt.block_on(server.master().run_step(req)).unwrap();
    drop(r);
    let (step, step_peak) = (live() - t1, peak() - t1);
    let (g, _) = chain(LINKS, "/job:localhost/replica:0/task:0/device:CPU:0");
    let placed = prost::Message::encoded_len(&g);
    let placed_graphdef = heap_of(&g);
    let t2 = stage();
    let resp =
        server.worker().register_graph(RegisterGraphRequest { graph_def: Some(g), ..Default::default() }).unwrap();
    let (registered, registered_peak) = (live() - t2 + placed_graphdef, peak() - t2 + placed_graphdef);
    let n = |b: isize| per_node(b, nodes);
    eprintln!(
        "{nodes} nodes, {:.0} B/node on the wire ({:.0} placed); heap per node, kept (peak): a GraphDef {:.0}, placed \
         {:.0}; the session's graph {:.0} ({:.0}); the first step's plan and registered partition {:.0} ({:.0}); \
         RegisterGraph alone {:.0} ({:.0})",
        n(wire as isize),
        n(placed as isize),
        n(graphdef),
        n(placed_graphdef),
        n(session),
        n(session_peak),
        n(step),
        n(step_peak),
        n(registered),
        n(registered_peak),
    );
    // Measured: 667 (811), 824 (1341), 686 (799) bytes per node. The bounds leave room for
    // allocator and layout changes and stay far below TensorFlow's.
    assert!(n(session) < 1_200.0 && n(session_peak) < 1_500.0, "the session's graph");
    assert!(n(step) < 1_500.0 && n(step_peak) < 2_500.0, "the plan and the registered partition");
    assert!(n(registered) < 1_200.0 && n(registered_peak) < 1_500.0, "a registered graph");
    drop((resp, h));
}
