//! Step traces (`RunOptions.trace`, TensorFlow's `trace_level`): a traced step across a ps
//! and two workers returns every device's step stats, with each node it ran, the tensors
//! it produced and the tensors it received from other tasks; an untraced step returns none.

use crate::common;

use common::Cluster;
use ferroflow_core::proto::{RunMetadata, StepStats};
use ferroflow_core::Tensor;
use ferroflow_distributed::GrpcSession;
use ferroflow_graph::{ops, Scope};
use ferroflow_runtime::StepRunner;
use ferroflow_runtime::{DirectSession, RunOptions, StepArgs};

fn nodes_on<'a>(stats: &'a StepStats, device: &str) -> Vec<&'a str> {
    stats
        .dev_stats
        .iter()
        .filter(|d| d.device == device)
        .flat_map(|d| d.node_stats.iter().map(|n| n.node_name.as_str()))
        .collect()
}

/// Node names of a, b, prod, c and total.
type Names<'a> = [&'a str; 5];

fn check(meta: &RunMetadata, [a, b, prod, c, total]: Names) {
    let stats = meta.step_stats.as_ref().expect("a traced step has step stats");
    let ps = nodes_on(stats, "/job:ps/replica:0/task:0/device:CPU:0");
    let w0 = nodes_on(stats, "/job:worker/replica:0/task:0/device:CPU:0");
    let w1 = nodes_on(stats, "/job:worker/replica:0/task:1/device:CPU:0");
    assert!(ps.contains(&a), "{ps:?}");
    assert!(w0.contains(&b) && w0.contains(&prod), "{w0:?}");
    assert!(w1.contains(&c) && w1.contains(&total), "{w1:?}");
    // Tensors from other tasks were received: recorded where they arrived.
    assert!(w0.contains(&"RecvTensor") && w1.contains(&"RecvTensor"), "{w0:?} {w1:?}");
    for d in &stats.dev_stats {
        for n in &d.node_stats {
            assert!(n.all_end_rel_micros >= 0 && n.all_start_micros > 0, "{n:?}");
            assert!(
                d.thread_names.contains_key(&n.thread_id),
                "{} on {}: thread {}",
                n.node_name,
                d.device,
                n.thread_id
            );
            if n.node_name == prod {
                assert!(n.timeline_label.starts_with(&format!("{prod} = Mul(")), "{}", n.timeline_label);
                assert_eq!(label_inputs(&n.timeline_label).split(", ").count(), 2, "{}", n.timeline_label);
                let desc = n.output[0].tensor_description.as_ref().unwrap();
                assert_eq!(desc.shape.as_ref().unwrap().dim.len(), 1);
                assert_eq!(desc.allocation_description.as_ref().unwrap().requested_bytes, 8);
            }
        }
    }
}

/// The inputs part of a `name = Op(inputs)` label.
fn label_inputs(label: &str) -> String {
    label.split_once('(').map(|(_, r)| r.trim_end_matches(')').to_string()).unwrap_or_default()
}

#[test]
fn a_traced_step_returns_every_devices_stats() {
    let c = Cluster::start(&[("ps", 1), ("worker", 2)]);
    let s = Scope::new_root();
    let (ps, w0, w1) =
        (s.with_device("/job:ps/task:0"), s.with_device("/job:worker/task:0"), s.with_device("/job:worker/task:1"));
    let a = ops::constant(&ps, Tensor::vec(vec![1.0f32, 2.0]));
    let b = ops::constant(&w0, Tensor::vec(vec![3.0f32, 4.0]));
    let prod = ops::mul(&w0, a.clone(), b.clone());
    let c1 = ops::constant(&w1, 2.0f32);
    let sum = ops::sum(&w1, prod.clone(), ops::constant(&w1, Tensor::vec(vec![0i32])), false);
    let total = ops::mul(&w1, sum, c1.clone());
    let names = [a.op_name(), b.op_name(), prod.op_name(), c1.op_name(), total.op_name()];
    for grpc_only in [false, true] {
        let mut sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
        if grpc_only {
            sess = sess.over_grpc_only();
        }
        let fetch = [total.name()];
        let (out, meta) = sess
            .run_by_name_meta(StepArgs { feeds: &[], fetches: &fetch, targets: &[], opts: &RunOptions::default() })
            .unwrap();
        assert_eq!(out[0].scalar_value::<f32>().unwrap(), 22.0);
        assert!(meta.step_stats.is_none() && meta.partition_graphs.is_empty(), "untraced: {meta:?}");
        let opts = RunOptions { trace: true, output_partition_graphs: true, ..Default::default() };
        let (out, meta) =
            sess.run_by_name_meta(StepArgs { feeds: &[], fetches: &fetch, targets: &[], opts: &opts }).unwrap();
        assert_eq!(out[0].scalar_value::<f32>().unwrap(), 22.0);
        check(&meta, names);
        assert_eq!(meta.partition_graphs.len(), 3, "one graph per task");
    }
}

#[test]
fn a_traced_local_step_has_the_local_device() {
    let s = Scope::new_root();
    let x = ops::constant(&s, Tensor::vec(vec![1.0f32, 2.0, 3.0]));
    let y = ops::mul(&s, x.clone(), x.clone());
    let sess = DirectSession::new(s.graph());
    let opts = RunOptions { trace: true, output_partition_graphs: true, ..Default::default() };
    let (out, meta) =
        sess.run_by_name_meta(StepArgs { feeds: &[], fetches: &[y.name()], targets: &[], opts: &opts }).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[1.0, 4.0, 9.0]);
    let stats = meta.step_stats.unwrap();
    let names = nodes_on(&stats, ferroflow_runtime::LOCAL_DEVICE);
    assert!(names.contains(&x.op_name()) && names.contains(&y.op_name()), "{names:?}");
    let y_stats = stats.dev_stats[0].node_stats.iter().find(|n| n.node_name == y.op_name()).unwrap();
    assert_eq!(y_stats.timeline_label, format!("{0} = Mul({1}, {1})", y.op_name(), x.op_name()));
    assert_eq!(
        y_stats.output[0].tensor_description.as_ref().unwrap().allocation_description.as_ref().unwrap().requested_bytes,
        12
    );
    assert_eq!(meta.partition_graphs.len(), 1);
}
