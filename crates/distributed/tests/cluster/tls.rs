//! TLS between tasks and clients: a TLS cluster runs steps across its tasks, mutual TLS
//! refuses a client without a certificate, a plain-text client is refused, and a cluster
//! mixing TLS and plain tasks fails with an error naming the task.

use crate::common;

use ferroflow_runtime::StepRunner;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{rt, Cluster, PROMPT};
use ferroflow_core::proto::{ConfigProto, ListDevicesRequest};
use ferroflow_core::Code;
use ferroflow_distributed::{endpoint_with, master_client, set_client_tls, ClientTls, GrpcSession, ServerTls};
use ferroflow_graph::{ops, Scope};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

/// PEM files of a test CA, a server certificate for 127.0.0.1/localhost and a client
/// certificate, all signed by the CA; and a second CA that signed nothing here.
struct Pki {
    dir: PathBuf,
}

/// One PKI for the whole test binary: a process has one client TLS configuration.
fn pki() -> &'static Pki {
    static PKI: std::sync::OnceLock<Pki> = std::sync::OnceLock::new();
    PKI.get_or_init(|| {
        let pki = Pki::new();
        set_client_tls(pki.client("ca.pem", true));
        pki
    })
}

impl Pki {
    fn new() -> Pki {
        let dir = std::env::temp_dir().join(format!("ff_tls_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca = |cn: &str| {
            let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
            p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            p.distinguished_name.push(DnType::CommonName, cn);
            CertifiedIssuer::self_signed(p, KeyPair::generate().unwrap()).unwrap()
        };
        let issuer = ca("ferroflow test CA");
        std::fs::write(dir.join("ca.pem"), issuer.pem()).unwrap();
        std::fs::write(dir.join("other_ca.pem"), ca("some other CA").pem()).unwrap();
        for (stem, names) in [("server", vec!["127.0.0.1", "localhost"]), ("client", vec!["client"])] {
            let key = KeyPair::generate().unwrap();
            let mut p = CertificateParams::new(names.into_iter().map(String::from).collect::<Vec<_>>()).unwrap();
            p.distinguished_name.push(DnType::CommonName, stem);
            let cert = p.signed_by(&key, &issuer).unwrap();
            std::fs::write(dir.join(format!("{stem}.pem")), cert.pem()).unwrap();
            std::fs::write(dir.join(format!("{stem}.key")), key.serialize_pem()).unwrap();
        }
        Pki { dir }
    }

    fn path(&self, f: &str) -> PathBuf {
        self.dir.join(f)
    }

    /// A task's TLS; `mutual` asks clients for a certificate signed by the CA.
    fn server(&self, mutual: bool) -> ServerTls {
        let ca = self.path("ca.pem");
        let (client_ca, peers_ca) = if mutual { (Some(ca.as_path()), None) } else { (None, Some(ca.as_path())) };
        ServerTls::from_files(&self.path("server.pem"), &self.path("server.key"), client_ca, peers_ca).unwrap()
    }

    fn client(&self, ca: &str, with_cert: bool) -> ClientTls {
        let (c, k) = (self.path("client.pem"), self.path("client.key"));
        ClientTls::from_files(&self.path(ca), with_cert.then_some((c.as_path(), k.as_path()))).unwrap()
    }
}

/// ListDevices on `target` through `tls` (plain when `None`): the code it ends with.
fn list_devices(target: &str, tls: Option<&ClientTls>) -> Result<usize, (Code, String)> {
    let rt = rt();
    rt.block_on(async {
        let ep = endpoint_with(target, Duration::from_secs(3), tls).unwrap();
        let mut m = master_client(ep.connect_lazy());
        let mut req = tonic::Request::new(ListDevicesRequest::default());
        req.set_timeout(Duration::from_secs(5));
        m.list_devices(req).await.map(|r| r.into_inner().local_device.len()).map_err(|e| {
            let s = ferroflow_distributed::rpc_util::from_grpc(&e, "ListDevices");
            (s.code, s.message)
        })
    })
}

/// A product of a ps variable-free constant and a worker constant, fetched on the worker:
/// the step spans both tasks.
fn two_task_step(target: &str, config: ConfigProto) -> Result<f32, ferroflow_core::Status> {
    let s = Scope::new_root();
    let a = ops::constant(&s.with_device("/job:ps/task:0"), 6.0f32);
    let b = ops::constant(&s.with_device("/job:worker/task:0"), 7.0f32);
    let c = ops::mul(&s.with_device("/job:worker/task:0"), a, b);
    let sess = GrpcSession::with_config(target, s.graph(), config)?.over_grpc_only();
    sess.run(&[], &[&c], &[])?[0].scalar_value::<f32>()
}

#[test]
fn a_tls_cluster_runs_steps_across_tasks_and_refuses_plain_and_certless_clients() {
    let pki = pki();
    let cluster = common::tls_cluster(pki.server(true));
    let target = cluster.target("worker:0");
    assert!(target.starts_with("grpcs://"), "{target}");
    // A client with the CA and a certificate: a step whose tensors cross from ps to worker
    // (the worker reaches the ps over mutual TLS with its own certificate).
    assert_eq!(two_task_step(&target, ConfigProto::default()).unwrap(), 42.0);
    assert_eq!(list_devices(&target, Some(&pki.client("ca.pem", true))), Ok(1));

    // No client certificate: refused by mutual TLS.
    let (code, msg) = list_devices(&target, Some(&pki.client("ca.pem", false))).unwrap_err();
    assert_eq!(code, Code::Unavailable, "{msg}");
    // A client that does not trust the task's CA gives up on the server's certificate.
    let (code, msg) = list_devices(&target, Some(&pki.client("other_ca.pem", true))).unwrap_err();
    assert_eq!(code, Code::Unavailable, "{msg}");
    // Plain text (TensorFlow's Python client, a grpc:// target): refused.
    let plain = target.replacen("grpcs://", "grpc://", 1);
    let (code, msg) = list_devices(&plain, None).unwrap_err();
    assert_eq!(code, Code::FailedPrecondition, "{msg}");
    assert!(msg.contains("serves TLS only") && msg.contains("/job:worker/replica:0/task:0"), "{msg}");
    // The task still serves authenticated clients.
    assert_eq!(two_task_step(&target, ConfigProto::default()).unwrap(), 42.0);
}

#[test]
fn server_tls_without_client_certificates_accepts_any_client_that_trusts_it() {
    let pki = pki();
    let cluster = common::tls_cluster(pki.server(false));
    let target = cluster.target("worker:0");
    assert_eq!(list_devices(&target, Some(&pki.client("ca.pem", false))), Ok(1));
    let (code, msg) = list_devices(&target.replacen("grpcs://", "grpc://", 1), None).unwrap_err();
    assert_eq!(code, Code::FailedPrecondition, "{msg}");
}

#[test]
fn a_cluster_mixing_tls_and_plain_tasks_fails_naming_the_task() {
    let pki = pki();
    // A ps + worker cluster where only `tls_job` serves TLS: a step across both fails
    // promptly, its error.
    let failed_step = |tls_job: &str, operation_timeout_in_ms| {
        let cluster = Cluster::start_with(&[("ps", 1), ("worker", 1)], |job, _| ferroflow_distributed::ServerOptions {
            tls: (job == tls_job).then(|| pki.server(false)),
            ..Default::default()
        });
        let config = ConfigProto { operation_timeout_in_ms, ..Default::default() };
        let start = Instant::now();
        let e = two_task_step(&cluster.target("worker:0"), config).unwrap_err();
        assert!(start.elapsed() < PROMPT, "took {:?}", start.elapsed());
        e
    };
    // The ps is plain, the worker serves (and dials) TLS.
    let e = failed_step("worker", 4000);
    assert!(matches!(e.code, Code::Unavailable | Code::DeadlineExceeded), "{e}");
    assert!(e.message.contains("/job:ps/replica:0/task:0") && e.message.contains("TLS handshake failed"), "{e}");

    // The reverse: a plain worker calling a TLS ps hears at once that the ps serves TLS
    // only (before: its connections were closed and it retried until its deadline).
    let e = failed_step("ps", 20_000);
    assert_eq!(e.code, Code::FailedPrecondition, "{e}");
    assert!(e.message.contains("/job:ps/replica:0/task:0") && e.message.contains("serves TLS only"), "{e}");
    assert!(e.message.contains("grpcs://"), "{e}");
}

#[test]
fn certificate_files_that_are_not_pem_are_named_and_a_peer_ca_is_required() {
    let pki = pki();
    let e = ServerTls::from_files(&pki.path("server.pem"), &pki.path("server.key"), None, None).unwrap_err();
    assert!(e.message.contains("--tls_ca") && e.message.contains("--tls_client_ca"), "{e}");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let e = ServerTls::from_files(&dir.join("Cargo.toml"), &dir.join("Cargo.toml"), None, None).unwrap_err();
    assert!(e.message.contains("Cargo.toml"), "{e}");
}
