//! What a traced step ran (TensorFlow's `StepStatsCollector`): one `NodeExecStats` per
//! node execution (start, op and total durations, outputs, the thread it ran on, and a
//! timeline label `name = Op(inputs)` that TensorFlow's timeline parses), plus the step's
//! RPCs. A step carries one only when its caller asked for a trace
//! (`RunOptions.trace_level`, `ExecutorOpts.record_timeline`); untraced steps pay nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use ferroflow_core::proto::{
    AllocationDescription, DeviceStepStats, NodeDef, NodeExecStats, NodeOutput, TensorDescription,
};
use ferroflow_core::Tensor;

use crate::Value;

/// The allocator every ferroflow tensor comes from, as TensorFlow names its CPU one.
pub const CPU_ALLOCATOR: &str = "cpu";

/// The records of one step on one device.
pub struct StepTrace {
    /// The clock's origin: wall-clock microseconds at `base`.
    base: Instant,
    base_micros: i64,
    nodes: Mutex<Vec<NodeExecStats>>,
    threads: Mutex<HashMap<u32, String>>,
}

impl Default for StepTrace {
    fn default() -> Self {
        StepTrace::new()
    }
}

impl StepTrace {
    pub fn new() -> StepTrace {
        let base_micros = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or(0);
        StepTrace { base: Instant::now(), base_micros, nodes: Mutex::default(), threads: Mutex::default() }
    }

    /// Wall-clock microseconds of `t` (monotonic within the step).
    pub fn micros(&self, t: Instant) -> i64 {
        self.base_micros + t.saturating_duration_since(self.base).as_micros() as i64
    }

    /// Records a node that started at `start` and just ended with `outputs` (`None`: dead
    /// or not produced). The kernel's span is the node's: the executor's own work around
    /// a kernel is a few hundred nanoseconds.
    pub fn record_node(&self, def: &NodeDef, start: Instant, outputs: &[Option<Value>]) {
        let took = Instant::now().saturating_duration_since(start);
        let output = outputs
            .iter()
            .enumerate()
            .filter_map(|(slot, v)| {
                let desc = describe(v.as_ref()?)?;
                Some(NodeOutput { slot: slot as i32, tensor_description: Some(desc) })
            })
            .collect();
        let ns = NodeExecStats {
            node_name: def.name.clone(),
            all_start_micros: self.micros(start),
            op_end_rel_micros: took.as_micros() as i64,
            all_end_rel_micros: took.as_micros() as i64,
            all_start_nanos: self.nanos(start),
            op_end_rel_nanos: took.as_nanos() as i64,
            all_end_rel_nanos: took.as_nanos() as i64,
            scheduled_micros: self.micros(start),
            scheduled_nanos: self.nanos(start),
            timeline_label: timeline_label(def),
            output,
            ..Default::default()
        };
        self.push(ns);
    }

    /// Records a tensor received from another task (TensorFlow's `RecvTensor` entries).
    pub fn record_transfer(&self, start: Instant, key: &str, src: &str, dst: &str, bytes: usize) {
        let took = Instant::now().saturating_duration_since(start);
        let us = took.as_micros().max(1) as i64;
        let size = if bytes as f64 >= 0.1 * 1048576.0 {
            format!("[{:.1}MB]", bytes as f64 / 1048576.0)
        } else {
            format!("[{bytes}B]")
        };
        let mbits = 8.0 * bytes as f64 / us as f64;
        let rate = if mbits >= 1000.0 { format!("[{:.1}Gb/s]", mbits / 1000.0) } else { format!("[{mbits:.3}Mb/s]") };
        let ns = NodeExecStats {
            node_name: "RecvTensor".into(),
            all_start_micros: self.micros(start),
            all_start_nanos: self.nanos(start),
            op_end_rel_micros: us,
            all_end_rel_micros: us,
            op_end_rel_nanos: took.as_nanos() as i64,
            all_end_rel_nanos: took.as_nanos() as i64,
            timeline_label: format!("{size} {rate} {key} from {src} to {dst}"),
            output: vec![NodeOutput {
                slot: 0,
                tensor_description: Some(TensorDescription {
                    allocation_description: Some(AllocationDescription {
                        requested_bytes: bytes as i64,
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
            }],
            ..Default::default()
        };
        self.push(ns);
    }

    fn nanos(&self, t: Instant) -> i64 {
        self.base_micros.saturating_mul(1000) + t.saturating_duration_since(self.base).as_nanos() as i64
    }

    /// Adds a record made on this thread.
    fn push(&self, mut ns: NodeExecStats) {
        let (id, name) = thread_id();
        ns.thread_id = id;
        self.threads.lock().unwrap_or_else(|e| e.into_inner()).entry(id).or_insert_with(|| name);
        self.nodes.lock().unwrap_or_else(|e| e.into_inner()).push(ns);
    }

    /// Number of records so far.
    pub fn len(&self) -> usize {
        self.nodes.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The records as TensorFlow's `DeviceStepStats` of `device`, in start order.
    pub fn device_stats(&self, device: &str) -> DeviceStepStats {
        let mut node_stats = std::mem::take(&mut *self.nodes.lock().unwrap_or_else(|e| e.into_inner()));
        node_stats.sort_by_key(|n| (n.all_start_nanos, n.all_end_rel_nanos));
        let thread_names = self.threads.lock().unwrap_or_else(|e| e.into_inner()).clone();
        DeviceStepStats { device: device.to_string(), node_stats, thread_names }
    }
}

/// TensorFlow's timeline label: `name = Op(input, input)` (data inputs only).
pub fn timeline_label(def: &NodeDef) -> String {
    let inputs: Vec<&str> = def.input.iter().filter(|i| !i.starts_with('^')).map(String::as_str).collect();
    format!("{} = {}({})", def.name, def.op, inputs.join(", "))
}

/// A tensor's size in bytes (its elements' fixed size; 0 for strings and variants).
pub fn tensor_bytes(t: &Tensor) -> usize {
    t.dtype().byte_size().map_or(0, |b| b * t.num_elements())
}

/// An output's dtype, shape and size.
fn describe(v: &Value) -> Option<TensorDescription> {
    let (t, is_ref): (Tensor, bool) = match v {
        Value::Tensor(t) => (t.clone(), false),
        Value::Ref(var) => (var.read().ok()?, true),
    };
    let bytes = tensor_bytes(&t) as i64;
    let dtype = t.dtype().as_i32() + if is_ref { 100 } else { 0 };
    Some(TensorDescription {
        dtype,
        shape: Some(t.shape().to_proto()),
        allocation_description: Some(AllocationDescription {
            requested_bytes: bytes,
            allocated_bytes: bytes,
            allocator_name: CPU_ALLOCATOR.into(),
            ..Default::default()
        }),
    })
}

static NEXT_THREAD: AtomicU32 = AtomicU32::new(1);

thread_local! {
    static THREAD: (u32, String) = {
        let id = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
        let name = std::thread::current().name().map_or_else(|| format!("thread-{id}"), str::to_string);
        (id, name)
    };
}

/// A small id for this thread, stable for its life, and its name.
fn thread_id() -> (u32, String) {
    THREAD.with(|t| t.clone())
}
