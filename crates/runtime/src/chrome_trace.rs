//! A step's `StepStats` as a Chrome trace (the JSON `chrome://tracing` and Perfetto open),
//! laid out as TensorFlow's `timeline.Timeline` lays it out: one process per device
//! ("<device> Compute"), one row per thread, one complete event per node named by its op,
//! with the node's name and inputs (parsed from the `name = Op(inputs)` label) as args.

use ferroflow_core::proto::StepStats;
use serde_json::{json, Map, Value};

/// The `(op, inputs)` of a timeline label `name = Op(a, b)`; `None` for other labels.
pub fn parse_label(label: &str) -> Option<(&str, Vec<&str>)> {
    let (_, rest) = label.split_once(" = ")?;
    let open = rest.find('(')?;
    let inner = rest[open + 1..].strip_suffix(')')?;
    let inputs = if inner.is_empty() { vec![] } else { inner.split(", ").collect() };
    Some((&rest[..open], inputs))
}

/// The Chrome trace of `stats`.
pub fn chrome_trace(stats: &StepStats) -> String {
    let mut events = Vec::new();
    for (pid, dev) in stats.dev_stats.iter().enumerate() {
        events.push(json!({"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": format!("{} Compute", dev.device)}}));
        let mut tids: Vec<_> = dev.thread_names.iter().collect();
        tids.sort();
        for (tid, name) in tids {
            events.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}));
        }
        for n in &dev.node_stats {
            let mut args = Map::new();
            args.insert("name".into(), n.node_name.clone().into());
            let op = match parse_label(&n.timeline_label) {
                Some((op, inputs)) => {
                    for (i, inp) in inputs.iter().enumerate() {
                        args.insert(format!("input{i}"), (*inp).into());
                    }
                    op.to_string()
                }
                None if n.node_name == "RecvTensor" => {
                    args.insert("detail".into(), n.timeline_label.clone().into());
                    "RecvTensor".to_string()
                }
                None => "unknown".to_string(),
            };
            args.insert("op".into(), op.clone().into());
            events.push(json!({
                "name": op, "cat": "Op", "ph": "X", "pid": pid, "tid": n.thread_id,
                "ts": n.all_start_micros, "dur": n.all_end_rel_micros, "args": Value::Object(args),
            }));
        }
    }
    json!({ "traceEvents": events }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::proto::{DeviceStepStats, NodeExecStats};

    #[test]
    fn labels_parse_like_tensorflows_timeline() {
        assert_eq!(parse_label("m = MatMul(a, b:1)"), Some(("MatMul", vec!["a", "b:1"])));
        assert_eq!(parse_label("c = Const()"), Some(("Const", vec![])));
        assert_eq!(parse_label("[4B] [1.0Mb/s] edge from a to b"), None);
    }

    #[test]
    fn one_process_per_device_one_event_per_node() {
        let node = |name: &str, label: &str, ts, tid| NodeExecStats {
            node_name: name.into(),
            timeline_label: label.into(),
            all_start_micros: ts,
            all_end_rel_micros: 7,
            thread_id: tid,
            ..Default::default()
        };
        let stats = StepStats {
            dev_stats: vec![
                DeviceStepStats {
                    device: "/job:ps/replica:0/task:0/device:CPU:0".into(),
                    node_stats: vec![node("w", "w = VarHandleOp()", 100, 1)],
                    thread_names: [(1, "compute-0".to_string())].into(),
                },
                DeviceStepStats {
                    device: "/job:worker/replica:0/task:0/device:CPU:0".into(),
                    node_stats: vec![
                        node("m", "m = MatMul(x, w_S1)", 120, 2),
                        node("RecvTensor", "[64B] [1Mb/s] w from /job:ps to /job:worker", 110, 2),
                    ],
                    thread_names: Default::default(),
                },
            ],
        };
        let v: Value = serde_json::from_str(&chrome_trace(&stats)).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let procs: Vec<&str> =
            ev.iter().filter(|e| e["name"] == "process_name").map(|e| e["args"]["name"].as_str().unwrap()).collect();
        assert_eq!(
            procs,
            ["/job:ps/replica:0/task:0/device:CPU:0 Compute", "/job:worker/replica:0/task:0/device:CPU:0 Compute"]
        );
        assert!(ev.iter().any(|e| e["name"] == "thread_name" && e["args"]["name"] == "compute-0"));
        let ops: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(ops.len(), 3);
        let m = ops.iter().find(|e| e["args"]["name"] == "m").unwrap();
        assert_eq!(
            (m["name"].as_str(), m["pid"].as_u64(), m["ts"].as_i64(), m["dur"].as_i64()),
            (Some("MatMul"), Some(1), Some(120), Some(7))
        );
        assert_eq!((m["args"]["input0"].as_str(), m["args"]["input1"].as_str()), (Some("x"), Some("w_S1")));
        let r = ops.iter().find(|e| e["args"]["name"] == "RecvTensor").unwrap();
        assert_eq!(r["name"], "RecvTensor");
    }
}
