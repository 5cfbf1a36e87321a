//! Shared pieces of the fuzz tests (`tests/fuzzing/`): a seeded generator, the size and
//! seed of a run from the environment, counts of the outcomes by error code, and a panic
//! hook that records every panic in the process. A panic anywhere (a server thread, a
//! kernel the executor contained, a tokio task) is a finding, as is a call that does not
//! return.
//!
//! `FERROFLOW_FUZZ_SEED` (decimal or `0x` hex) reproduces a run; `FERROFLOW_FUZZ_SCALE`
//! multiplies every test's number of inputs (e.g. 10 for a longer campaign). By default
//! the runs are deterministic (a fixed seed) and take a few seconds each.

#![allow(dead_code)]

pub mod bytes;
pub mod graphs;
pub mod largest;
mod rng;
pub mod rpc;
pub mod values;

use ferroflow_runtime::StepRunner;
use std::collections::BTreeMap;
use std::sync::{Mutex, Once};
use std::time::Instant;

pub use rng::Rng;

/// The default seed.
pub const DEFAULT_SEED: u64 = 0x5eed_f1f0_2024_0022;

/// Every panic message since the hook was installed (`thread: message at location`).
static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Held by the kernel fuzzer and by the fuzzers that start a cluster in this process: the
/// kernel fuzzer bounds the largest allocation of *any* thread while a graph runs, and a
/// cluster's server threads allocate what the RPC fuzzers send them. (A gRPC message's
/// declared length no longer reserves anything past the memory budget or what arrived:
/// `message_gate`, tested by `tests/declared_lengths.rs`.)
#[allow(dead_code)] // The framing tests include this file too.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs (once) a hook that records each panic, then reports it as the default hook does.
pub fn record_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let thread = std::thread::current().name().unwrap_or("unnamed").to_string();
            // A test's own thread fails its test anyway (and panics there are the harness's
            // assertions or inputs the test catches and reports itself).
            if thread.starts_with("fuzz_") {
                previous(info);
                return;
            }
            PANICS.lock().unwrap_or_else(|e| e.into_inner()).push(format!("{thread}: {info}"));
            previous(info);
        }));
    });
}

/// The panics recorded so far.
pub fn panics() -> Vec<String> {
    PANICS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// The seed of this run.
pub fn seed() -> u64 {
    env_u64("FERROFLOW_FUZZ_SEED").unwrap_or(DEFAULT_SEED)
}

/// `default` inputs, times `FERROFLOW_FUZZ_SCALE`.
pub fn iterations(default: usize) -> usize {
    let scale: f64 = std::env::var("FERROFLOW_FUZZ_SCALE").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1.0);
    ((default as f64 * scale).round() as usize).max(1)
}

/// A step on `target` that must still work.
pub fn still_serves(target: &str) {
    let s = ferroflow_graph::Scope::new_root();
    let c = ferroflow_graph::ops::mul(
        &s,
        ferroflow_graph::ops::constant(&s, 6.0f32),
        ferroflow_graph::ops::constant(&s, 7.0f32),
    );
    let sess = ferroflow_distributed::GrpcSession::new(target, s.graph()).unwrap();
    assert_eq!(sess.run(&[], &[&c], &[]).unwrap()[0].scalar_value::<f32>().unwrap(), 42.0, "{target} still serves");
}

/// One fuzz run: its inputs, their outcomes and its findings.
pub struct Run {
    pub name: &'static str,
    pub seed: u64,
    pub iters: usize,
    started: Instant,
    pub tried: u64,
    outcomes: BTreeMap<String, u64>,
    /// The first message seen for each outcome (printed with `FERROFLOW_FUZZ_VERBOSE=1`).
    samples: BTreeMap<String, String>,
    findings: Vec<String>,
    panics_before: usize,
}

impl Run {
    /// Starts the run `name` of `default` inputs (scaled by the environment).
    pub fn start(name: &'static str, default: usize) -> Run {
        record_panics();
        // Kernels must refuse what a fuzzed shape declares long before the machine runs out,
        // and file ops stay inside a directory of their own.
        ferroflow_core::set_memory_limit(4 << 20);
        let root = std::env::temp_dir().join(format!("ferroflow-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        ferroflow_core::set_file_root(Some(&root)).unwrap();
        Run {
            name,
            seed: seed(),
            iters: iterations(default),
            started: Instant::now(),
            tried: 0,
            outcomes: BTreeMap::new(),
            samples: BTreeMap::new(),
            findings: Vec::new(),
            panics_before: panics().len(),
        }
    }

    /// The generator of input `i`: it depends only on the seed, the run's name and `i`, so
    /// a finding is replayed from the seed and the index.
    pub fn rng(&self, i: usize) -> Rng {
        let name =
            self.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        Rng::new(self.seed ^ name ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// Counts one input with its outcome (an error code's name, `OK`, ...).
    pub fn outcome(&mut self, what: impl Into<String>) {
        self.tried += 1;
        *self.outcomes.entry(what.into()).or_default() += 1;
    }

    /// Counts one input with its outcome and an example of its message.
    pub fn outcome_with(&mut self, what: impl Into<String>, message: &str) {
        let what = what.into();
        if !self.samples.contains_key(&what) {
            self.samples.insert(what.clone(), message.chars().take(300).collect());
        }
        self.outcome(what);
    }

    /// Records a finding about input `i` (printed now; the run fails at its end).
    pub fn finding(&mut self, i: usize, what: impl std::fmt::Display) {
        let mut what = what.to_string();
        if what.len() > 1500 {
            what.truncate(ferroflow_core::floor_char_boundary(&what, 1500));
            what.push_str(" [...]");
        }
        let f = format!("{} input #{i} (FERROFLOW_FUZZ_SEED={:#x}): {what}", self.name, self.seed);
        eprintln!("FUZZ FINDING: {f}");
        self.findings.push(f);
    }

    /// Prints the counts and fails if anything was found or anything panicked.
    pub fn finish(self) {
        let new_panics: Vec<String> = panics().split_off(self.panics_before);
        println!(
            "fuzz {}: seed {:#x}, {} inputs in {:.1}s, outcomes {:?}, panics {}, findings {}",
            self.name,
            self.seed,
            self.tried,
            self.started.elapsed().as_secs_f64(),
            self.outcomes,
            new_panics.len(),
            self.findings.len()
        );
        if std::env::var("FERROFLOW_FUZZ_VERBOSE").is_ok_and(|v| v == "1") {
            for (what, m) in &self.samples {
                println!("  {what}: {m}");
            }
        }
        assert!(new_panics.is_empty(), "{}: {} panics: {:#?}", self.name, new_panics.len(), new_panics);
        let first: Vec<&String> = self.findings.iter().take(10).collect();
        assert!(self.findings.is_empty(), "{}: {} findings, the first: {first:#?}", self.name, self.findings.len());
    }
}
