//! The Rust `embedding_lookup` over a partitioned table, trained by each optimizer
//! (gradient descent, Adagrad, Momentum, RMSProp plain and centered, Adam, Adadelta, FTRL
//! with and without L2 shrinkage), against
//! TensorFlow 2.21 (numbers from scripts/fixtures/tf_embedding.py): a 10x3 table in 3
//! parts, looked up by a [4, 3] id matrix with repeated ids, summed per example, times a
//! dense 3x2 weight, softmax cross-entropy; 6 steps. The losses and the final table equal
//! TensorFlow's, with resource and with reference variables, and the parts are updated by
//! the sparse ops TensorFlow uses (`ResourceSparseApplyAdagrad`, `ScatterSub`, …).

use ferroflow_core::{DataType, Tensor};
use ferroflow_distributed::{ClusterSpec, GrpcSession, Server, ServerOptions};
use ferroflow_graph::{
    embedding_lookup_partitioned, get_or_create_global_step, global_variables_initializer, ops, Operation, Output,
    PartitionedVariable, Scope, Variable, VariableOptions,
};
use ferroflow_runtime::DirectSession;
use ferroflow_runtime::StepRunner;
use ferroflow_train::optimizer::{
    Adadelta, Adagrad, AdagradDa, Adam, Ftrl, GradientDescent, Momentum, Optimizer, ProximalAdagrad,
    ProximalGradientDescent, RmsProp,
};
use ferroflow_train::ReplicaDeviceSetter;
use serde_json::Value as J;

fn fixture() -> J {
    serde_json::from_str(include_str!("fixtures/tf_embedding.json")).unwrap()
}

fn f32s(j: &J) -> Vec<f32> {
    j.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect()
}

fn i64s(j: &J) -> Vec<i64> {
    j.as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect()
}

/// The fixture's optimizer `name`; AdagradDA reads `global_step`.
fn optimizer(name: &str, global_step: &Variable) -> Box<dyn Optimizer> {
    match name {
        "sgd" => Box::new(GradientDescent::new(0.5)),
        "adagrad" => Box::new(Adagrad::new(0.5)),
        "momentum" => Box::new(Momentum::new(0.2, 0.9)),
        "rmsprop" => Box::new(RmsProp { momentum: 0.5, ..RmsProp::new(0.05) }),
        "adam" => Box::new(Adam::new(0.1)),
        "centered_rmsprop" => Box::new(RmsProp { momentum: 0.5, centered: true, ..RmsProp::new(0.05) }),
        "adadelta" => Box::new(Adadelta::new(1.0)),
        "ftrl" => {
            Box::new(Ftrl { l1_regularization_strength: 0.01, l2_regularization_strength: 0.02, ..Ftrl::new(0.5) })
        }
        "ftrl_shrinkage" => {
            Box::new(Ftrl { learning_rate_power: -0.3, l2_shrinkage_regularization_strength: 0.05, ..Ftrl::new(0.5) })
        }
        "proximal_sgd" => Box::new(ProximalGradientDescent { l1: 0.01, l2: 0.02, ..ProximalGradientDescent::new(0.5) }),
        "proximal_adagrad" => Box::new(ProximalAdagrad { l1: 0.01, l2: 0.02, ..ProximalAdagrad::new(0.5) }),
        "adagrad_da" => Box::new(AdagradDa { l1: 0.01, l2: 0.02, ..AdagradDa::new(0.5, global_step) }),
        n => panic!("unknown optimizer {n}"),
    }
}

/// What one training run gives: losses, the final table, the update op types and the
/// dense weight's slot variables.
type Run = (Vec<f32>, Vec<f32>, Vec<String>, Vec<String>);

/// Runs one step: (feeds, fetches, targets) → fetched values.
type Step<'a> = dyn Fn(&[(&Output, Tensor)], &[&Output], &[&Operation]) -> Vec<Tensor> + 'a;

/// Trains the fixture's model in a DirectSession.
fn train(fx: &J, name: &str, use_resource: bool) -> Run {
    let root = Scope::new_root();
    train_in(fx, name, use_resource, &root, &root, None)
}

/// Trains the fixture's model built under `s` (whose root is `root`), in a DirectSession
/// or, given a target, in a GrpcSession.
fn train_in(fx: &J, name: &str, use_resource: bool, root: &Scope, s: &Scope, target: Option<&str>) -> Run {
    let (vocab, dim, classes) = (fx["vocab"].as_u64().unwrap() as usize, 3usize, 2usize);
    let k = fx["k"].as_i64().unwrap();
    let emb0 = f32s(&fx["emb"]);
    let s = s.clone();
    let opts = VariableOptions { use_resource, ..Default::default() };
    let table = PartitionedVariable::new(&s, "emb", &[vocab, dim], 0, 3, &opts, |sc, shape, off| {
        ops::constant(sc, Tensor::new(shape.to_vec(), emb0[off * dim..(off + shape[0]) * dim].to_vec()).unwrap())
    })
    .unwrap();
    let w0 = Tensor::new(vec![dim, classes], f32s(&fx["w"])).unwrap();
    let w = Variable::with_options(&s, "w", ops::constant(&s, w0), &opts);
    let ids = ops::placeholder_named(&s, "ids", DataType::Int64, Some(&[-1, k]));
    let y = ops::placeholder_named(&s, "y", DataType::Int64, Some(&[-1]));
    let rows = embedding_lookup_partitioned(&s, &table, ids.clone()).unwrap();
    assert_eq!(s.graph().shape_of(&rows), Some(vec![-1, k, dim as i64]));
    let h = ops::sum(&s, rows, ops::constant(&s, 1i32), false);
    let logits = ops::mat_mul(&s, h, w.value(), false, false);
    let (xent, _) = ops::sparse_softmax_cross_entropy_with_logits(&s, logits, y.clone());
    let loss = ops::mean(&s, xent, ops::constant(&s, 0i32), false);
    let train = if name == "adagrad_da" {
        let step = get_or_create_global_step(&s);
        optimizer(name, &step).minimize(&s, &loss, None, Some(&step)).unwrap()
    } else {
        optimizer(name, &w).minimize(&s, &loss, None, None).unwrap()
    };
    let full = table.value(&s);
    let init = global_variables_initializer(&s);
    let update_ops: Vec<String> = {
        let mut v: Vec<String> = s
            .graph()
            .nodes()
            .into_iter()
            .map(|n| n.def.op)
            .filter(|op| op.contains("Apply") || op.contains("Scatter"))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let direct;
    let grpc;
    let run: Box<Step> = match target {
        None => {
            direct = DirectSession::new(root.graph());
            Box::new(|f, x, t| direct.run(f, x, t).unwrap())
        }
        Some(t) => {
            grpc = GrpcSession::new(t, root.graph()).unwrap();
            Box::new(|f, x, t| grpc.run(f, x, t).unwrap())
        }
    };
    run(&[], &[], &[&init]);
    let batch = fx["batch"].as_u64().unwrap() as usize;
    let mut losses = Vec::new();
    for (i, lab) in fx["ids"].as_array().unwrap().iter().zip(fx["labels"].as_array().unwrap()) {
        let feeds = [
            (&ids, Tensor::new(vec![batch, k as usize], i64s(i)).unwrap()),
            (&y, Tensor::new(vec![batch], i64s(lab)).unwrap()),
        ];
        let out = run(&feeds, &[&loss], &[&train]);
        losses.push(out[0].scalar_value::<f32>().unwrap());
    }
    let table = run(&[], &[&full], &[]).remove(0).as_slice::<f32>().unwrap().to_vec();
    let mut slots: Vec<String> = ferroflow_graph::global_variables(s.graph())
        .unwrap()
        .iter()
        .map(|v| v.name().to_string())
        .filter(|n| n.starts_with("w/"))
        .collect();
    slots.sort();
    (losses, table, update_ops, slots)
}

fn close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 2e-5 * w.abs().max(1.0), "{what}[{i}]: {g} but TensorFlow gives {w}");
    }
}

#[test]
fn partitioned_embeddings_train_as_in_tensorflow() {
    let fx = fixture();
    let names = [
        "sgd",
        "adagrad",
        "momentum",
        "rmsprop",
        "adam",
        "centered_rmsprop",
        "adadelta",
        "ftrl",
        "ftrl_shrinkage",
        "proximal_sgd",
        "proximal_adagrad",
        "adagrad_da",
    ];
    for name in names {
        for use_resource in [true, false] {
            let key = format!("{name}/{}", if use_resource { "resource" } else { "ref" });
            let want = &fx["runs"][&key];
            let (losses, table, ops, slots) = train(&fx, name, use_resource);
            let want_slots: Vec<String> =
                want["w_slots"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
            assert_eq!(slots, want_slots, "{key}: slot variables");
            let want_ops: Vec<&str> =
                want["update_ops"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
            if name != "adam" {
                assert_eq!(ops, want_ops, "{key}: update ops");
            }
            close(&losses, &f32s(&want["losses"]), &format!("{key} losses"));
            close(&table, &f32s(&want["emb"]), &format!("{key} table"));
            // The parts take TensorFlow's sparse update (Adam: the dense one, which is
            // what TensorFlow's scatter-based update computes).
            let sparse = ops.iter().any(|o| o.contains("SparseApply") || o.contains("Scatter"));
            assert_eq!(sparse, name != "adam", "{key}: update ops {ops:?}");
            if name == "adagrad" {
                let want = if use_resource { "ResourceSparseApplyAdagrad" } else { "SparseApplyAdagrad" };
                assert!(ops.iter().any(|o| o == want), "{key}: {ops:?}");
            }
        }
    }
}

/// The same training on a cluster: 2 ps tasks and a worker (servers of this process on
/// 127.0.0.1:0 ports; the worker's master runs the ps partitions over gRPC), the table's
/// parts and the weight placed on the ps tasks by `replica_device_setter`, the lookup's
/// partitioning and stitching on the worker. Losses and table equal TensorFlow's.
#[test]
fn partitioned_embeddings_train_on_parameter_servers() {
    let fx = fixture();
    let ls: Vec<std::net::TcpListener> = (0..3).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let addr: Vec<String> = ls.iter().map(|l| format!("127.0.0.1:{}", l.local_addr().unwrap().port())).collect();
    let cluster =
        ClusterSpec::new(&[("ps", vec![addr[0].as_str(), addr[1].as_str()]), ("worker", vec![addr[2].as_str()])])
            .unwrap();
    let mut servers = Vec::new();
    for (i, l) in ls.into_iter().enumerate() {
        let (job, task) = if i < 2 { ("ps", i as i32) } else { ("worker", 0) };
        servers
            .push(Server::new(&cluster, job, task, ServerOptions { listener: Some(l), ..Default::default() }).unwrap());
    }
    for (name, use_resource) in [("adagrad", true), ("momentum", false), ("ftrl", true), ("adagrad_da", false)] {
        GrpcSession::reset(servers[2].target(), &[]).unwrap();
        let root = Scope::new_root();
        let setter = ReplicaDeviceSetter::for_cluster(&cluster, "/job:worker/task:0").build().unwrap();
        let s = root.with_device_fn(setter);
        let (losses, table, ops, _) = train_in(&fx, name, use_resource, &root, &s, Some(servers[2].target()));
        let key = format!("{name}/{}", if use_resource { "resource" } else { "ref" });
        let want = &fx["runs"][&key];
        close(&losses, &f32s(&want["losses"]), &format!("{key} on the cluster: losses"));
        close(&table, &f32s(&want["emb"]), &format!("{key} on the cluster: table"));
        assert!(ops.iter().any(|o| o.contains("SparseApply")), "{key}: {ops:?}");
        // The parts went round-robin to the two ps tasks.
        let devices: Vec<String> = root
            .graph()
            .nodes()
            .into_iter()
            .filter(|n| ["emb/part_0", "emb/part_1", "emb/part_2"].contains(&n.def.name.as_str()))
            .map(|n| n.def.device)
            .collect();
        assert_eq!(devices.len(), 3, "{devices:?}");
        assert!(
            devices.iter().any(|d| d.contains("/job:ps/task:0"))
                && devices.iter().any(|d| d.contains("/job:ps/task:1")),
            "{devices:?}"
        );
    }
}
