"""Emulated hosts for benchmarks and tests: each host a network namespace made here, joined
to a bridge made here by a veth pair, its link limited in each direction with `tc ... tbf`
(this kernel has no netem: delay and loss are injected by ferroflow's in-process fault
filters instead). The calling process reaches the hosts through the bridge's address.
Names carry a prefix of this process's id; everything made is removed by name on exit.
Needs root. The Rust tests' helper is crates/ferroflow/tests/common/emu.rs.

    with EmuNet(["ps0", "w0", "w1"], rate_mbit=1000) as net:
        p = net.popen("w0", [sys.executable, "client.py", net.addr("ps0")])
        net.set_link("ps0", up=False)      # packets dropped, nothing refused
        net.bytes_to("ps0")                # bytes shaped towards the ps

    python3 scripts/emu/emu_hosts.py cleanup     # removes leftovers of dead runs
"""

import atexit
import os
import subprocess
import sys

PREFIX = "fy"  # Rust tests use "fe": the two never remove each other's hosts


def _run(*args, check=True):
    r = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {r.stderr.strip()} (emulated hosts need root and iproute2)")
    return r.stdout


class EmuNet:
    _count = 0

    def __init__(self, hosts, rate_mbit=1000):
        EmuNet._count += 1
        pid = os.getpid()
        self.prefix = f"{PREFIX}{pid % 100000:05d}{EmuNet._count % 10}"
        self.subnet = f"10.{200 + pid % 50}.{(10 * (EmuNet._count % 25)) + (pid // 100) % 10}"
        self.hosts = list(hosts)
        self.rate_mbit = rate_mbit
        self._down()
        atexit.register(self._down)
        br = self.prefix + "b"
        _run("ip", "link", "add", br, "type", "bridge")
        _run("ip", "addr", "add", f"{self.subnet}.254/24", "dev", br)
        _run("ip", "link", "set", br, "up")
        burst = str(max(rate_mbit * 1_000_000 // 8 // 100, 64 * 1024))
        tbf = ["root", "tbf", "rate", f"{rate_mbit}mbit", "burst", burst, "latency", "20ms"]
        for i, _ in enumerate(self.hosts):
            ns, inner, port = self._ns(i), f"{self.prefix}h{i}", f"{self.prefix}p{i}"
            _run("ip", "netns", "add", ns)
            _run("ip", "link", "add", inner, "type", "veth", "peer", "name", port)
            _run("ip", "link", "set", inner, "netns", ns)
            _run("ip", "link", "set", port, "master", br)
            _run("ip", "link", "set", port, "up")
            _run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{self.subnet}.{i + 1}/24", "dev", inner)
            _run("ip", "netns", "exec", ns, "ip", "link", "set", inner, "up")
            _run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            _run("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", inner, *tbf)
            _run("tc", "qdisc", "add", "dev", port, *tbf)

    def _ns(self, i):
        return f"{self.prefix}-{i}"

    def _index(self, host):
        return self.hosts.index(host)

    def addr(self, host):
        """The host's address, reachable from this process and the other hosts."""
        return f"{self.subnet}.{self._index(host) + 1}"

    def popen(self, host, argv, **kw):
        """Starts `argv` on `host`."""
        return subprocess.Popen(["ip", "netns", "exec", self._ns(self._index(host)), *argv], **kw)

    def set_link(self, host, up):
        _run("ip", "link", "set", f"{self.prefix}p{self._index(host)}", "up" if up else "down")

    def bytes_to(self, host):
        """Bytes the bridge sent towards `host` through its rate limit."""
        out = _run("tc", "-s", "qdisc", "show", "dev", f"{self.prefix}p{self._index(host)}")
        return int(out.split("Sent ")[1].split(" ")[0])

    def _down(self):
        for i, _ in enumerate(self.hosts):
            _run("ip", "netns", "delete", self._ns(i), check=False)
            _run("ip", "link", "delete", f"{self.prefix}p{i}", check=False)
        _run("ip", "link", "delete", self.prefix + "b", check=False)

    def close(self):
        self._down()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def cleanup():
    """Removes every namespace and link this script's prefix made (runs that were killed)."""
    for line in _run("ip", "netns", "list").splitlines():
        name = line.split()[0] if line.strip() else ""
        if name.startswith(PREFIX) and "-" in name:
            _run("ip", "netns", "delete", name, check=False)
    for line in _run("ip", "-o", "link", "show").splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(PREFIX) and name[len(PREFIX):len(PREFIX) + 5].isdigit():
            _run("ip", "link", "delete", name, check=False)


if __name__ == "__main__":
    if sys.argv[1:] == ["cleanup"]:
        cleanup()
    else:
        sys.exit(__doc__)
