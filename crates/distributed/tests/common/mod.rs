//! Helpers for in-process cluster tests: every task's listener is bound to 127.0.0.1:0
//! first, so the cluster spec carries real ports and no test races for a port.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::time::Duration;

use ferroflow_distributed::{ClusterSpec, Server, ServerOptions};

/// A running in-process cluster.
pub struct Cluster {
    pub spec: ClusterSpec,
    pub servers: BTreeMap<String, Server>,
}

impl Cluster {
    /// Starts `jobs` with 2-second step, session-creation and receive timeouts, so that a
    /// blocked step (as the fuzzers provoke) ends quickly.
    pub fn start_with_short_timeouts(jobs: &[(&str, usize)]) -> Cluster {
        Cluster::start_with(jobs, |_, _| {
            let mut o = ServerOptions::default();
            o.master.default_step_timeout = Duration::from_secs(2);
            o.master.create_session_timeout = Duration::from_secs(2);
            o.worker.default_step_timeout = Duration::from_secs(2);
            o.worker.max_recv_wait = Duration::from_secs(2);
            o.worker.step_grace = Duration::from_secs(2);
            o
        })
    }

    /// Starts `jobs` (name, number of tasks), each task a Server on its own port.
    pub fn start(jobs: &[(&str, usize)]) -> Cluster {
        Cluster::start_with(jobs, |_, _| ServerOptions::default())
    }

    /// [`Cluster::start`] with per-task options.
    pub fn start_with(jobs: &[(&str, usize)], opts: impl Fn(&str, i32) -> ServerOptions) -> Cluster {
        let mut listeners = Vec::new();
        let mut spec = Vec::new();
        for (job, n) in jobs {
            let mut addrs = Vec::new();
            for t in 0..*n {
                let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
                addrs.push(format!("127.0.0.1:{}", l.local_addr().unwrap().port()));
                listeners.push((job.to_string(), t as i32, l));
            }
            spec.push((job.to_string(), addrs));
        }
        let spec_ref: Vec<(&str, Vec<&str>)> =
            spec.iter().map(|(j, a)| (j.as_str(), a.iter().map(String::as_str).collect())).collect();
        let spec = ClusterSpec::new(&spec_ref).unwrap();
        let mut servers = BTreeMap::new();
        for (job, t, l) in listeners {
            let mut o = opts(&job, t);
            o.listener = Some(l);
            let s = Server::new(&spec, &job, t, o).unwrap();
            servers.insert(format!("{job}:{t}"), s);
        }
        Cluster { spec, servers }
    }

    /// Starts `jobs` on an in-memory net (no sockets; task `job:t` at `job{t}.netN.mem:1`,
    /// N unique in the process) with per-task options; the net's filters stand between
    /// the tasks.
    pub fn in_memory(
        jobs: &[(&str, usize)],
        opts: impl Fn(&str, i32) -> ServerOptions,
    ) -> (Cluster, std::sync::Arc<ferroflow_distributed::InMemoryNet>) {
        static NETS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let id = NETS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let net = ferroflow_distributed::InMemoryNet::new(0x5eed);
        let addrs: Vec<(String, Vec<String>)> = jobs
            .iter()
            .map(|(j, n)| (j.to_string(), (0..*n).map(|t| format!("{j}{t}.net{id}.mem:1")).collect()))
            .collect();
        let spec_ref: Vec<(&str, Vec<&str>)> =
            addrs.iter().map(|(j, a)| (j.as_str(), a.iter().map(String::as_str).collect())).collect();
        let spec = ClusterSpec::new(&spec_ref).unwrap();
        let mut servers = BTreeMap::new();
        for (job, n) in jobs {
            for t in 0..*n as i32 {
                servers.insert(format!("{job}:{t}"), net.server(&spec, job, t, opts(job, t)).unwrap());
            }
        }
        (Cluster { spec, servers }, net)
    }

    /// The server of `job:task`.
    pub fn server(&self, key: &str) -> &Server {
        &self.servers[key]
    }

    /// The target of `job:task`.
    pub fn target(&self, key: &str) -> String {
        self.servers[key].target().to_string()
    }
}

/// A port with nothing listening on it (bound, then closed).
pub fn dead_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Tokio runtime for raw RPC tests.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// A generous bound for "returns promptly" assertions.
pub const PROMPT: Duration = Duration::from_secs(10);

/// Creates a session on the master behind `m` with graph `g`; its handle.
pub async fn new_session(
    m: &mut ferroflow_proto::master_service_client::MasterServiceClient<ferroflow_distributed::PeerChannel>,
    g: ferroflow_proto::GraphDef,
) -> String {
    let req = ferroflow_proto::CreateSessionRequest { graph_def: Some(g), ..Default::default() };
    m.create_session(req).await.unwrap().into_inner().session_handle
}

/// A cluster of one ps and one worker task, and a graph's root scope with a scope placed on
/// each task: `(cluster, root, ps, worker)`.
pub fn ps_and_worker() -> (Cluster, ferroflow_graph::Scope, ferroflow_graph::Scope, ferroflow_graph::Scope) {
    let c = Cluster::start(&[("ps", 1), ("worker", 1)]);
    let s = ferroflow_graph::Scope::new_root();
    let (ps, wk) = (s.with_device("/job:ps/task:0"), s.with_device("/job:worker/task:0"));
    (c, s, ps, wk)
}

/// A cluster of one ps and one worker task serving `tls`.
pub fn tls_cluster(tls: ferroflow_distributed::ServerTls) -> Cluster {
    Cluster::start_with(&[("ps", 1), ("worker", 1)], |_, _| ServerOptions {
        tls: Some(tls.clone()),
        ..Default::default()
    })
}
