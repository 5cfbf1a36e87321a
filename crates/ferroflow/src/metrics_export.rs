//! `--metrics_port P` of `ferroflow server` and `ferroflow train`: installs the
//! Prometheus recorder (metrics-exporter-prometheus) with its HTTP listener, which serves
//! the text format at `/metrics`, and samples the process's resident memory every second.
//!
//! The listener binds like the server: loopback when the task's cluster address is
//! loopback (or there is no cluster), else 0.0.0.0; `ferroflow server --bind H` binds it
//! to `H` too.

use std::time::Duration;

use ferroflow_core::resident_bytes;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};

/// The process's resident set size, sampled every [`MEMORY_EVERY`].
pub const RESIDENT_MEMORY: &str = "ferroflow_resident_memory_bytes";

/// How often the resident memory gauge is refreshed.
const MEMORY_EVERY: Duration = Duration::from_secs(1);

/// The `--metrics_port` flag.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics (text format) at http://HOST:PORT/metrics, HOST as the
    /// server binds (loopback for a loopback task, else 0.0.0.0, or --bind).
    #[arg(long = "metrics_port", alias = "metrics-port")]
    pub metrics_port: Option<u16>,
}

/// The host the metrics listener binds for a task at `task_host` (`None`: no cluster).
pub fn bind_host(task_host: Option<&str>, bind: Option<&str>) -> String {
    if let Some(b) = bind {
        return b.trim_start_matches('[').trim_end_matches(']').to_string();
    }
    match task_host {
        None => "127.0.0.1".into(),
        Some(h) if !ferroflow_distributed::is_loopback_host(h) => "0.0.0.0".into(),
        Some(h) if h.contains(':') => "::1".into(),
        Some(_) => "127.0.0.1".into(),
    }
}

/// The host part of a cluster address `host:port` (`[v6]:port` too).
pub fn host_of(addr: &str) -> &str {
    match addr.rsplit_once(':') {
        Some((h, _)) => h.trim_start_matches('[').trim_end_matches(']'),
        None => addr,
    }
}

/// Starts serving metrics on `host:port` if `args` asks for it. A port that cannot be
/// bound fails with a message naming it.
/// With `allow` (`--allow_from`), only those addresses are served, as on the task's port.
pub fn start(args: &MetricsArgs, host: &str, allow: Option<&ferroflow_distributed::AllowList>) -> Result<(), String> {
    let Some(port) = args.metrics_port else { return Ok(()) };
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| format!("--metrics_port {port}: cannot resolve the host '{host}' to bind"))?;
    let mut builder = PrometheusBuilder::new();
    for block in allow.map(|a| a.blocks()).unwrap_or_default() {
        builder = builder.add_allowed_address(&block).map_err(|e| format!("--allow_from {block}: {e}"))?;
    }
    builder
        .with_http_listener(addr)
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), ferroflow_distributed::metrics::LATENCY_BUCKETS)
        .and_then(|b| b.install())
        .map_err(|e| format!("--metrics_port {port}: cannot serve metrics on {addr}: {e}"))?;
    ferroflow_distributed::metrics::describe();
    ferroflow_kernels::data_flow::metrics::describe();
    metrics::describe_gauge!(RESIDENT_MEMORY, metrics::Unit::Bytes, "Resident set size of this process");
    let gauge = metrics::gauge!(RESIDENT_MEMORY);
    if let Some(b) = resident_bytes() {
        gauge.set(b as f64);
    }
    std::thread::Builder::new()
        .name("ferroflow-metrics-memory".into())
        .spawn(move || loop {
            std::thread::sleep(MEMORY_EVERY);
            if let Some(b) = resident_bytes() {
                gauge.set(b as f64);
            }
        })
        .map_err(|e| format!("--metrics_port {port}: cannot start the memory sampler: {e}"))?;
    tracing::info!(%addr, "serving Prometheus metrics at /metrics");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_memory_is_read_in_bytes() {
        #[cfg(target_os = "linux")]
        assert!(resident_bytes().unwrap() > 1 << 20);
    }

    #[test]
    fn the_listener_binds_like_the_server() {
        assert_eq!(bind_host(None, None), "127.0.0.1");
        assert_eq!(bind_host(Some("localhost"), None), "127.0.0.1");
        assert_eq!(bind_host(Some("::1"), None), "::1");
        assert_eq!(bind_host(Some("ps-0.svc"), None), "0.0.0.0");
        assert_eq!(bind_host(Some("ps-0.svc"), Some("[::]")), "::");
        assert_eq!(host_of("[::1]:2222"), "::1");
        assert_eq!(host_of("ps-0:2222"), "ps-0");
    }
}
