//! Client-side benchmark for `scripts/bench/dist_bench.py`: ferroflow's Rust
//! [`GrpcSession`] against a cluster's worker (ferroflow or TensorFlow — the wire is the
//! same). The cluster has `/job:ps/task:0` and `/job:worker/task:0`.
//!
//! ```text
//! cargo run --release -p ferroflow-distributed --example dist_client_bench -- grpc://127.0.0.1:2223
//! ```
//! Prints one JSON line: `{"fetch64_direct_mib_s": .., "fetch64_mib_s": .., "scalar_rtt_us": ..,
//! "local_rtt_us": .., ..}`: the 64 MiB variable fetched as it is (the ps returns it in its
//! RunGraph reply) and through an Identity on the worker (it crosses ps → worker by
//! RecvTensor), a step that runs on the worker alone, and `"get_status_us"` (a bare
//! GetStatus call: the transport's floor).
//!
//! With `INPROC=ps_host:port,worker_host:port` (no argument) it starts the worker task in
//! its own process and runs the same rows against that server's target, as a TensorFlow
//! trainer does with `Session(server.target)`: the client reaches its master in-process.
//!
//! With `INPROC_B=` as well (a second cluster's ps and worker), the second in-process
//! worker is the `AB=` side; `THREADS_A`/`THREADS_B` set the two workers' async threads.
//!
//! With `AB=grpc://other-worker:port` it compares two clusters instead: it alternates
//! 4-byte fetches between them (1500 pairs) and prints both medians, so that the host's
//! drift, which moves single runs by 20–50 %, hits both sides alike.

use ferroflow_runtime::StepRunner;
use std::time::Instant;

use ferroflow_core::{DataType, Tensor};
use ferroflow_distributed::{ClusterSpec, GrpcSession, Server, ServerOptions};
use ferroflow_graph::{ops, Scope};

// As in the `ferroflow` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// This process as `/job:worker/task:0` of the cluster `ps_addr,worker_addr`, with
/// `threads` async threads (None: the default).
fn start_worker(spec: &str, threads: Option<usize>) -> Result<Server, Box<dyn std::error::Error>> {
    let (ps_addr, worker_addr) = spec.split_once(',').ok_or("INPROC=ps_host:port,worker_host:port")?;
    let cluster = ClusterSpec::new(&[("ps", vec![ps_addr]), ("worker", vec![worker_addr])])?;
    let opts = ServerOptions { bind_host: Some("127.0.0.1".into()), threads, ..Default::default() };
    Ok(Server::new(&cluster, "worker", 0, opts)?)
}

fn threads_env(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // With INPROC=ps_addr,worker_addr this process is the worker (between-graph layout:
    // the client runs in the worker's process and reaches its master without RPC).
    let (target, _worker) = match std::env::var("INPROC") {
        Ok(spec) => {
            let server = start_worker(&spec, threads_env("THREADS_A"))?;
            (server.target().to_string(), Some(server))
        }
        Err(_) => (std::env::args().nth(1).ok_or("usage: dist_client_bench grpc://worker:port")?, None),
    };
    // INPROC_B: a second in-process worker (of another cluster) as the AB= side.
    let worker_b = match std::env::var("INPROC_B") {
        Ok(spec) => Some(start_worker(&spec, threads_env("THREADS_B"))?),
        Err(_) => None,
    };
    let ab = std::env::var("AB").ok().or_else(|| worker_b.as_ref().map(|s| s.target().to_string()));
    if let Some(other) = ab {
        let mk = |t: &str| -> Result<(GrpcSession, ferroflow_graph::Output), Box<dyn std::error::Error>> {
            let s = Scope::new_root();
            let ps = s.with_device("/job:ps/task:0");
            let small = ops::var_handle_op(&ps.sub("small"), DataType::Float, Some(&[]), "", "bench_small");
            let init_small = ops::assign_variable_op(&ps, small.clone(), ops::constant(&ps, 1.0f32));
            let small_read = ops::read_variable_op(&ps, small, DataType::Float);
            let sess = GrpcSession::new(t, s.graph())?;
            sess.run(&[], &[], &[&init_small])?;
            Ok((sess, small_read))
        };
        let (sa, ra) = mk(&target)?;
        let (sb, rb) = mk(&other)?;
        for _ in 0..50 {
            sa.run(&[], &[&ra], &[])?;
            sb.run(&[], &[&rb], &[])?;
        }
        let (mut va, mut vb) = (Vec::new(), Vec::new());
        for _ in 0..1500 {
            let t = Instant::now();
            sa.run(&[], &[&ra], &[])?;
            va.push(t.elapsed().as_secs_f64());

            let t = Instant::now();
            sb.run(&[], &[&rb], &[])?;
            vb.push(t.elapsed().as_secs_f64());
        }
        println!("A {:.0} B {:.0}", median(va) * 1e6, median(vb) * 1e6);
        return Ok(());
    }
    let n: usize = 16 << 20;
    let s = Scope::new_root();
    let ps = s.with_device("/job:ps/task:0");
    let big = ops::var_handle_op(&ps.sub("big"), DataType::Float, Some(&[n as i64]), "", "bench_big");
    let small = ops::var_handle_op(&ps.sub("small"), DataType::Float, Some(&[]), "", "bench_small");
    let zeros = ops::fill(&ps, ops::constant(&ps, Tensor::vec(vec![n as i32])), ops::constant(&ps, 0.0f32));
    let init_big = ops::assign_variable_op(&ps, big.clone(), zeros);
    let init_small = ops::assign_variable_op(&ps, small.clone(), ops::constant(&ps, 1.0f32));
    let small_read = ops::read_variable_op(&ps, small, DataType::Float);
    let big_read = ops::read_variable_op(&ps, big, DataType::Float);
    let big_read_direct = big_read.clone();
    let big_on_worker = ops::identity(&s.with_device("/job:worker/task:0"), big_read);
    let on_worker = ops::constant(&s.with_device("/job:worker/task:0"), 2.0f32);
    let sess = GrpcSession::new(&target, s.graph())?;
    sess.run(&[], &[], &[&init_big, &init_small])?;
    for _ in 0..2 {
        sess.run(&[], &[&big_on_worker], &[])?;
    }
    let mut t64 = Vec::new();
    for _ in 0..8 {
        let t = Instant::now();
        let out = sess.run(&[], &[&big_on_worker], &[])?;
        t64.push(t.elapsed().as_secs_f64());
        assert_eq!(out[0].num_elements(), n);
    }
    // The variable itself (no op on the worker): the ps returns it in its RunGraph reply.
    let mut t64d = Vec::new();
    for i in 0..10 {
        let t = Instant::now();
        let out = sess.run(&[], &[&big_read_direct], &[])?;
        if i >= 2 {
            t64d.push(t.elapsed().as_secs_f64());
        }
        assert_eq!(out[0].num_elements(), n);
    }
    for _ in 0..20 {
        sess.run(&[], &[&small_read], &[])?;
    }
    let mut rtt = Vec::new();
    for _ in 0..300 {
        let t = Instant::now();
        sess.run(&[], &[&small_read], &[])?;
        rtt.push(t.elapsed().as_secs_f64());
    }
    let mut local = Vec::new();
    for _ in 0..300 {
        let t = Instant::now();
        sess.run(&[], &[&on_worker], &[])?;
        local.push(t.elapsed().as_secs_f64());
    }
    // The transport's own floor: a bare GetStatus call on the same HTTP/2 stack.
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let status_us = rt.block_on(async {
        let ep = ferroflow_distributed::endpoint(&target, std::time::Duration::from_secs(5))?;
        let mut c = ferroflow_distributed::worker_client(ep.connect().await?);
        let mut v = Vec::new();
        for i in 0..320 {
            let t = Instant::now();
            c.get_status(ferroflow_core::proto::GetStatusRequest::default()).await?;
            if i >= 20 {
                v.push(t.elapsed().as_secs_f64());
            }
        }
        Ok::<_, Box<dyn std::error::Error>>(median(v) * 1e6)
    })?;
    println!(
        "{{\"fetch64_direct_mib_s\": {:.3}, \"fetch64_mib_s\": {:.3}, \"scalar_rtt_us\": {:.3}, \"local_rtt_us\": {:.3}, \"get_status_us\": {:.3}}}",
        64.0 / median(t64d),
        64.0 / median(t64),
        median(rtt) * 1e6,
        median(local) * 1e6,
        status_us
    );
    sess.close()?;
    Ok(())
}
