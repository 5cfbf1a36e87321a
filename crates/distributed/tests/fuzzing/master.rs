//! Fuzzing the MasterService of a live cluster (1 ps + 1 worker, in process, real gRPC):
//! CreateSession, ExtendSession, RunStep with feeds, PartialRunSetup, CloseSession, Reset
//! and ListDevices with structure-aware mutants of valid requests (graphs with huge
//! constants, wrong attrs, odd names; feeds with huge declared shapes), and the same
//! requests as mangled bytes. Steps of the seed graph span both tasks, so the master's
//! RunGraph and RecvTensor calls to the ps are exercised too. Every call must end with a
//! status (no hang), no thread may panic, and both tasks keep serving.

use crate::common;
use crate::fuzz;

use std::time::Duration;

use common::{rt, Cluster};
use ferroflow_core::proto::*;
use ferroflow_core::Tensor;
use fuzz::rpc::{self, Outcome};
use fuzz::{bytes as fbytes, graphs, values, Rng, Run};

const M: &str = "/tensorflow.MasterService/";

/// A session the fuzzer created, with its graph and version.
struct Session {
    handle: String,
    /// The channel (task) whose master has it.
    channel: usize,
    graph: GraphDef,
    version: i64,
}

/// One request: its method, message bytes and the channel of the session it names.
struct Call {
    method: &'static str,
    message: Vec<u8>,
    channel: Option<usize>,
}

fn call(method: &'static str, m: &impl prost::Message) -> Call {
    Call { method, message: m.encode_to_vec(), channel: None }
}

/// Tensors to fetch: usually an output of a node of the graph (often one of the last,
/// where generated nodes are), sometimes any name at all.
fn fetches(rng: &mut Rng, g: &GraphDef, n: usize) -> Vec<String> {
    let names = node_names(g);
    (0..n)
        .map(|_| {
            if names.is_empty() || rng.one_in(7) {
                values::tensor_name(rng, &names)
            } else if rng.one_in(2) {
                format!("{}:0", names[names.len() - 1 - rng.below(names.len().min(4))])
            } else {
                format!("{}:0", rng.pick(&names))
            }
        })
        .collect()
}

fn node_names(g: &GraphDef) -> Vec<String> {
    g.node.iter().map(|n| n.name.clone()).collect()
}

fn feed_tensor(rng: &mut Rng) -> TensorProto {
    if rng.one_in(3) {
        Tensor::new(vec![2, 2], vec![1.0f32, 0.0, 0.0, 1.0]).unwrap().to_proto()
    } else {
        values::tensor(rng)
    }
}

fn run_options(rng: &mut Rng) -> RunOptions {
    let timeout = if rng.one_in(8) { values::int(rng) } else { 1000 };
    RunOptions { timeout_in_ms: timeout, trace_level: rng.range(-1, 4) as i32, ..Default::default() }
}

fn session_config(rng: &mut Rng) -> Option<ConfigProto> {
    if !rng.one_in(4) {
        return None;
    }
    let mut c = ConfigProto { operation_timeout_in_ms: values::int(rng).clamp(-10, 1500), ..Default::default() };
    if rng.one_in(2) {
        c.device_count.insert("CPU".into(), values::int(rng) as i32);
    }
    c.isolate_session_state = rng.one_in(2);
    Some(c)
}

/// Generates input `i`: a request to send, given the sessions so far.
fn generate(rng: &mut Rng, sessions: &[Session], base: &GraphDef, ops: &[String]) -> Call {
    let s = if sessions.is_empty() || rng.one_in(12) { None } else { Some(rng.pick(sessions)) };
    let mut c = generate_for(rng, s, base, ops);
    c.channel = s.map(|s| s.channel);
    c
}

fn generate_for(rng: &mut Rng, s: Option<&Session>, base: &GraphDef, ops: &[String]) -> Call {
    let handle = s.map_or_else(|| values::name(rng), |s| s.handle.clone());
    let graph = s.map_or(base, |s| &s.graph);
    let names = node_names(graph);
    let pick_names =
        |rng: &mut Rng, n: usize| -> Vec<String> { (0..n).map(|_| values::tensor_name(rng, &names)).collect() };
    match rng.below(100) {
        0..=24 => {
            let g = match rng.below(12) {
                0 => base.clone(),
                1 => {
                    // A graph of generated nodes only.
                    let mut g = GraphDef::default();
                    for _ in 0..1 + rng.below(6) {
                        graphs::mutate_graph(rng, &mut g, ops);
                    }
                    g
                }
                _ => graphs::mutated(rng, base, ops),
            };
            let target = if rng.one_in(10) { values::name(rng) } else { String::new() };
            call("CreateSession", &CreateSessionRequest { graph_def: Some(g), config: session_config(rng), target })
        }
        25..=59 => {
            let mut feed = vec![NamedTensorProto { name: "p:0".into(), tensor: Some(feed_tensor(rng)) }];
            if rng.one_in(4) {
                feed.push(NamedTensorProto { name: values::tensor_name(rng, &names), tensor: Some(feed_tensor(rng)) });
            }
            if rng.one_in(6) {
                feed.clear();
            }
            let nf = if rng.one_in(4) { 2 } else { 1 };
            let nt = usize::from(rng.one_in(4));
            call(
                "RunStep",
                &RunStepRequest {
                    session_handle: handle,
                    feed,
                    fetch: fetches(rng, graph, nf),
                    target: fetches(rng, graph, nt).into_iter().map(|t| t.trim_end_matches(":0").to_string()).collect(),
                    options: Some(run_options(rng)),
                    partial_run_handle: if rng.one_in(12) { values::name(rng) } else { String::new() },
                    store_errors_in_response_body: rng.one_in(2),
                    request_id: match rng.below(10) {
                        0 => values::int(rng),
                        1..=4 => rng.next_u64() as i64,
                        _ => 0,
                    },
                },
            )
        }
        60..=71 => {
            // New nodes after the session's graph, then mutations of them.
            let mut g = graph.clone();
            let before = g.node.len();
            for _ in 0..1 + rng.below(3) {
                graphs::mutate_graph(rng, &mut g, ops);
            }
            let added = GraphDef { node: g.node.split_off(before.min(g.node.len())), ..Default::default() };
            let version = match s {
                Some(s) if !rng.one_in(6) => s.version,
                _ => values::int(rng),
            };
            call(
                "ExtendSession",
                &ExtendSessionRequest {
                    session_handle: handle,
                    graph_def: Some(added),
                    current_graph_version: version,
                },
            )
        }
        72..=79 => {
            let nf = 1 + rng.below(2);
            let nt = rng.below(2);
            call(
                "PartialRunSetup",
                &PartialRunSetupRequest {
                    session_handle: handle,
                    feed: if rng.one_in(2) { vec!["p:0".into()] } else { pick_names(rng, 1) },
                    fetch: fetches(rng, graph, nf),
                    target: pick_names(rng, nt),
                    request_id: values::int(rng),
                },
            )
        }
        80..=83 => call("CloseSession", &CloseSessionRequest { session_handle: handle }),
        84..=86 => {
            let container = (0..rng.below(3)).map(|_| values::name(rng)).collect();
            let device_filters = (0..rng.below(2)).map(|_| values::name(rng)).collect();
            call("Reset", &ResetRequest { container, device_filters })
        }
        87..=89 => call("ListDevices", &ListDevicesRequest { session_handle: handle }),
        _ => {
            let method = rng.pick::<&str>(&["MakeCallable", "RunCallable", "ReleaseCallable", "NoSuchMethod"]);
            call(method, &RunCallableRequest { session_handle: handle, ..Default::default() })
        }
    }
}

#[test]
fn fuzz_master_service() {
    let _one_at_a_time = crate::fuzz::exclusive();
    let c = Cluster::start_with_short_timeouts(&[("ps", 1), ("worker", 1)]);
    let target = c.target("worker:0");
    let ps = c.target("ps:0");
    let mut run = Run::start("master", 2000);
    let rt = rt();
    // The channels' connection tasks run on `rt`.
    let channels = {
        let _in_rt = rt.enter();
        [common_channel(&target), common_channel(&ps)]
    };
    let base = graphs::seed_graph("/job:ps/task:0", "/job:worker/task:0");
    let ops = graphs::op_names();
    let mut sessions: Vec<Session> = Vec::new();
    for i in 0..run.iters {
        let mut rng = run.rng(i);
        let req = generate(&mut rng, &sessions, &base, &ops);
        let mangle = rng.one_in(4);
        let body = if mangle {
            let m = fbytes::mutate(&mut rng, &req.message);
            fbytes::grpc_frame(&mut rng, &m)
        } else {
            let mut b = vec![0, 0, 0, 0, 0];
            b[1..5].copy_from_slice(&(req.message.len() as u32).to_be_bytes());
            b.extend_from_slice(&req.message);
            b
        };
        let channel = match req.channel {
            Some(c) if !rng.one_in(10) => c,
            _ => usize::from(rng.one_in(5)),
        };
        let ch = &channels[channel];
        let path = format!("{M}{}", req.method);
        let out = rt.block_on(rpc::call(ch, &path, body, Duration::from_secs(3)));
        let (label, said) = rpc::check(&mut run, i, req.method, &out, "RunStep", |r: &RunStepResponse| {
            (r.status_code, r.status_error_message.clone())
        });
        run.outcome_with(if mangle { format!("bytes:{label}") } else { label }, &said);
        // Reset closes the master's sessions even when it then fails (as TensorFlow's does).
        if !mangle && (matches!(out, Outcome::Ok(_)) || req.method == "Reset") {
            track(&mut sessions, &req, &out, channel);
        }
        if sessions.len() > 8 {
            let old = sessions.remove(0);
            let close = rpc::framed(&CloseSessionRequest { session_handle: old.handle });
            rt.block_on(rpc::call(&channels[old.channel], &format!("{M}CloseSession"), close, Duration::from_secs(3)));
        }
        if i % 50 == 49 {
            fuzz::still_serves(&target);
            fuzz::still_serves(&ps);
        }
    }
    fuzz::still_serves(&target);
    fuzz::still_serves(&ps);
    run.finish();
}

fn common_channel(target: &str) -> tonic::transport::Channel {
    ferroflow_distributed::endpoint(target, Duration::from_secs(2)).unwrap().connect_lazy()
}

/// Keeps the sessions the fuzzer created or extended (on the worker's master).
fn track(sessions: &mut Vec<Session>, req: &Call, out: &Outcome, channel: usize) {
    use prost::Message;
    match req.method {
        "CreateSession" => {
            if let (Ok(r), Some(resp)) =
                (CreateSessionRequest::decode(req.message.as_slice()), out.message::<CreateSessionResponse>())
            {
                sessions.push(Session {
                    handle: resp.session_handle,
                    channel,
                    graph: r.graph_def.unwrap_or_default(),
                    version: resp.graph_version,
                });
            }
        }
        "ExtendSession" => {
            if let (Ok(r), Some(resp)) =
                (ExtendSessionRequest::decode(req.message.as_slice()), out.message::<ExtendSessionResponse>())
            {
                if let Some(s) = sessions.iter_mut().find(|s| s.handle == r.session_handle) {
                    s.graph.node.extend(r.graph_def.unwrap_or_default().node);
                    s.version = resp.new_graph_version;
                }
            }
        }
        "Reset" => sessions.retain(|s| s.channel != channel),
        "CloseSession" => {
            if let Ok(r) = CloseSessionRequest::decode(req.message.as_slice()) {
                sessions.retain(|s| s.handle != r.session_handle);
            }
        }
        _ => {}
    }
}
