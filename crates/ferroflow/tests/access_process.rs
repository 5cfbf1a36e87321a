//! Who may reach a task: the default bind (loopback for a loopback task), `--allow_from`
//! (the metrics port too), and the RPCs outside steps (`Shutdown`, `ServerInfo`, `Reset`,
//! `CleanupAll`), through the built binary. The non-loopback
//! address is the machine's own (the test connects to itself through it).

mod common;
#[path = "access_process/idle.rs"]
mod idle;

use ferroflow_runtime::StepRunner;
use std::time::Duration;

use common::Proc;
use ferroflow::{ops, Code, Scope};
use ferroflow_distributed::{shutdown_server, GrpcSession};

/// This machine's address on its default route (no packet is sent), if it has one.
fn own_address() -> Option<String> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.255:9").or_else(|_| s.connect("10.255.255.255:9")).ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then(|| ip.to_string())
}

fn start(args: &[&str]) -> (Proc, u16) {
    let mut full = vec!["server"];
    full.extend_from_slice(args);
    let mut p = Proc::start("server", &full, &[]);
    let line = p.wait_line("listening on ", Duration::from_secs(30));
    let port = line.rsplit(':').next().and_then(|x| x.trim().parse().ok()).expect("a port in the ready line");
    (p, port)
}

fn answers(target: &str) -> Result<(), ferroflow::Status> {
    let s = Scope::new_root();
    let c = ops::mul(&s, ops::constant(&s, 6.0f32), ops::constant(&s, 7.0f32));
    let sess = GrpcSession::new(target, s.graph())?.over_grpc_only();
    let v = sess.run(&[], &[&c], &[])?;
    assert_eq!(v[0].scalar_value::<f32>().unwrap(), 42.0);
    Ok(())
}

#[test]
fn loopback_tasks_bind_loopback_and_allow_from_closes_other_addresses() {
    let Some(ip) = own_address() else {
        eprintln!("no non-loopback address on this machine: nothing to check from outside");
        return;
    };
    // A task advertised on 127.0.0.1 listens on loopback only.
    let (_p, port) = start(&["--cluster", "worker=127.0.0.1:0", "--job_name", "worker", "--task_index", "0"]);
    answers(&format!("grpc://127.0.0.1:{port}")).unwrap();
    assert!(std::net::TcpStream::connect((ip.as_str(), port)).is_err(), "{ip}:{port} must not accept");
    // Bound to every interface but allowing only loopback: the other address is closed.
    let (_p, port) = start(&[
        "--cluster",
        "worker=127.0.0.1:0",
        "--job_name",
        "worker",
        "--task_index",
        "0",
        "--bind",
        "0.0.0.0",
        "--allow_from",
        "127.0.0.0/8",
    ]);
    answers(&format!("grpc://127.0.0.1:{port}")).unwrap();
    let e = answers(&format!("grpc://{ip}:{port}")).unwrap_err();
    assert!(matches!(e.code, Code::Unavailable | Code::DeadlineExceeded), "{e}");
    // Allowing only another network closes loopback too.
    let (_p, port) = start(&["--port", "0", "--bind", "0.0.0.0", "--allow_from", "10.0.0.0/8"]);
    assert!(answers(&format!("grpc://127.0.0.1:{port}")).is_err());
    // A malformed list stops the server at start, naming the entry.
    let mut bad = Proc::start("server", &["server", "--port", "0", "--allow_from", "not-a-cidr"], &[]);
    let (ok, lines) = bad.finish(Duration::from_secs(15));
    assert!(!ok, "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("not-a-cidr")), "{lines:?}");
}

/// A call's outcome: its code and message when it failed.
type Outcome = Result<(), (Code, String)>;

/// Reset, CleanupAll and ServerInfo on `target`: each call's outcome.
fn control_calls(target: &str) -> Vec<(&'static str, Outcome)> {
    use ferroflow::proto::{CleanupAllRequest, ResetRequest};
    use ferroflow_distributed::{endpoint, master_client, worker_client};
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let code = |e: tonic::Status| (Code::from_i32(e.code() as i32), e.message().to_string());
    let (reset, cleanup) = rt.block_on(async {
        let ch = endpoint(target, Duration::from_secs(5)).unwrap().connect_lazy();
        let reset = master_client(ch.clone()).reset(ResetRequest::default()).await.map(|_| ()).map_err(code);
        let cleanup = worker_client(ch).cleanup_all(CleanupAllRequest::default()).await.map(|_| ()).map_err(code);
        (reset, cleanup)
    });
    let info = ferroflow_distributed::server_info(target).map(|_| ()).map_err(|e| (e.code, e.message));
    vec![("Reset", reset), ("CleanupAll", cleanup), ("ServerInfo", info)]
}

#[test]
fn metrics_follow_allow_from() {
    let Some(ip) = own_address() else {
        eprintln!("no non-loopback address on this machine: nothing to check from outside");
        return;
    };
    let mport = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
    let (_p, _port) =
        start(&["--port", "0", "--bind", "0.0.0.0", "--allow_from", "127.0.0.0/8", "--metrics_port", &mport]);
    let get = |host: &str| -> String {
        use std::io::{Read, Write};
        let Ok(mut c) = std::net::TcpStream::connect((host, mport.parse::<u16>().unwrap())) else {
            return String::new();
        };
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = c.write_all(format!("GET /metrics HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes());
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        out
    };
    // The listener may take a moment after the ready line.
    let mut inside = String::new();
    for _ in 0..50 {
        inside = get("127.0.0.1");
        if inside.starts_with("HTTP/1.1 200") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(inside.starts_with("HTTP/1.1 200") && inside.contains("ferroflow_"), "{inside}");
    let outside = get(&ip);
    assert!(!outside.starts_with("HTTP/1.1 200") && !outside.contains("ferroflow_"), "{ip}: {outside}");
}

#[test]
fn shutdown_is_refused_from_outside_the_cluster() {
    let Some(ip) = own_address() else {
        eprintln!("no non-loopback address on this machine: nothing to check from outside");
        return;
    };
    let (mut p, port) =
        start(&["--cluster", "worker=127.0.0.1:0", "--job_name", "worker", "--task_index", "0", "--bind", "0.0.0.0"]);
    // From the machine's own address, which is neither loopback nor a task of the cluster.
    let outside = format!("grpc://{ip}:{port}");
    let e = shutdown_server(&outside, "test").unwrap_err();
    assert_eq!(e.code, Code::PermissionDenied, "{e}");
    assert!(e.message.contains("refused"), "{e}");
    answers(&format!("grpc://127.0.0.1:{port}")).unwrap();
    // The other RPCs that are not part of a step: refused from outside, answered on loopback.
    let loopback = format!("grpc://127.0.0.1:{port}");
    for (rpc, result) in control_calls(&outside) {
        let e = result.unwrap_err();
        assert_eq!(e.0, Code::PermissionDenied, "{rpc}: {}", e.1);
        assert!(e.1.contains(&format!("{rpc} on /job:worker/replica:0/task:0 refused for {ip}:")), "{}", e.1);
    }
    for (rpc, result) in control_calls(&loopback) {
        assert!(result.is_ok(), "{rpc} from loopback: {result:?}");
    }
    // Steps from the same outside address still run: only control RPCs are guarded.
    answers(&outside).unwrap();
    // From loopback it stops the task.
    shutdown_server(&format!("grpc://127.0.0.1:{port}"), "test").unwrap();
    let (ok, lines) = p.finish(Duration::from_secs(15));
    assert!(ok, "{lines:?}");
    let refused = |l: &&String| l.contains("control RPC refused") && l.contains("Shutdown") && l.contains(&ip);
    assert!(lines.iter().any(|l| refused(&l)), "the refusal is logged with the peer: {lines:?}");
}

#[test]
fn file_root_confines_checkpoint_paths() {
    use ferroflow::{DataType, Tensor};
    let base = std::env::temp_dir().join(format!("ff_access_file_root_{}", std::process::id()));
    let root = base.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let (_p, port) = start(&["--port", "0", "--file_root", root.to_str().unwrap()]);
    let target = format!("grpc://127.0.0.1:{port}");
    let s = Scope::new_root();
    let prefix = ops::placeholder(&s, DataType::String, Some(&[]));
    let names = ops::constant(&s, Tensor::new(vec![1usize], vec![b"x".to_vec()]).unwrap());
    let slices = ops::constant(&s, Tensor::new(vec![1usize], vec![Vec::<u8>::new()]).unwrap());
    let save = ops::save_v2(&s, prefix.clone(), names.clone(), slices.clone(), vec![ops::constant(&s, 3.5f32)]);
    let restored = ops::restore_v2(&s, prefix.clone(), names, slices, &[DataType::Float]);
    let sess = GrpcSession::new(&target, s.graph()).unwrap().over_grpc_only();
    let at = |p: &std::path::Path| Tensor::scalar(p.to_str().unwrap().as_bytes().to_vec());
    let inside = root.join("ckpt").join("model");
    sess.run(&[(&prefix, at(&inside))], &[], &[&save]).unwrap();
    let v = sess.run(&[(&prefix, at(&inside))], &[&restored[0]], &[]).unwrap();
    assert_eq!(v[0].scalar_value::<f32>().unwrap(), 3.5);
    for outside in [base.join("elsewhere"), root.join("..").join("escape"), std::path::PathBuf::from("/etc/ff_x")] {
        let e = sess.run(&[(&prefix, at(&outside))], &[], &[&save]).unwrap_err();
        assert_eq!(e.code, Code::PermissionDenied, "{}: {e}", outside.display());
        assert!(e.message.contains("--file_root"), "{e}");
        assert!(!outside.with_extension("index").exists());
    }
    let e = sess.run(&[(&prefix, at(std::path::Path::new("/etc/passwd")))], &[&restored[0]], &[]).unwrap_err();
    assert_eq!(e.code, Code::PermissionDenied, "{e}");
    answers(&target).unwrap();
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn one_address_cannot_take_every_connection_slot() {
    let Some(ip) = own_address() else {
        eprintln!("no non-loopback address on this machine: nothing to check from outside");
        return;
    };
    let (_p, port) =
        start(&["--port", "0", "--bind", "0.0.0.0", "--max_connections", "32", "--max_connections_per_peer", "8"]);
    // Eight silent connections from the machine's own address hold that address's share...
    let held: Vec<std::net::TcpStream> =
        (0..8).map(|_| std::net::TcpStream::connect((ip.as_str(), port)).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    // ...so a ninth from it is closed at once (its read ends instead of waiting)...
    let mut ninth = std::net::TcpStream::connect((ip.as_str(), port)).unwrap();
    ninth.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 16];
    let t = std::time::Instant::now();
    let n = std::io::Read::read(&mut ninth, &mut buf);
    assert!(matches!(n, Ok(0) | Err(_)) && t.elapsed() < Duration::from_secs(4), "{n:?} after {:?}", t.elapsed());
    // ...while other addresses still get in and run steps.
    answers(&format!("grpc://127.0.0.1:{port}")).unwrap();
    drop(held);
}
