//! Collective ops across the tasks of an in-memory cluster (no sockets): all-reduce,
//! all-gather and broadcast over three workers whose group leader is the default one
//! (worker 0), in two steps; a lost RecvBuf fails the step at its deadline instead of
//! hanging; a member that never comes ends the others with TensorFlow's timeout error.

use crate::common;

use std::time::{Duration, Instant};

use common::Cluster;
use ferroflow_core::{Code, DataType, Tensor};
use ferroflow_distributed::{Fault, GrpcSession, Rule, ServerOptions, WorkerRpc};
use ferroflow_graph::ops::{self, CollectiveKeys};
use ferroflow_graph::Scope;
use ferroflow_runtime::{RunOptions, StepRunner};

fn worker(t: usize) -> String {
    format!("/job:worker/replica:0/task:{t}/device:CPU:0")
}

fn keys(group_size: i32, instance_key: i32) -> CollectiveKeys {
    CollectiveKeys { group_size, group_key: 1, instance_key }
}

#[test]
fn reduce_gather_broadcast_over_three_workers() {
    let (c, _net) = Cluster::in_memory(&[("worker", 3)], |_, _| ServerOptions::default());
    let s = Scope::new_root();
    let mut fetches = Vec::new();
    for t in 0..3 {
        let d = s.with_device(&worker(t));
        let x =
            ops::constant(&d, Tensor::new(vec![5], (0..5).map(|i| (i * (t + 1)) as f32).collect::<Vec<_>>()).unwrap());
        fetches.push(ops::collective_reduce(&d, x, DataType::Float, keys(3, 1), ("Add", "Div")).unwrap());
        let g = ops::constant(&d, Tensor::new(vec![1, 2], vec![t as i64, -(t as i64)]).unwrap());
        fetches.push(ops::collective_gather(&d, g, DataType::Int64, keys(3, 2)).unwrap());
        fetches.push(if t == 2 {
            let v = ops::constant(&d, Tensor::new(vec![2], vec![7i32, 9]).unwrap());
            ops::collective_bcast_send(&d, v, DataType::Int32, keys(3, 3)).unwrap()
        } else {
            ops::collective_bcast_recv(&d, DataType::Int32, &[2], keys(3, 3)).unwrap()
        });
    }
    let sess = GrpcSession::new(&c.target("worker:1"), s.graph()).unwrap();
    let refs: Vec<_> = fetches.iter().collect();
    for _ in 0..2 {
        let out = sess.run(&[], &refs, &[]).unwrap();
        for t in 0..3 {
            let mean: Vec<f32> = (0..5).map(|i| (i * 6) as f32 / 3.0).collect();
            assert_eq!(out[3 * t].as_slice::<f32>().unwrap(), mean.as_slice());
            assert_eq!(out[3 * t + 1].dims(), [3, 2]);
            assert_eq!(out[3 * t + 1].as_slice::<i64>().unwrap(), [0, 0, 1, -1, 2, -2]);
            assert_eq!(out[3 * t + 2].as_slice::<i32>().unwrap(), [7, 9]);
        }
    }
}

#[test]
fn a_lost_chunk_fails_the_step_at_its_deadline() {
    let (c, net) = Cluster::in_memory(&[("worker", 2)], |_, _| ServerOptions::default());
    let s = Scope::new_root();
    let fetches: Vec<_> = (0..2)
        .map(|t| {
            let d = s.with_device(&worker(t));
            let x = ops::constant(&d, Tensor::new(vec![40], vec![1.0f32; 40]).unwrap());
            ops::collective_reduce(&d, x, DataType::Float, keys(2, 1), ("Add", "Id")).unwrap()
        })
        .collect();
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let refs: Vec<_> = fetches.iter().collect();
    // Every collective RPC from worker 1 is lost (the group's CompleteGroup among them).
    net.filters().add(Rule::new(Fault::LoseRequest).from(&["/job:worker/task:1"]).unwrap().rpc(WorkerRpc::Collective));
    let opts = RunOptions { timeout: Some(Duration::from_secs(2)), ..Default::default() };
    let start = Instant::now();
    let names: Vec<String> = fetches.iter().map(|o| format!("{}:0", o.node)).collect();
    let e = sess.run_by_name(&[], &names, &[], &opts).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(20), "the step was not bounded: {:?}", start.elapsed());
    assert!(matches!(e.code, Code::DeadlineExceeded | Code::Unavailable | Code::Cancelled), "{e}");
    // Healed, the same step runs.
    net.filters().heal();
    let out = sess.run(&[], &refs, &[]).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), [2.0f32; 40].as_slice());
}

#[test]
fn a_missing_member_times_out_with_tensorflows_error() {
    let (c, _net) = Cluster::in_memory(&[("worker", 2)], |_, _| ServerOptions::default());
    let s = Scope::new_root();
    let d = s.with_device(&worker(1));
    let x = ops::constant(&d, Tensor::scalar(1.0f32));
    let b = d.op("CollectiveReduceV2").input(x);
    let c3 = |v: i32| ops::constant(&d, Tensor::scalar(v));
    let red = b
        .input(c3(2))
        .input(c3(5))
        .input(c3(1))
        .input_list(vec![])
        .attr("T", ferroflow_core::attr::ty(DataType::Float))
        .attr("merge_op", ferroflow_core::attr::string("Add"))
        .attr("final_op", ferroflow_core::attr::string("Id"))
        .attr("timeout_seconds", ferroflow_core::attr::float(0.5))
        .try_build()
        .unwrap()
        .output(0);
    let sess = GrpcSession::new(&c.target("worker:0"), s.graph()).unwrap();
    let start = Instant::now();
    let e = sess.run(&[], &[&red], &[]).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    assert_eq!(e.code, Code::DeadlineExceeded, "{e}");
    assert!(e.message.contains("Collective has timed out waiting for other workers."), "{e}");
}

/// Between-graph members whose sessions see only their own task (device filters, as a
/// multi-worker program sets them): the non-leader's master still asks the group leader for
/// the step sequence, so both masters run the collective under the same step id.
#[test]
fn between_graph_members_agree_on_step_ids_through_device_filters() {
    let (c, _net) = Cluster::in_memory(&[("worker", 2)], |_, _| ServerOptions::default());
    let threads: Vec<_> = (0..2usize)
        .map(|t| {
            let target = c.target(&format!("worker:{t}"));
            std::thread::spawn(move || {
                let s = Scope::new_root();
                let d = s.with_device(&worker(t));
                let x = ops::constant(&d, Tensor::new(vec![3], vec![1.0f32, 2.0, 3.0 * (t + 1) as f32]).unwrap());
                let y = ops::collective_reduce(&d, x, DataType::Float, keys(2, 7), ("Add", "Id")).unwrap();
                let config = ferroflow_core::proto::ConfigProto {
                    device_filters: vec![format!("/job:worker/task:{t}")],
                    ..Default::default()
                };
                let sess = GrpcSession::with_config(&target, s.graph(), config).unwrap();
                let opts = RunOptions { timeout: Some(Duration::from_secs(20)), ..Default::default() };
                (0..3)
                    .map(|_| {
                        let out = sess.run_by_name(&[], &[y.name()], &[], &opts)?;
                        Ok(out[0].as_slice::<f32>()?.to_vec())
                    })
                    .collect::<Result<Vec<_>, ferroflow_core::Status>>()
            })
        })
        .collect();
    for (t, th) in threads.into_iter().enumerate() {
        let got = th.join().unwrap().unwrap_or_else(|e| panic!("worker {t}: {e}"));
        assert_eq!(got, vec![vec![2.0f32, 4.0, 9.0]; 3], "worker {t}");
    }
}
