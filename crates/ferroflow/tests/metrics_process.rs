//! `--metrics_port`: Prometheus metrics scraped over plain HTTP from real `ferroflow train`
//! processes while they train (synchronous MLP, so queues and accumulators are live), a
//! metrics port in use failing startup, and the Grafana dashboard querying only metrics
//! the tasks export.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{free_ports, Proc, TrainCluster, LIMIT};

const DASHBOARD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/grafana/ferroflow-dashboard.json");
const TFJOB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/k8s/mnist-tfjob.yaml");

/// `GET /metrics` on 127.0.0.1:`port`: the response body (the status must be 200).
fn scrape(port: u16) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|e| panic!("connect to metrics {port}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8(raw).expect("utf-8 response");
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no HTTP head in {text:?}"));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}

/// (name, labels, value) of every sample line.
fn samples(text: &str) -> Vec<(String, String, f64)> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("bad sample line '{line}'"));
        let (name, labels) = match series.split_once('{') {
            Some((n, l)) => (n, l.trim_end_matches('}')),
            None => (series, ""),
        };
        let v = value.parse().unwrap_or_else(|_| panic!("bad value in '{line}'"));
        out.push((name.to_string(), labels.to_string(), v));
    }
    out
}

/// The sum of `name`'s samples whose labels contain every one of `with` (`k="v"`).
fn sum(text: &str, name: &str, with: &[&str]) -> f64 {
    samples(text).iter().filter(|(n, l, _)| n == name && with.iter().all(|w| l.contains(w))).map(|s| s.2).sum()
}

fn has(text: &str, name: &str) -> bool {
    samples(text).iter().any(|(n, ..)| n == name)
}

/// The metric names a dashboard's queries use (`_bucket`/`_sum`/`_count` of a histogram
/// as the histogram's name).
fn dashboard_metrics() -> Vec<String> {
    let text = std::fs::read_to_string(DASHBOARD).expect("read the dashboard");
    let json: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    assert!(json["title"].is_string() && json["panels"].is_array(), "not a Grafana dashboard");
    let mut exprs = Vec::new();
    for p in json["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            exprs.push(t["expr"].as_str().expect("a target with an expr").to_string());
        }
    }
    assert!(exprs.len() >= 6, "{exprs:?}");
    let mut names = Vec::new();
    for e in &exprs {
        let mut rest = e.as_str();
        while let Some(i) = rest.find("ferroflow_") {
            let tail = &rest[i..];
            let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
            let mut n = &tail[..end];
            if let Some(h) = ["_bucket", "_sum", "_count"].iter().find_map(|s| n.strip_suffix(s)) {
                n = h;
            }
            names.push(n.to_string());
            rest = &tail[end..];
        }
    }
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_dashboard_and_the_manifest_use_the_exported_metrics() {
    let mut known: Vec<&str> = ferroflow_distributed::metrics::NAMES.to_vec();
    known.extend_from_slice(ferroflow_kernels::data_flow::metrics::NAMES);
    known.push("ferroflow_resident_memory_bytes");
    let used = dashboard_metrics();
    for n in &used {
        assert!(known.contains(&n.as_str()), "the dashboard queries '{n}', which no task exports");
    }
    for n in ["ferroflow_steps_total", "ferroflow_step_duration_seconds", "ferroflow_rpc_server_requests_total"] {
        assert!(used.iter().any(|u| u == n), "the dashboard has no panel on {n}");
    }
    let text = std::fs::read_to_string(DASHBOARD).unwrap();
    assert!(text.contains("histogram_quantile(0.99"), "no p99 panel");
    let k8s = std::fs::read_to_string(TFJOB).unwrap();
    for want in
        ["prometheus.io/scrape: \"true\"", "prometheus.io/port:", "prometheus.io/path: /metrics", "--metrics_port"]
    {
        assert!(k8s.contains(want), "the TFJob manifest lacks {want}");
    }
}

#[test]
fn a_metrics_port_in_use_fails_startup_naming_it() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    let mut p = Proc::start("server", &["server", "--port", "0", "--metrics_port", &port], &[]);
    let (ok, out) = p.finish(Duration::from_secs(60));
    assert!(!ok, "the server started although its metrics port was taken: {out:?}");
    assert!(
        out.iter().any(|l| l.contains("error:") && l.contains(&format!("--metrics_port {port}"))),
        "no error naming the port: {out:?}"
    );
}

#[test]
fn metrics_are_served_during_training() {
    let [ps, w0, w1, m_ps, m_w0, m_w1] = free_ports();
    let c =
        TrainCluster { ps_hosts: format!("127.0.0.1:{ps}"), worker_hosts: format!("127.0.0.1:{w0},127.0.0.1:{w1}") };
    let args = |m: u16| -> Vec<String> {
        ["--sync", "--model", "mlp", "--optimizer", "adagrad", "--learning_rate", "0.05", "--steps", "1000"]
            .iter()
            .map(|s| s.to_string())
            .chain(["--metrics_port".to_string(), m.to_string()])
            .collect()
    };
    let start = |job: &str, task: usize, m: u16| {
        let a = args(m);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        c.start(job, task, &a)
    };
    let mut ps_proc = start("ps", 0, m_ps);
    let mut w1_proc = start("worker", 1, m_w1);
    let mut chief = start("worker", 0, m_w0);

    // Two scrapes of the chief, 200 of its local steps apart, and one of the ps.
    chief.wait_new_line("local step 100,", LIMIT);
    let first = scrape(m_w0);
    let ps_text = scrape(m_ps);
    chief.wait_new_line("local step 300,", LIMIT);
    let second = scrape(m_w0);
    let w1_text = scrape(m_w1);

    // Steps per session: counted, growing, with their latency histogram.
    let (s1, s2) = (sum(&first, "ferroflow_steps_total", &[]), sum(&second, "ferroflow_steps_total", &[]));
    assert!(s1 >= 100.0, "steps at local step 100: {s1}\n{first}");
    assert!(s2 > s1 && s2 >= 300.0, "steps did not grow: {s1} then {s2}");
    assert!(samples(&second).iter().any(|(n, l, _)| n == "ferroflow_steps_total" && l.contains("session=\"")));
    let inf = sum(&second, "ferroflow_step_duration_seconds_bucket", &["le=\"+Inf\""]);
    assert!(inf > 0.0 && has(&second, "ferroflow_step_duration_seconds_count"), "{second}");
    assert!(sum(&second, "ferroflow_step_duration_seconds_bucket", &["le=\"0.0001\""]) <= inf);

    // Bytes to and from the ps, by peer.
    let ps_peer = format!("peer=\"127.0.0.1:{ps}\"");
    assert!(sum(&second, "ferroflow_peer_sent_bytes_total", &[&ps_peer]) > 0.0, "{second}");
    assert!(sum(&second, "ferroflow_peer_received_bytes_total", &[&ps_peer]) > 0.0, "{second}");

    // Sessions, graphs, memory.
    assert!(sum(&second, "ferroflow_sessions", &[]) >= 1.0, "{second}");
    assert!(sum(&ps_text, "ferroflow_worker_sessions", &[]) >= 1.0, "{ps_text}");
    assert!(sum(&ps_text, "ferroflow_registered_graphs", &[]) >= 1.0, "{ps_text}");
    for t in [&second, &ps_text, &w1_text] {
        assert!(sum(t, "ferroflow_resident_memory_bytes", &[]) > 1e6, "{t}");
    }

    // RPCs served by method and code, with latency histograms: the workers' masters call
    // RunGraph on the ps, and tensors move by RecvTensor(s) both ways.
    let ok = "code=\"OK\"";
    assert!(sum(&ps_text, "ferroflow_rpc_server_requests_total", &["method=\"RunGraph\"", ok]) > 0.0, "{ps_text}");
    let recv = |t: &str| {
        sum(t, "ferroflow_rpc_server_requests_total", &["method=\"RecvTensors\"", ok])
            + sum(t, "ferroflow_rpc_server_requests_total", &["method=\"RecvTensor\"", ok])
    };
    assert!(recv(&ps_text) + recv(&second) > 0.0, "no RecvTensor served: {ps_text}\n{second}");
    assert!(
        sum(&ps_text, "ferroflow_rpc_server_duration_seconds_bucket", &["method=\"RunGraph\"", "le=\"+Inf\""]) > 0.0
    );

    // Synchronous training keeps its accumulators and token queues on the ps.
    assert!(has(&ps_text, "ferroflow_accumulator_size"), "{ps_text}");
    assert!(has(&ps_text, "ferroflow_queue_size"), "{ps_text}");

    // Every metric the dashboard queries is one these tasks export.
    for n in dashboard_metrics() {
        let found = [&first, &second, &ps_text, &w1_text]
            .iter()
            .any(|t| t.lines().any(|l| !l.starts_with('#') && l.starts_with(n.as_str())));
        assert!(found, "the dashboard queries '{n}', which the training tasks did not export");
    }

    let (ok, out) = chief.finish(LIMIT);
    assert!(ok, "chief failed: {out:?}");
    let (ok, out) = w1_proc.finish(LIMIT);
    assert!(ok, "worker 1 failed: {out:?}");
    let (ok, out) = ps_proc.finish(Duration::from_secs(120));
    assert!(ok, "ps failed: {out:?}");
}
