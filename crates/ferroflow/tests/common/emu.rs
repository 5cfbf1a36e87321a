//! Emulated hosts for multi-process tests: each host is a network namespace made here,
//! joined to a bridge made here by a veth pair, its link limited in both directions with
//! `tc … tbf` (this kernel has no `netem`). The test process reaches the hosts through the
//! bridge's own address. Every name carries this process's id and a counter, every
//! command is bounded, and dropping the net removes everything it made, by name. Needs
//! root (`ip netns add`), as the project's test hosts run. `scripts/emu/emu_hosts.py` is the
//! same for Python benchmarks.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use super::Proc;

static NETS: AtomicU32 = AtomicU32::new(0);

/// A set of emulated hosts on one bridge (see the module docs).
pub struct EmuNet {
    prefix: String,
    subnet: String,
    hosts: Vec<String>,
}

/// Runs `ip`/`tc` with `args`; panics with the command and its stderr when it fails.
fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e} (the emulated hosts need iproute2)"));
    assert!(
        out.status.success(),
        "{program} {} failed: {} (the emulated hosts need root: ip netns, veth, bridge, tc)",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// Like [`run`], ignoring failure (tear-down of what may already be gone).
fn run_quiet(program: &str, args: &[&str]) {
    let _ = Command::new(program).args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status();
}

impl EmuNet {
    /// Hosts named `hosts`, each with a `rate_mbit` link in each direction.
    pub fn new(hosts: &[&str], rate_mbit: u32) -> EmuNet {
        let n = NETS.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        // Interface names stay under 16 bytes: "fe" + 5 digits + net + role + index.
        let prefix = format!("fe{:05}{}", pid % 100_000, n % 10);
        let subnet = format!("10.{}.{}", 100 + (pid % 100), 10 * (n % 25) + (pid / 100) % 10);
        let net = EmuNet { prefix, subnet, hosts: hosts.iter().map(|h| h.to_string()).collect() };
        net.tear_down();
        let br = net.bridge();
        run("ip", &["link", "add", &br, "type", "bridge"]);
        run("ip", &["addr", "add", &format!("{}.254/24", net.subnet), "dev", &br]);
        run("ip", &["link", "set", &br, "up"]);
        // tbf: the bucket holds 10 ms of the rate (at least 64 KiB), packets wait at most 20 ms.
        let burst = ((rate_mbit as u64 * 1_000_000 / 8) / 100).max(64 * 1024).to_string();
        let rate = format!("{rate_mbit}mbit");
        let tbf = |dev: &str| {
            ["qdisc", "add", "dev", dev, "root", "tbf", "rate", &rate, "burst", &burst, "latency", "20ms"]
                .map(str::to_string)
        };
        for i in 0..hosts.len() {
            let (ns, inner, port) = (net.namespace(i), net.inner(i), net.port(i));
            run("ip", &["netns", "add", &ns]);
            run("ip", &["link", "add", &inner, "type", "veth", "peer", "name", &port]);
            run("ip", &["link", "set", &inner, "netns", &ns]);
            run("ip", &["link", "set", &port, "master", &br]);
            run("ip", &["link", "set", &port, "up"]);
            let in_ns = |args: &[&str]| {
                let mut all = vec!["netns", "exec", ns.as_str()];
                all.extend_from_slice(args);
                run("ip", &all);
            };
            in_ns(&["ip", "addr", "add", &format!("{}/24", net.addr(i)), "dev", &inner]);
            in_ns(&["ip", "link", "set", &inner, "up"]);
            in_ns(&["ip", "link", "set", "lo", "up"]);
            // The host's outgoing side inside its namespace, its incoming side on the bridge port.
            let out = tbf(&inner);
            let mut all = vec!["netns", "exec", ns.as_str(), "tc"];
            all.extend(out.iter().map(String::as_str));
            run("ip", &all);
            let inc = tbf(&port);
            run("tc", &inc.iter().map(String::as_str).collect::<Vec<_>>());
        }
        net
    }

    fn index(&self, host: &str) -> usize {
        self.hosts.iter().position(|h| h == host).unwrap_or_else(|| panic!("no emulated host {host}"))
    }

    fn bridge(&self) -> String {
        format!("{}b", self.prefix)
    }

    fn namespace(&self, i: usize) -> String {
        format!("{}-{}", self.prefix, i)
    }

    fn inner(&self, i: usize) -> String {
        format!("{}h{}", self.prefix, i)
    }

    fn port(&self, i: usize) -> String {
        format!("{}p{}", self.prefix, i)
    }

    fn addr(&self, i: usize) -> String {
        format!("{}.{}", self.subnet, i + 1)
    }

    /// The address of `host` (reachable from this process and from every other host).
    pub fn host_addr(&self, host: &str) -> String {
        self.addr(self.index(host))
    }

    /// Starts the `ferroflow` binary with `args` on `host`.
    pub fn start(&self, host: &str, args: &[&str]) -> Proc {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.namespace(self.index(host)), env!("CARGO_BIN_EXE_ferroflow")]).args(args);
        Proc::from_command(host, cmd)
    }

    /// Takes `host`'s link down (`up = false`: its packets are dropped at the bridge, no
    /// connection is refused) or brings it back.
    pub fn set_link(&self, host: &str, up: bool) {
        run("ip", &["link", "set", &self.port(self.index(host)), if up { "up" } else { "down" }]);
    }

    /// Bytes the bridge has sent towards `host` through its rate limit.
    pub fn bytes_to(&self, host: &str) -> u64 {
        let out = Command::new("tc")
            .args(["-s", "qdisc", "show", "dev", &self.port(self.index(host))])
            .output()
            .expect("tc -s qdisc show");
        let text = String::from_utf8_lossy(&out.stdout);
        let sent = text.split("Sent ").nth(1).unwrap_or_else(|| panic!("no byte count in {text}"));
        sent.split(' ').next().unwrap().parse().unwrap()
    }

    fn tear_down(&self) {
        for i in 0..self.hosts.len() {
            // Deleting the namespace deletes the veth pair inside it and its peer.
            run_quiet("ip", &["netns", "delete", &self.namespace(i)]);
            run_quiet("ip", &["link", "delete", &self.port(i)]);
        }
        run_quiet("ip", &["link", "delete", &self.bridge()]);
    }
}

impl Drop for EmuNet {
    fn drop(&mut self) {
        self.tear_down();
    }
}
