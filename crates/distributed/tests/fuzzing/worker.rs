//! Fuzzing the WorkerService of a live cluster (1 ps + 1 worker, in process, real gRPC):
//! CreateWorkerSession, RegisterGraph (real partition graphs of the seed graph, with
//! `_Send`/`_Recv` pairs, mutated), RunGraph with sends, RecvTensor and ferroflow's batched
//! RecvTensors with real and mangled rendezvous keys, DeregisterGraph, CleanupGraph,
//! CleanupAll, DeleteWorkerSession and GetStatus, as structured mutants and as mangled
//! bytes. Every call must end with a status, no thread may panic, and both tasks keep
//! serving.

use crate::common;
use crate::fuzz;

use std::collections::HashMap;
use std::time::Duration;

use common::{rt, Cluster};
use ferroflow_core::proto::*;
use ferroflow_distributed::{partition, PartitionOptions, SplitBy};
use ferroflow_graph::rewrite_for_client;
use fuzz::rpc::{self, Outcome};
use fuzz::{bytes as fbytes, graphs, values, Rng, Run};

const W: &str = "/tensorflow.WorkerService/";
const PS_DEV: &str = "/job:ps/replica:0/task:0/device:CPU:0";
const WORKER_DEV: &str = "/job:worker/replica:0/task:0/device:CPU:0";

/// What the fuzzer knows about the cluster: the partitions of the seed graph, the client
/// keys they feed and fetch, the device incarnations.
struct World {
    /// Task device → its partition of the seed graph.
    parts: Vec<(String, GraphDef)>,
    feed_keys: Vec<String>,
    fetch_keys: Vec<String>,
    incarnations: HashMap<String, u64>,
    server_def: ServerDef,
    /// Sessions created (channel, handle) and graphs registered (channel, session, handle).
    sessions: Vec<(usize, String)>,
    graphs: Vec<(usize, String, String)>,
    ops: Vec<String>,
}

fn incarnation(rt: &tokio::runtime::Runtime, ch: &tonic::transport::Channel) -> u64 {
    let out =
        rt.block_on(rpc::call(ch, &format!("{W}GetStatus"), rpc::framed(&GetStatusRequest {}), Duration::from_secs(5)));
    let st: GetStatusResponse = out.message().expect("GetStatus");
    st.device_attributes[0].incarnation
}

impl World {
    fn new(c: &Cluster, rt: &tokio::runtime::Runtime, chans: &[tonic::transport::Channel; 2]) -> World {
        let mut incarnations = HashMap::new();
        incarnations.insert(PS_DEV.to_string(), incarnation(rt, &chans[0]));
        incarnations.insert(WORKER_DEV.to_string(), incarnation(rt, &chans[1]));
        let g = graphs::seed_graph(PS_DEV, WORKER_DEV);
        let client =
            rewrite_for_client(&g, &["p:0"], &["add:0", "a:0"], &["v_init"], WORKER_DEV, incarnations[WORKER_DEV])
                .unwrap();
        let parts =
            partition(&client.graph, &PartitionOptions { incarnations: &incarnations, split_by: SplitBy::Task })
                .unwrap()
                .into_iter()
                .map(|(task, g)| (format!("{task}/device:CPU:0"), g))
                .collect();
        World {
            parts,
            feed_keys: client.feeds.iter().map(|t| t.key.clone()).collect(),
            fetch_keys: client.fetches.iter().map(|t| t.key.clone()).collect(),
            incarnations,
            server_def: c.spec.server_def("worker", 0).unwrap(),
            sessions: Vec::new(),
            graphs: Vec::new(),
            ops: graphs::op_names(),
        }
    }
}

/// A rendezvous key: a real one, one for another step's frame, or one with a part mangled.
fn key(rng: &mut Rng, w: &World) -> String {
    let real: Vec<&String> = w.feed_keys.iter().chain(&w.fetch_keys).collect();
    let inc = *rng.pick(&w.incarnations.values().copied().collect::<Vec<_>>());
    let base = if rng.one_in(3) {
        format!("{PS_DEV};{inc:016x};{WORKER_DEV};edge_{}_a;0:0", rng.below(30))
    } else {
        rng.pick(&real).to_string()
    };
    let mut parts: Vec<String> = base.split(';').map(str::to_string).collect();
    if rng.one_in(2) {
        let k = rng.below(parts.len());
        parts[k] = match rng.below(6) {
            0 => values::name(rng),
            1 => format!("{:x}", rng.next_u64()),
            2 => "99999999999:-1".into(),
            3 => String::new(),
            4 => "/job:ps/replica:0/task:99/device:CPU:0".into(),
            _ => "0:0:0".into(),
        };
    }
    if rng.one_in(10) {
        parts.truncate(rng.below(parts.len()));
    }
    parts.join(";")
}

/// A session of task `ch` (or of the other task, or none).
fn session_handle(rng: &mut Rng, w: &World, ch: usize) -> String {
    let mine: Vec<&String> = w.sessions.iter().filter(|(c, _)| *c == ch || rng.one_in(10)).map(|(_, h)| h).collect();
    if mine.is_empty() || rng.one_in(10) {
        values::name(rng)
    } else {
        rng.pick(&mine).to_string()
    }
}

/// A graph registered on task `ch` (session, handle), or made-up names.
fn graph_handle(rng: &mut Rng, w: &World, ch: usize) -> (String, String) {
    let mine: Vec<(String, String)> =
        w.graphs.iter().filter(|(c, _, _)| *c == ch).map(|(_, s, g)| (s.clone(), g.clone())).collect();
    if mine.is_empty() || rng.one_in(10) {
        (session_handle(rng, w, ch), values::name(rng))
    } else {
        rng.pick(&mine).clone()
    }
}

fn server_def(rng: &mut Rng, w: &World) -> Option<ServerDef> {
    let mut d = w.server_def.clone();
    match rng.below(6) {
        0 => return None,
        1 => d.task_index = values::int(rng) as i32,
        2 => d.job_name = values::name(rng),
        3 => {
            if let Some(c) = d.cluster.as_mut() {
                for j in &mut c.job {
                    for a in j.tasks.values_mut() {
                        if rng.one_in(2) {
                            *a = rng.pick(&["127.0.0.1:1", "", "::::", "localhost:99999", "127.0.0.1:0"]).to_string();
                        }
                    }
                }
            }
        }
        _ => {}
    }
    Some(d)
}

/// Generates one request (method and message).
/// Generates one request (method and message) for task `ch` (0 the ps, 1 the worker).
fn generate(rng: &mut Rng, w: &World, ch: usize) -> (&'static str, Vec<u8>) {
    use prost::Message;
    let step_id = if rng.one_in(3) { values::int(rng) } else { rng.range(1, 40) };
    match rng.below(100) {
        0..=11 => {
            let handle = if rng.one_in(3) { values::name(rng) } else { format!("s{}", rng.below(4)) };
            let req = CreateWorkerSessionRequest {
                session_handle: handle,
                server_def: server_def(rng, w),
                isolate_session_state: rng.one_in(2),
                master_task: if rng.one_in(4) { values::name(rng) } else { String::new() },
                master_incarnation: values::int(rng),
                ..Default::default()
            };
            ("CreateWorkerSession", req.encode_to_vec())
        }
        12..=33 => {
            let job = if ch == 0 { "/job:ps" } else { "/job:worker" };
            let own: Vec<&GraphDef> = w.parts.iter().filter(|(t, _)| t.starts_with(job)).map(|(_, g)| g).collect();
            let part = if own.is_empty() || rng.one_in(6) { &rng.pick(&w.parts).1 } else { *rng.pick(&own) };
            let g = if rng.one_in(5) { part.clone() } else { graphs::mutated(rng, part, &w.ops) };
            let req = RegisterGraphRequest {
                session_handle: session_handle(rng, w, ch),
                create_worker_session_called: !rng.one_in(8),
                graph_def: Some(g),
                ..Default::default()
            };
            ("RegisterGraph", req.encode_to_vec())
        }
        34..=59 => {
            let (session, graph) = graph_handle(rng, w, ch);
            let mut send: Vec<NamedTensorProto> = Vec::new();
            for k in &w.feed_keys {
                if !rng.one_in(5) {
                    let t = if rng.one_in(2) {
                        ferroflow_core::Tensor::new(vec![2, 2], vec![1.0f32, 0.0, 0.0, 1.0]).unwrap().to_proto()
                    } else {
                        values::tensor(rng)
                    };
                    send.push(NamedTensorProto { name: k.clone(), tensor: Some(t) });
                }
            }
            if rng.one_in(4) {
                send.push(NamedTensorProto { name: key(rng, w), tensor: Some(values::tensor(rng)) });
            }
            let recv_key = if rng.one_in(3) {
                vec![key(rng, w)]
            } else {
                w.fetch_keys.iter().filter(|_| rng.one_in(2)).cloned().collect()
            };
            let req = RunGraphRequest {
                session_handle: session,
                create_worker_session_called: !rng.one_in(8),
                graph_handle: graph,
                step_id,
                send,
                recv_key,
                is_partial: rng.one_in(8),
                is_last_partial_run: rng.one_in(8),
                store_errors_in_response_body: rng.one_in(2),
                request_id: if rng.one_in(3) { values::int(rng) } else { 0 },
                ..Default::default()
            };
            ("RunGraph", req.encode_to_vec())
        }
        60..=71 => {
            let req = RecvTensorRequest {
                step_id,
                rendezvous_key: key(rng, w),
                dma_ok: rng.one_in(2),
                request_id: values::int(rng),
                ..Default::default()
            };
            ("RecvTensor", req.encode_to_vec())
        }
        72..=79 => {
            // ferroflow's batched call: a stream of framed RecvTensorRequests in one body.
            let mut body = Vec::new();
            for _ in 0..rng.below(4) {
                let req = RecvTensorRequest { step_id, rendezvous_key: key(rng, w), ..Default::default() };
                body.extend(rpc::framed(&req));
            }
            ("ext:RecvTensors", body)
        }
        80..=84 => {
            let (session, graph) = graph_handle(rng, w, ch);
            let req = DeregisterGraphRequest {
                session_handle: session,
                create_worker_session_called: !rng.one_in(8),
                graph_handle: graph,
            };
            ("DeregisterGraph", req.encode_to_vec())
        }
        85..=88 => ("CleanupGraph", CleanupGraphRequest { step_id }.encode_to_vec()),
        89..=90 => {
            let container = (0..rng.below(3)).map(|_| values::name(rng)).collect();
            ("CleanupAll", CleanupAllRequest { container }.encode_to_vec())
        }
        91..=93 => {
            let mut session_handle = session_handle(rng, w, ch);
            if session_handle == "s0" && !rng.one_in(10) {
                session_handle = values::name(rng);
            }
            let req = DeleteWorkerSessionRequest { session_handle };
            ("DeleteWorkerSession", req.encode_to_vec())
        }
        94..=96 => ("GetStatus", GetStatusRequest {}.encode_to_vec()),
        _ => (*rng.pick(&["Logging", "Tracing", "RecvBuf", "CompleteGroup", "MarkRecvFinished", "Bogus"]), Vec::new()),
    }
}

/// Remembers the sessions and graphs that were created.
fn track(w: &mut World, ch: usize, method: &str, message: &[u8], out: &Outcome) {
    use prost::Message;
    match method {
        "CreateWorkerSession" => {
            if let Ok(r) = CreateWorkerSessionRequest::decode(message) {
                let s = (ch, r.session_handle);
                if !w.sessions.contains(&s) {
                    w.sessions.push(s);
                }
            }
        }
        "RegisterGraph" => {
            if let (Ok(r), Some(resp)) = (RegisterGraphRequest::decode(message), out.message::<RegisterGraphResponse>())
            {
                w.graphs.push((ch, r.session_handle, resp.graph_handle));
                if w.graphs.len() > 16 {
                    // The first two (the seed partitions) stay.
                    w.graphs.remove(2);
                }
            }
        }
        _ => {}
    }
}

#[test]
fn fuzz_worker_service() {
    let _one_at_a_time = crate::fuzz::exclusive();
    let c = Cluster::start_with_short_timeouts(&[("ps", 1), ("worker", 1)]);
    let rt = rt();
    let targets = [c.target("ps:0"), c.target("worker:0")];
    // The channels' connection tasks run on `rt`.
    let chans = {
        let _in_rt = rt.enter();
        targets.clone().map(|t| ferroflow_distributed::endpoint(&t, Duration::from_secs(2)).unwrap().connect_lazy())
    };
    let mut w = World::new(&c, &rt, &chans);
    // A session on each task with its partition registered, for the fuzzer to start from.
    for (ch, job) in [(0, "/job:ps"), (1, "/job:worker")] {
        let req = CreateWorkerSessionRequest { session_handle: "s0".into(), ..Default::default() };
        let out = rt.block_on(rpc::call(
            &chans[ch],
            &format!("{W}CreateWorkerSession"),
            rpc::framed(&req),
            Duration::from_secs(5),
        ));
        assert!(matches!(out, Outcome::Ok(_)), "{out:?}");
        w.sessions.push((ch, "s0".into()));
        let part = w.parts.iter().find(|(t, _)| t.starts_with(job)).unwrap().1.clone();
        let req = RegisterGraphRequest {
            session_handle: "s0".into(),
            create_worker_session_called: true,
            graph_def: Some(part),
            ..Default::default()
        };
        let out =
            rt.block_on(rpc::call(&chans[ch], &format!("{W}RegisterGraph"), rpc::framed(&req), Duration::from_secs(5)));
        let resp: RegisterGraphResponse = out.message().unwrap_or_else(|| panic!("{out:?}"));
        w.graphs.push((ch, "s0".into(), resp.graph_handle));
    }
    let mut run = Run::start("worker", 700);
    for i in 0..run.iters {
        let mut rng = run.rng(i);
        let ch = usize::from(!rng.one_in(3));
        let (method, message) = generate(&mut rng, &w, ch);
        let mangle = rng.one_in(4);
        let body = if method == "ext:RecvTensors" && !mangle {
            message.clone()
        } else if mangle {
            let m = fbytes::mutate(&mut rng, &message);
            fbytes::grpc_frame(&mut rng, &m)
        } else {
            let mut b = vec![0];
            b.extend_from_slice(&(message.len() as u32).to_be_bytes());
            b.extend_from_slice(&message);
            b
        };
        let path = match method.strip_prefix("ext:") {
            Some(m) => format!("/ferroflow.WorkerExt/{m}"),
            None => format!("{W}{method}"),
        };
        let timeout = Duration::from_millis(*rng.pick(&[100, 100, 250, 600]));
        let out = rt.block_on(rpc::call(&chans[ch], &path, body, timeout));
        let (label, said) = rpc::check(&mut run, i, method, &out, "RunGraph", |r: &RunGraphResponse| {
            (r.status_code, r.status_error_message.clone())
        });
        run.outcome_with(if mangle { format!("bytes:{label}") } else { label }, &said);
        if !mangle && matches!(out, Outcome::Ok(_)) {
            track(&mut w, ch, method, &message, &out);
        }
        if i % 50 == 49 {
            fuzz::still_serves(&targets[1]);
            fuzz::still_serves(&targets[0]);
        }
    }
    fuzz::still_serves(&targets[1]);
    fuzz::still_serves(&targets[0]);
    run.finish();
}
