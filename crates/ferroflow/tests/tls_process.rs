//! `ferroflow server --tls_cert/--tls_key/--tls_client_ca` through the built binary: a
//! two-task cluster over mutual TLS runs a step across its tasks for a Rust client with a
//! certificate (`grpcs://`), refuses a client without one and a plain-text client, and
//! stops at start on a file that is not a certificate; `ferroflow train` runs a 1 ps + 2
//! worker job over mutual TLS.

mod common;

use ferroflow_runtime::StepRunner;
use std::path::PathBuf;
use std::time::Duration;

use common::{accuracy, free_ports, Proc, TrainCluster};
use ferroflow::{ops, Code, Scope};
use ferroflow_distributed::{endpoint_with, master_client, set_client_tls, shutdown_server, ClientTls, GrpcSession};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

/// A CA, a server certificate for 127.0.0.1 and a client certificate, as PEM files.
fn pki(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, "ferroflow test CA");
    let ca = CertifiedIssuer::self_signed(p, KeyPair::generate().unwrap()).unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    for (stem, name) in [("server", "127.0.0.1"), ("client", "client")] {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec![name.to_string()]).unwrap().signed_by(&key, &ca).unwrap();
        std::fs::write(dir.join(format!("{stem}.pem")), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{stem}.key")), key.serialize_pem()).unwrap();
    }
}

fn step(target: &str) -> Result<f32, ferroflow::Status> {
    let s = Scope::new_root();
    let a = ops::constant(&s.with_device("/job:ps/task:0"), 6.0f32);
    let c = ops::mul(&s.with_device("/job:worker/task:0"), a, ops::constant(&s, 7.0f32));
    let sess = GrpcSession::new(target, s.graph())?;
    sess.run(&[], &[&c], &[])?[0].scalar_value::<f32>()
}

/// ListDevices through `tls` (plain when `None`): the status code of a failure.
fn list_devices(target: &str, tls: Option<&ClientTls>) -> Result<(), Code> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut m = master_client(endpoint_with(target, Duration::from_secs(3), tls).unwrap().connect_lazy());
        let mut req = tonic::Request::new(ferroflow_core::proto::ListDevicesRequest::default());
        req.set_timeout(Duration::from_secs(5));
        m.list_devices(req).await.map(|_| ()).map_err(|e| ferroflow_distributed::rpc_util::from_grpc(&e, "").code)
    })
}

#[test]
fn a_mutual_tls_cluster_serves_clients_with_certificates_only() {
    let dir: PathBuf = std::env::temp_dir().join(format!("ff_tls_process_{}", std::process::id()));
    pki(&dir);
    let f = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let [ps, w] = free_ports();
    let cluster = format!("ps=127.0.0.1:{ps};worker=127.0.0.1:{w}");
    let tls = ["--tls_cert", &f("server.pem"), "--tls_key", &f("server.key"), "--tls_client_ca", &f("ca.pem")];
    let mut procs: Vec<Proc> = Vec::new();
    for (job, port) in [("ps", ps), ("worker", w)] {
        let mut args = vec!["server", "--cluster", &cluster, "--job_name", job, "--task_index", "0"];
        args.extend_from_slice(&tls);
        let mut p = Proc::start(job, &args, &[]);
        let line = p.wait_line("listening on ", Duration::from_secs(30));
        assert!(line.ends_with(&format!("grpcs://127.0.0.1:{port}")), "{line}");
        procs.push(p);
    }
    let target = format!("grpcs://127.0.0.1:{w}");
    let with_cert =
        ClientTls::from_files(&dir.join("ca.pem"), Some((&dir.join("client.pem"), &dir.join("client.key")))).unwrap();
    let without_cert = ClientTls::from_files(&dir.join("ca.pem"), None).unwrap();
    set_client_tls(with_cert.clone());
    assert_eq!(step(&target).unwrap(), 42.0);
    assert_eq!(list_devices(&target, Some(&without_cert)), Err(Code::Unavailable));
    assert_eq!(list_devices(&format!("grpc://127.0.0.1:{w}"), None), Err(Code::FailedPrecondition));
    assert_eq!(list_devices(&target, Some(&with_cert)), Ok(()));
    assert_eq!(step(&target).unwrap(), 42.0);
    // On mutual TLS the certificate, not the address, says who is a task of the cluster:
    // a client whose certificate names no task host ("client") may run steps but not stop
    // a task, even from loopback; the tasks' own certificate (127.0.0.1) may.
    for port in [ps, w] {
        let e = shutdown_server(&format!("grpcs://127.0.0.1:{port}"), "not yours").unwrap_err();
        assert_eq!(e.code, Code::PermissionDenied, "{e}");
        assert!(e.message.contains("certificate names"), "{e}");
    }
    let e = ferroflow_distributed::server_info(&target).unwrap_err();
    assert_eq!(e.code, Code::PermissionDenied, "{e}");
    set_client_tls(
        ClientTls::from_files(&dir.join("ca.pem"), Some((&dir.join("server.pem"), &dir.join("server.key")))).unwrap(),
    );
    assert!(ferroflow_distributed::server_info(&target).is_ok());
    for (p, port) in procs.iter_mut().zip([ps, w]) {
        shutdown_server(&format!("grpcs://127.0.0.1:{port}"), "test done").unwrap();
        let (ok, lines) = p.finish(Duration::from_secs(20));
        assert!(ok, "{lines:?}");
        if port == w {
            assert!(lines.iter().any(|l| l.contains("TLS connection refused")), "the refusals are logged: {lines:?}");
        }
    }
    // A file that is not a certificate stops the server at start, naming it.
    let toml = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let mut bad =
        Proc::start("bad", &["server", "--port", "0", "--tls_cert", toml, "--tls_key", toml, "--tls_ca", toml], &[]);
    let (ok, lines) = bad.finish(Duration::from_secs(15));
    assert!(!ok && lines.iter().any(|l| l.contains("Cargo.toml")), "{lines:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ferroflow_train_runs_a_cluster_over_mutual_tls() {
    let dir: PathBuf = std::env::temp_dir().join(format!("ff_tls_train_{}", std::process::id()));
    pki(&dir);
    let f = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let (cert, key, ca) = (f("server.pem"), f("server.key"), f("ca.pem"));
    let args = ["--model", "mlp", "--steps", "300", "--tls_cert", &cert, "--tls_key", &key, "--tls_client_ca", &ca];
    let c = TrainCluster::new();
    let mut ps = c.start("ps", 0, &args);
    assert!(ps.wait_line("grpcs://", Duration::from_secs(30)).contains("grpcs://127.0.0.1:"));
    let mut workers: Vec<Proc> = (0..2).map(|t| c.start("worker", t, &args)).collect();
    for (t, w) in workers.iter_mut().enumerate() {
        let (ok, lines) = w.finish(Duration::from_secs(300));
        assert!(ok, "{lines:?}");
        if t == 0 {
            assert!(accuracy(&lines) > 80.0, "the chief evaluates: {lines:?}");
        }
    }
    // The chief stopped the ps over TLS.
    let (ok, lines) = ps.finish(Duration::from_secs(30));
    assert!(ok, "{lines:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
