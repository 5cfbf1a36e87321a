//! Multi-process tests of `ferroflow server`: each task is a separate OS process started
//! from the built binary on 127.0.0.1 ports; readiness is the printed target line (the
//! port is open when it appears), waited for with a bound; every child is killed at the
//! end even if the test fails.

use ferroflow_runtime::StepRunner;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ferroflow::proto::ConfigProto;
use ferroflow::{ops, Code, Scope};
use ferroflow_distributed::{shutdown_server, GrpcSession};

#[path = "server_process/amplify.rs"]
mod amplify;

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

/// A step whose graph `build` makes on the default device of `target`: its error.
fn step_err(target: &str, build: impl FnOnce(&Scope) -> ferroflow::Output) -> ferroflow::Status {
    let s = Scope::new_root();
    let out = build(&s);
    GrpcSession::new(target, s.graph()).unwrap().run(&[], &[&out], &[]).unwrap_err()
}

/// A small step that must still work on `target`.
fn answers(target: &str) {
    let s = Scope::new_root();
    let c = ops::mul(&s, ops::constant(&s, 6.0f32), ops::constant(&s, 7.0f32));
    let sess = GrpcSession::new(target, s.graph()).unwrap();
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 42.0);
}

#[test]
fn inputs_that_declare_huge_tensors_get_errors_and_the_task_stays_up() {
    use ferroflow::proto::{
        attr_value, tensor_shape_proto::Dim, AttrValue, CreateSessionRequest, GraphDef, NamedTensorProto, NodeDef,
        RunStepRequest, TensorProto, TensorShapeProto,
    };
    use ferroflow::{attr, DataType};
    use ferroflow_distributed::{endpoint, master_client};
    let p = Proc::start(&["--port", "0", "--memory_limit", "1G"], &[]);
    let t = p.target.as_str();
    fn c(s: &Scope, v: ferroflow::Tensor) -> ferroflow::Output {
        ops::constant(s, v)
    }
    let big = 1i64 << 33;
    type Build = Box<dyn FnOnce(&Scope) -> ferroflow::Output>;
    let kernels: Vec<(&str, Build)> = vec![
        ("Tile", Box::new(|s: &Scope| ops::tile(s, c(s, vec![1.0f32; 4].into()), c(s, vec![i32::MAX].into())))),
        ("BroadcastTo", Box::new(move |s: &Scope| ops::broadcast_to(s, c(s, 1.0f32.into()), c(s, vec![big].into())))),
        ("Range", Box::new(move |s: &Scope| ops::range(s, c(s, 0i64.into()), c(s, big.into()), c(s, 1i64.into())))),
        (
            "OneHot",
            Box::new(|s: &Scope| {
                let (on, off) = (c(s, 1.0f32.into()), c(s, 0.0f32.into()));
                ops::one_hot(s, c(s, vec![0i32].into()), c(s, i32::MAX.into()), on, off, -1)
            }),
        ),
        (
            "Pad",
            Box::new(move |s: &Scope| {
                let pads = ferroflow::Tensor::new(vec![1, 2], vec![0i64, big]).unwrap();
                ops::pad(s, c(s, vec![1.0f32].into()), c(s, pads))
            }),
        ),
        (
            "UnsortedSegmentSum",
            Box::new(move |s: &Scope| {
                ops::unsorted_segment_sum(s, c(s, vec![1.0f32].into()), c(s, vec![0i64].into()), c(s, big.into()))
            }),
        ),
        (
            "RandomUniform",
            Box::new(move |s: &Scope| ops::random_uniform(s, c(s, vec![big].into()), DataType::Float, 1, 2)),
        ),
        ("Fill", Box::new(move |s: &Scope| ops::fill(s, c(s, vec![big].into()), c(s, 1.0f32.into())))),
    ];
    for (op, build) in kernels {
        let e = step_err(t, build);
        assert_eq!(e.code, Code::ResourceExhausted, "{op}: {e}");
        assert!(e.message.contains("OOM when allocating tensor"), "{op}: {e}");
        assert!(e.message.contains(op), "{op}: the node is named: {e}");
        answers(t);
    }
    // DynamicStitch's indices are int32: an index of 2^31-1 asks for 2^31 rows, which
    // TensorFlow refuses as INVALID_ARGUMENT (its size overflows).
    let e = step_err(t, |s| {
        let ix = c(s, vec![i32::MAX].into());
        let d = c(s, ferroflow::Tensor::new(vec![1, 2], vec![1.0f32, 2.0]).unwrap());
        ops::dynamic_stitch(s, vec![ix], vec![d])
    });
    assert_eq!(e.code, Code::InvalidArgument, "{e}");
    assert!(e.message.contains("DynamicStitch") && e.message.contains("2147483648 rows"), "{e}");
    answers(t);
    // Protos whose single value declares a huge shape: in a constant (refused when the
    // graph is registered) and in a RunStep feed. Sent raw: the Rust client would refuse them.
    let huge = |dtype: DataType, dims: &[i64]| {
        let mut p = TensorProto {
            dtype: dtype.as_i32(),
            tensor_shape: Some(TensorShapeProto {
                dim: dims.iter().map(|&size| Dim { size, name: String::new() }).collect(),
                unknown_rank: false,
            }),
            ..Default::default()
        };
        match dtype {
            DataType::Float => p.float_val = vec![1.0],
            _ => p.string_val = vec![b"x".to_vec()],
        }
        p
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let cases = [
        ("const float", huge(DataType::Float, &[1 << 20, 1 << 20]), false),
        ("const string", huge(DataType::String, &[1 << 40]), false),
        ("feed", huge(DataType::Float, &[1 << 36]), true),
    ];
    for (what, value, as_feed) in cases {
        let dtype = DataType::from_proto(value.dtype).unwrap().0;
        let mut n = NodeDef {
            name: "huge".into(),
            op: if as_feed { "Placeholder" } else { "Const" }.into(),
            ..Default::default()
        };
        n.attr.insert("dtype".into(), attr::ty(dtype));
        if !as_feed {
            n.attr
                .insert("value".into(), AttrValue { value: Some(attr_value::Value::Tensor(Box::new(value.clone()))) });
        }
        let (code, msg) = rt.block_on(async {
            let mut m = master_client(endpoint(t, Duration::from_secs(5)).unwrap().connect_lazy());
            let g = GraphDef { node: vec![n], ..Default::default() };
            let h = m
                .create_session(CreateSessionRequest { graph_def: Some(g), ..Default::default() })
                .await
                .unwrap()
                .into_inner()
                .session_handle;
            let req = RunStepRequest {
                session_handle: h,
                feed: if as_feed {
                    vec![NamedTensorProto { name: "huge:0".into(), tensor: Some(value) }]
                } else {
                    vec![]
                },
                fetch: vec!["huge:0".into()],
                store_errors_in_response_body: true,
                ..Default::default()
            };
            let r = m.run_step(req).await.unwrap().into_inner();
            (Code::from_i32(r.status_code), r.status_error_message)
        });
        assert_eq!(code, Code::InvalidArgument, "{what}: {msg}");
        assert!(msg.contains("cannot be expanded"), "{what}: {msg}");
        answers(t);
    }
}

#[test]
fn large_tensors_are_refused_when_the_live_ones_already_fill_the_budget() {
    let p = Proc::start(&["--port", "0", "--memory_limit", "700M"], &[]);
    let t = p.target.as_str();
    // 400 MB held by a variable on the task...
    let n = 100_000_000i64;
    let s = Scope::new_root();
    let v = ops::variable_v2(&s, ferroflow::DataType::Float, Some(&[n]), "", "held");
    let fill = |s: &Scope| ops::fill(s, ops::constant(s, vec![n]), ops::constant(s, 1.0f32));
    let init = ops::assign(&s, v, fill(&s), true, false);
    let sess = GrpcSession::new(t, s.graph()).unwrap();
    sess.run(&[], &[], &[&s.graph().operation(&init.node).unwrap()]).unwrap();
    // ...leave no room for 400 MB more: one tensor of that size alone would fit.
    let e = step_err(t, |s| ops::sum(s, fill(s), ops::constant(s, vec![0i32]), false));
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    assert!(e.message.contains("already holds") && e.message.contains("Fill"), "{e}");
    answers(t);
    drop(sess);
}

#[test]
fn graphs_over_the_size_limits_are_refused_and_the_task_stays_up() {
    let p = Proc::start(&["--port", "0", "--max_graph_nodes", "100", "--max_graph_bytes", "64K"], &[]);
    let t = p.target.as_str();
    // 121 nodes: a constant and 60 additions of a constant.
    let e = step_err(t, |s| {
        let mut x = ops::constant(s, 0.0f32);
        for _ in 0..60 {
            x = ops::add(s, x, ops::constant(s, 1.0f32));
        }
        x
    });
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    assert!(e.message.contains("has 121 nodes, more than this server's limit of 100 nodes per graph"), "{e}");
    assert!(e.message.contains("--max_graph_nodes"), "{e}");
    answers(t);
    // One constant of 80,000 bytes.
    let e = step_err(t, |s| ops::constant(s, ferroflow::Tensor::vec(vec![0.5f32; 20_000])));
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    assert!(e.message.contains("limit of 65,536 bytes per graph") && e.message.contains("--max_graph_bytes"), "{e}");
    answers(t);
    // A bad size is refused at start.
    let out = Command::new(env!("CARGO_BIN_EXE_ferroflow"))
        .args(["server", "--port", "0", "--max_graph_bytes", "lots"])
        .output()
        .expect("run ferroflow server");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max_graph_bytes"), "{out:?}");
}
