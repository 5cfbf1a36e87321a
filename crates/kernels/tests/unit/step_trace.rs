use std::time::Instant;

use ferroflow_core::{DataType, Shape, Tensor};
use ferroflow_graph::graph_util::node_def as node;

use ferroflow_kernels::step_trace::timeline_label;
use ferroflow_kernels::{StepTrace, Value};

#[test]
fn label_lists_data_inputs_only() {
    assert_eq!(timeline_label(&node("m", "MatMul", &["a", "b:1", "^c"])), "m = MatMul(a, b:1)");
    assert_eq!(timeline_label(&node("c", "Const", &[])), "c = Const()");
}

#[test]
fn records_times_outputs_and_threads() {
    let trace = StepTrace::new();
    let def = node("x", "Fill", &["dims", "v"]);
    let start = Instant::now();
    let t = Tensor::new(Shape::new(vec![2, 3]), vec![0f32; 6]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2));
    trace.record_node(&def, start, &[Some(Value::Tensor(t)), None]);
    let before = trace.micros(Instant::now());
    std::thread::scope(|s| {
        s.spawn(|| trace.record_transfer(Instant::now(), "k", "/job:ps/task:0", "/job:worker/task:0", 400));
    });
    let d = trace.device_stats("/job:worker/replica:0/task:0/device:CPU:0");
    assert_eq!(d.node_stats.len(), 2);
    let n = &d.node_stats[0];
    assert_eq!(n.node_name, "x");
    assert_eq!(n.timeline_label, "x = Fill(dims, v)");
    assert!(n.all_start_micros <= before && n.all_start_micros > 1_600_000_000_000_000);
    assert!(n.op_end_rel_micros >= 2000, "{n:?}");
    assert!(n.all_end_rel_micros >= n.op_end_rel_micros);
    assert_eq!(n.output.len(), 1);
    let desc = n.output[0].tensor_description.as_ref().unwrap();
    assert_eq!(desc.dtype, DataType::Float.as_i32());
    assert_eq!(desc.allocation_description.as_ref().unwrap().requested_bytes, 24);
    let r = &d.node_stats[1];
    assert_eq!(r.node_name, "RecvTensor");
    assert!(
        r.timeline_label.starts_with("[400B] ")
            && r.timeline_label.ends_with("k from /job:ps/task:0 to /job:worker/task:0")
    );
    assert_ne!(r.thread_id, n.thread_id);
    assert_eq!(d.thread_names.len(), 2);
}
