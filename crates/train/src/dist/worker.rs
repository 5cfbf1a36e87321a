//! A worker task of between-graph replicated training.

use std::time::Instant;

use ferroflow_core::proto::ConfigProto;
use ferroflow_core::{Status, Tensor};
use ferroflow_distributed::{shutdown_server, GrpcSession, Server, ServerOptions};
use ferroflow_graph::{
    get_or_create_global_step, global_variables, ops, Operation, Output, Scope, Variable, VariableOptions,
};

use super::ready::wait_until;
use super::{ps_targets, DistConfig, Progress, WorkerReport};
use crate::data::read_mnist;
use crate::device_setter::ReplicaDeviceSetter;
use crate::local::{evaluate, make_optimizer};
use crate::models::build;
use crate::runner::Runner;

/// The graph every worker builds (the same on each, as between-graph replication needs).
struct TrainGraph {
    root: Scope,
    model: crate::models::Model,
    global_step: Variable,
    train_op: Operation,
    /// `(name, is_initialized)` of every global variable.
    ready: Vec<(String, Output)>,
    initializers: Vec<Operation>,
    done: Variable,
    done_inc: Operation,
}

fn build_graph(cfg: &DistConfig, worker_device: &str) -> Result<TrainGraph, Status> {
    let root = Scope::new_root();
    let setter =
        ReplicaDeviceSetter::for_cluster(&cfg.cluster, worker_device).with_strategy(cfg.ps_strategy).build()?;
    let s = root.with_device_fn(setter);
    let model = build(&s, cfg.train.model, cfg.train.seed as i64)?;
    let global_step = get_or_create_global_step(&s);
    let opt = make_optimizer(cfg.train.optimizer, cfg.train.learning_rate);
    let train_op = opt.minimize(&s, &model.loss, None, Some(&global_step))?;
    let vars = global_variables(root.graph())?;
    let ready = vars.iter().map(|v| (v.name().to_string(), v.is_initialized(&root))).collect();
    let initializers = vars.iter().map(|v| v.initializer()).collect();
    // How many workers finished: kept on the first ps task, outside the global variables so
    // checkpoints do not hold it.
    let home = if cfg.cluster.num_tasks("ps").unwrap_or(0) > 0 { "/job:ps/task:0" } else { "/job:worker/task:0" };
    let cs = root.with_device(home).sub("ferroflow_coordination");
    let opts = VariableOptions { trainable: false, collections: vec![], ..Default::default() };
    let done = Variable::with_options(&cs, "workers_done", ops::constant(&cs, 0i32), &opts);
    let done_inc = done.assign_add(&cs, ops::constant(&cs, 1i32));
    root.status()?;
    Ok(TrainGraph { root, model, global_step, train_op, ready, initializers, done, done_inc })
}

/// Indices (into `ready`) of the variables not initialized yet.
fn uninitialized(sess: &GrpcSession, g: &TrainGraph) -> Result<Vec<usize>, Status> {
    let fetches: Vec<&Output> = g.ready.iter().map(|(_, o)| o).collect();
    let out = sess.run_step(&[], &fetches, &[])?;
    let mut missing = Vec::new();
    for (i, t) in out.iter().enumerate() {
        if !t.scalar_value::<bool>()? {
            missing.push(i);
        }
    }
    Ok(missing)
}

fn names(g: &TrainGraph, idx: &[usize]) -> String {
    let mut v: Vec<&str> = idx.iter().take(5).map(|&i| g.ready[i].0.as_str()).collect();
    if idx.len() > 5 {
        v.push("…");
    }
    v.join(", ")
}

/// Trains as worker `cfg.task_index` until the global step reaches `cfg.train.steps`.
pub fn run_worker(cfg: &DistConfig, mut on_progress: impl FnMut(Progress)) -> Result<WorkerReport, Status> {
    let task = cfg.task_index;
    let num_workers = cfg.cluster.num_tasks("worker")?;
    let is_chief = task == 0;
    let server = Server::new(&cfg.cluster, "worker", task, ServerOptions::default())?;
    on_progress(Progress::Serving(server.target().to_string()));
    let mnist = read_mnist(&cfg.train.data_dir)?;
    let shard = mnist.train.shard(num_workers, task as usize)?;
    let worker_device = format!("/job:worker/task:{task}");
    let g = build_graph(cfg, &worker_device)?;
    let config = ConfigProto {
        device_filters: vec!["/job:ps".into(), worker_device.clone()],
        operation_timeout_in_ms: cfg.step_timeout.as_millis() as i64,
        ..Default::default()
    };
    let sess = GrpcSession::with_config(server.target(), g.root.graph(), config)?;
    // The first step creates the session, which waits (bounded) until every ps task answers.
    let ps = ps_targets(&cfg.cluster)?;
    if !ps.is_empty() {
        on_progress(Progress::Waiting(format!("the ps tasks to answer ({})", ps.join(", "))));
    }

    if is_chief {
        // Initialize what the ps tasks do not hold yet (a restarted chief keeps the state
        // the ps tasks still have instead of re-initializing it).
        let mut missing = Vec::new();
        wait_until(
            cfg.wait_timeout,
            || {
                missing = uninitialized(&sess, &g)?;
                Ok(None)
            },
            |w| on_progress(Progress::Waiting(format!("the parameter servers: {w}"))),
        )?;
        if !missing.is_empty() {
            let targets: Vec<&Operation> = missing.iter().map(|&i| &g.initializers[i]).collect();
            sess.run_step(&[], &[], &targets)?;
        }
        sess.run_step(&[], &[], &[&g.done.initializer()])?;
    } else {
        wait_until(
            cfg.wait_timeout,
            || {
                let missing = uninitialized(&sess, &g)?;
                Ok((!missing.is_empty()).then(|| {
                    format!(
                        "the chief (/job:worker/task:0) to initialize {} variables ({})",
                        missing.len(),
                        names(&g, &missing)
                    )
                }))
            },
            |w| on_progress(Progress::Waiting(w.to_string())),
        )?;
    }
    on_progress(Progress::Ready);

    let mut batches = shard.batches(cfg.train.batch, cfg.train.seed.wrapping_add(task as u64));
    let start = Instant::now();
    let gs = g.global_step.value();
    let mut local = 0usize;
    let mut loss = f32::NAN;
    let mut global = sess.run_step(&[], &[&gs], &[])?[0].scalar_value::<i64>()?;
    while global < cfg.train.steps as i64 {
        let (x, y) = batches.next_batch();
        let mut feeds = vec![(&g.model.x, x), (&g.model.y, y)];
        if let Some(kp) = &g.model.keep_prob {
            feeds.push((kp, Tensor::scalar(cfg.train.keep_prob)));
        }
        let out = sess.run_step(&feeds, &[&g.model.loss, &gs], &[&g.train_op])?;
        loss = out[0].scalar_value::<f32>()?;
        global = out[1].scalar_value::<i64>()?;
        local += 1;
        if !loss.is_finite() {
            return Err(Status::internal(format!(
                "loss became {loss} at global step {global} on {worker_device}; lower the learning rate"
            )));
        }
        on_progress(Progress::Step { local, global, loss });
    }
    let train_seconds = start.elapsed().as_secs_f64();
    sess.run_step(&[], &[], &[&g.done_inc])?;

    let mut test_accuracy = None;
    if is_chief {
        let acc = evaluate(&sess, &g.model, &mnist.test)?;
        on_progress(Progress::Evaluated(acc));
        test_accuracy = Some(acc);
        let done = g.done.value();
        let finished = wait_until(
            cfg.wait_timeout,
            || {
                let n = sess.run_step(&[], &[&done], &[])?[0].scalar_value::<i32>()? as usize;
                Ok((n < num_workers).then(|| format!("{} of {num_workers} workers to finish", num_workers - n)))
            },
            |w| on_progress(Progress::Waiting(w.to_string())),
        );
        if let Err(e) = finished {
            on_progress(Progress::Waiting(format!("stopping the ps tasks anyway: {}", e.message)));
        }
        drop(sess);
        on_progress(Progress::StoppingPs);
        for t in ps_targets(&cfg.cluster)? {
            if let Err(e) = shutdown_server(&t, "training finished") {
                tracing::warn!(target = %t, error = %e, "could not stop a ps task");
            }
        }
    }
    server.shutdown();
    Ok(WorkerReport { local_steps: local, global_step: global, final_loss: loss, test_accuracy, train_seconds })
}
