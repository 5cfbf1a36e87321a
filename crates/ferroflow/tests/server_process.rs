//! Multi-process tests of `ferroflow server`: each task is a separate OS process started
//! from the built binary on 127.0.0.1 ports; readiness is the printed target line (the
//! port is open when it appears), waited for with a bound; every child is killed at the
//! end even if the test fails.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ferroflow::proto::ConfigProto;
use ferroflow::{ops, Code, Scope};
use ferroflow_distributed::{shutdown_server, GrpcSession};

const READY: Duration = Duration::from_secs(30);
const EXIT: Duration = Duration::from_secs(15);

/// A running `ferroflow server`, killed on drop.
struct Proc {
    child: Child,
    target: String,
    started_in: Duration,
}

impl Proc {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Proc {
        let t = Instant::now();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ferroflow"));
        cmd.arg("server").args(args).stdout(Stdio::piped()).stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn ferroflow server");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Some(i) = line.find("listening on ") {
                    let _ = tx.send(line[i + "listening on ".len()..].trim().to_string());
                }
            }
        });
        match rx.recv_timeout(READY) {
            Ok(target) => Proc { child, target, started_in: t.elapsed() },
            Err(_) => {
                let _ = child.kill();
                let status = child.wait();
                panic!("ferroflow server {args:?} did not print its target within {READY:?} ({status:?})");
            }
        }
    }

    /// Waits for the process to exit (bounded).
    fn wait_exit(&mut self) -> ExitStatus {
        let end = Instant::now() + EXIT;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return s;
            }
            assert!(Instant::now() < end, "server {} did not exit within {EXIT:?}", self.target);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn free_ports(n: usize) -> Vec<u16> {
    let ls: Vec<std::net::TcpListener> = (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    ls.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

#[test]
fn local_server_hello_and_shutdown() {
    let mut p = Proc::start(&["--port", "0"], &[]);
    eprintln!("ferroflow server start-to-port-open: {:?}", p.started_in);
    assert!(p.target.starts_with("grpc://localhost:"), "{}", p.target);
    let s = Scope::new_root();
    let hello = ops::constant(&s, ferroflow::Tensor::scalar(b"hello".to_vec()));
    let sess = GrpcSession::new(&p.target, s.graph()).unwrap();
    assert_eq!(sess.run(&[], &[&hello], &[]).unwrap()[0].scalar_value::<Vec<u8>>().unwrap(), b"hello");
    drop(sess);
    shutdown_server(&p.target, "test").unwrap();
    assert!(p.wait_exit().success());
}

#[test]
fn ps_and_two_workers_as_processes() {
    let ports = free_ports(3);
    let cluster = format!("ps=127.0.0.1:{};worker=127.0.0.1:{},127.0.0.1:{}", ports[0], ports[1], ports[2]);
    let mut ps = Proc::start(&["--cluster", &cluster, "--job_name", "ps", "--task_index", "0"], &[]);
    let hosts_ps = format!("127.0.0.1:{}", ports[0]);
    let hosts_w = format!("127.0.0.1:{},127.0.0.1:{}", ports[1], ports[2]);
    let mut workers: Vec<Proc> = (0..2)
        .map(|t| {
            let t = t.to_string();
            Proc::start(
                &["--ps_hosts", &hosts_ps, "--worker_hosts", &hosts_w, "--job_name", "worker", "--task_index", &t],
                &[],
            )
        })
        .collect();
    for (w, a, b, want) in [(0usize, 3.0f32, 4.0f32, 12.0f32), (1, 5.0, 8.0, 40.0)] {
        let s = Scope::new_root();
        let x = ops::constant(&s.with_device("/job:ps/task:0"), a);
        let here = s.with_device(&format!("/job:worker/task:{w}"));
        let z = ops::mul(&here, x, ops::constant(&here, b));
        let sess = GrpcSession::new(&workers[w].target, s.graph()).unwrap();
        assert_eq!(sess.run(&[], &[&z], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), want);
    }
    for p in workers.iter_mut().chain(std::iter::once(&mut ps)) {
        shutdown_server(&p.target, "job done").unwrap();
        assert!(p.wait_exit().success());
    }
}

#[test]
fn idle_timeout_and_tf_config() {
    let port = free_ports(1)[0];
    let tf_config = format!(r#"{{"cluster": {{"ps": ["127.0.0.1:{port}"]}}, "task": {{"type": "ps", "index": 0}}}}"#);
    let t = Instant::now();
    let mut p = Proc::start(&["--idle_timeout_secs", "0.5"], &[("TF_CONFIG", &tf_config)]);
    assert_eq!(p.target, format!("grpc://127.0.0.1:{port}"));
    assert!(p.wait_exit().success(), "an idle ps exits 0");
    assert!(t.elapsed() >= Duration::from_millis(500));
}

#[test]
fn a_killed_ps_fails_the_step_naming_it() {
    let ports = free_ports(2);
    let cluster = format!("ps=127.0.0.1:{};worker=127.0.0.1:{}", ports[0], ports[1]);
    let mut ps = Proc::start(&["--cluster", &cluster, "--job_name", "ps"], &[]);
    let w = Proc::start(&["--cluster", &cluster, "--job_name", "worker"], &[]);
    let s = Scope::new_root();
    let x = ops::constant(&s.with_device("/job:ps/task:0"), 2.0f32);
    let y = ops::mul(&s.with_device("/job:worker/task:0"), x.clone(), x);
    let config = ConfigProto { operation_timeout_in_ms: 5000, ..Default::default() };
    let sess = GrpcSession::with_config(&w.target, s.graph(), config).unwrap();
    assert_eq!(sess.run(&[], &[&y], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 4.0);
    ps.child.kill().unwrap();
    ps.wait_exit();
    let t = Instant::now();
    let e = sess.run(&[], &[&y], &[]).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert!(matches!(e.code, Code::Unavailable | Code::DeadlineExceeded | Code::Aborted), "{e}");
    assert!(e.message.contains("/job:ps/replica:0/task:0"), "{e}");
}
