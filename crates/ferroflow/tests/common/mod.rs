//! Child processes of the built `ferroflow` binary for the multi-process tests: stdout
//! lines collected, bounded waits, killed on drop.
#![allow(dead_code)]

pub mod emu;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/mnist");
pub const LIMIT: Duration = Duration::from_secs(600);

/// A child process whose stdout lines are collected; killed on drop.
pub struct Proc {
    pub name: String,
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Proc {
    pub fn start(name: &str, args: &[&str], env: &[(&str, String)]) -> Proc {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ferroflow"));
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Proc::from_command(name, cmd)
    }

    /// Starts `cmd` (the binary, or a wrapper that execs it), its output collected.
    pub fn from_command(name: &str, mut cmd: Command) -> Proc {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // The test's own TF_CONFIG never leaks in; one given for this process stays.
        if !cmd.get_envs().any(|(k, _)| k == "TF_CONFIG") {
            cmd.env_remove("TF_CONFIG");
        }
        let mut child = cmd.spawn().expect("spawn ferroflow");
        let out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        // stderr lines (errors, logs) are collected too, marked, so failures show them.
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx2.send(format!("stderr: {line}"));
            }
        });
        Proc { name: name.to_string(), child, lines: rx, seen: Vec::new() }
    }

    /// Marks every line printed so far as seen, so the next [`Proc::wait_new_line`] returns
    /// only a line printed after this call (or still in flight).
    pub fn skip_printed(&mut self) {
        while let Ok(l) = self.lines.try_recv() {
            self.seen.push(l);
        }
    }

    /// Waits (bounded) for a line containing `what` (including lines already seen).
    pub fn wait_line(&mut self, what: &str, limit: Duration) -> String {
        match self.seen.iter().find(|l| l.contains(what)) {
            Some(l) => l.clone(),
            None => self.wait_new_line(what, limit),
        }
    }

    /// Waits (bounded) for a line containing `what` that was not seen before this call.
    pub fn wait_new_line(&mut self, what: &str, limit: Duration) -> String {
        let end = Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    self.seen.push(l.clone());
                    if l.contains(what) {
                        return l;
                    }
                }
                Err(_) => {
                    panic!("{} printed no new line with '{what}' within {limit:?}; saw {:?}", self.name, self.seen)
                }
            }
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a signal by name (`STOP`, `CONT`, ...) with `kill(1)`.
    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill").arg(format!("-{sig}")).arg(self.pid().to_string()).status().expect("kill");
        assert!(ok.success(), "kill -{sig} {} failed", self.pid());
    }

    /// Kills the process at once (SIGKILL, like `kill -9`).
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits (bounded) for the exit and returns (success, all stdout lines).
    pub fn finish(&mut self, limit: Duration) -> (bool, Vec<String>) {
        let end = Instant::now() + limit;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(2)) {
                    self.seen.push(l);
                }
                return (s.success(), self.seen.clone());
            }
            while let Ok(l) = self.lines.try_recv() {
                self.seen.push(l);
            }
            assert!(Instant::now() < end, "{} did not exit within {limit:?}; output {:?}", self.name, self.seen);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Proc {
    /// Waits (bounded by [`LIMIT`]) for a successful exit; returns all stdout lines.
    pub fn succeeds(&mut self) -> Vec<String> {
        let (ok, out) = self.finish(LIMIT);
        assert!(ok, "{} failed: {out:?}", self.name);
        out
    }

    /// Waits (a minute at most) for a parameter server to exit cleanly, saying it stopped.
    pub fn stops(&mut self) {
        let (ok, out) = self.finish(Duration::from_secs(60));
        assert!(ok && out.iter().any(|l| l.contains("stopped")), "{}: {out:?}", self.name);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `n` distinct free loopback ports: all are held until all are picked (one at a time,
/// the kernel may hand out a just-released port again, and two tasks would share it).
pub fn free_ports<const N: usize>() -> [u16; N] {
    let ls: Vec<std::net::TcpListener> = (0..N).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    std::array::from_fn(|i| ls[i].local_addr().unwrap().port())
}

pub fn accuracy(lines: &[String]) -> f64 {
    let l =
        lines.iter().find(|l| l.starts_with("test accuracy:")).unwrap_or_else(|| panic!("no accuracy in {lines:?}"));
    l.trim_start_matches("test accuracy:").trim().trim_end_matches('%').parse().unwrap()
}

/// A 1 ps + 2 worker cluster on free loopback ports for `ferroflow train` processes.
pub struct TrainCluster {
    pub ps_hosts: String,
    pub worker_hosts: String,
}

impl TrainCluster {
    pub fn new() -> TrainCluster {
        let [ps, w0, w1] = free_ports();
        TrainCluster { ps_hosts: format!("127.0.0.1:{ps}"), worker_hosts: format!("127.0.0.1:{w0},127.0.0.1:{w1}") }
    }

    /// Starts `ferroflow train <args> --no_progress --data_dir … <cluster flags> --job_name
    /// job --task_index task`.
    pub fn start(&self, job: &str, task: usize, args: &[&str]) -> Proc {
        let t = task.to_string();
        let mut all = vec!["train"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--no_progress", "--data_dir", DATA, "--ps_hosts", &self.ps_hosts]);
        all.extend_from_slice(&["--worker_hosts", &self.worker_hosts, "--job_name", job, "--task_index", &t]);
        Proc::start(&format!("{job} {task}"), &all, &[])
    }
}
