//! A worker task of between-graph replicated training.

use std::sync::Arc;
use std::time::Instant;

use ferroflow_core::proto::ConfigProto;
use ferroflow_core::{Code, Status, Tensor};
use ferroflow_distributed::{shutdown_server, GrpcSession, Server};
use ferroflow_graph::{
    get_or_create_global_step, global_variables, ops, Operation, Output, Scope, Variable, VariableOptions,
};

use super::chief::{build_nodes, Chief, ChiefNodes};
use super::ready::wait_until;
use super::sync::{self, SyncNodes};
use super::{ps_targets, DistConfig, Progress, WorkerReport, WARMUP_STEPS};
use crate::data::{read_mnist_shard, Mnist};
use crate::device_setter::ReplicaDeviceSetter;
use crate::local::{evaluate, make_optimizer};
use crate::models::build;
use crate::optimizer::ChiefQueueRunner;
use crate::runner::run_step_maybe_traced;

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
    done_ready: Output,
    done_init: Operation,
    done_inc: Operation,
    chief_nodes: ChiefNodes,
    /// `--sync`: the synchronous replicas' ops (`train_op` is then theirs).
    sync: Option<SyncNodes>,
}

fn build_graph(cfg: &DistConfig, worker_device: &str) -> Result<TrainGraph, Status> {
    let root = Scope::new_root();
    let setter =
        ReplicaDeviceSetter::for_cluster(&cfg.cluster, worker_device).with_strategy(cfg.ps_strategy).build()?;
    let s = root.with_device_fn(setter);
    let model = build(&s, cfg.train.model, cfg.train.seed as i64)?;
    let global_step = get_or_create_global_step(&s);
    let opt = make_optimizer(&s, &cfg.train, &global_step)?;
    let (train_op, sync) = if cfg.sync {
        let workers = cfg.cluster.num_tasks("worker")?;
        let n = sync::build(&s, opt, &model.loss, &global_step, workers, cfg.task_index as usize, cfg.step_timeout)?;
        (n.replicas.train_op.clone(), Some(n))
    } else {
        (opt.minimize(&s, &model.loss, None, Some(&global_step))?, None)
    };
    let chief_nodes = build_nodes(&root, &s, &model.loss, &model.accuracy, &model.logits)?;
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
    let done_ready = done.is_initialized(&cs);
    let done_init = done.initializer();
    root.status()?;
    Ok(TrainGraph {
        root,
        model,
        global_step,
        train_op,
        ready,
        initializers,
        done,
        done_ready,
        done_init,
        done_inc,
        chief_nodes,
        sync,
    })
}

/// Indices (into `ready`) of the variables not initialized yet.
fn uninitialized(sess: &GrpcSession, g: &TrainGraph) -> Result<Vec<usize>, Status> {
    let fetches: Vec<&Output> = g.ready.iter().map(|(_, o)| o).collect();
    let out = sess.run(&[], &fetches, &[])?;
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

/// How many times a worker starts a new session after a ps task failed.
const MAX_RECOVERIES: usize = 20;

/// Opens a session on this worker's master and gets the model ready: the chief
/// initializes what the ps tasks do not hold (a restarted chief, or a chief after a ps
/// restart, keeps whatever state is still there), the others wait for the chief.
fn open_session(
    target: &str,
    g: &TrainGraph,
    config: &ConfigProto,
    is_chief: bool,
    cfg: &DistConfig,
    chief: Option<&Chief>,
    on_progress: &mut impl FnMut(Progress),
) -> Result<Arc<GrpcSession>, Status> {
    let sess = Arc::new(GrpcSession::with_config(target, g.root.graph(), config.clone())?);
    let ps = ps_targets(cfg)?;
    // The first step creates the session, which waits (bounded) until every ps task answers.
    if !ps.is_empty() {
        on_progress(Progress::Waiting(format!("the ps tasks to answer ({})", ps.join(", "))));
    }
    if is_chief {
        let mut missing = Vec::new();
        let mut done_missing = false;
        wait_until(
            cfg.wait_timeout,
            || {
                missing = uninitialized(&sess, g)?;
                done_missing = !sess.run(&[], &[&g.done_ready], &[])?[0].scalar_value::<bool>()?;
                Ok(None)
            },
            |w| on_progress(Progress::Waiting(format!("the parameter servers: {w}"))),
        )?;
        if let (false, Some(c)) = (missing.is_empty(), chief) {
            if let Some(p) = c.restore_latest(&*sess, &g.chief_nodes)? {
                on_progress(Progress::Restored(p));
                missing = uninitialized(&sess, g)?;
            }
        }
        let mut targets: Vec<&Operation> = missing.iter().map(|&i| &g.initializers[i]).collect();
        if done_missing {
            targets.push(&g.done_init);
        }
        if !targets.is_empty() {
            sess.run(&[], &[], &targets)?;
        }
    } else {
        wait_until(
            cfg.wait_timeout,
            || {
                let missing = uninitialized(&sess, g)?;
                Ok((!missing.is_empty()).then(|| {
                    format!(
                        "the chief (/job:worker/task:0) to initialize {} variables ({})",
                        missing.len(),
                        names(g, &missing)
                    )
                }))
            },
            |w| on_progress(Progress::Waiting(w.to_string())),
        )?;
    }
    if let Some(n) = &g.sync {
        sync::init_replica(&sess, n, is_chief)?;
    }
    on_progress(Progress::Ready);
    Ok(sess)
}

/// Trains as worker `cfg.task_index` until the global step reaches `cfg.train.steps`.
pub fn run_worker(cfg: &DistConfig, mut on_progress: impl FnMut(Progress)) -> Result<WorkerReport, Status> {
    let task = cfg.task_index;
    let num_workers = cfg.cluster.num_tasks("worker")?;
    let is_chief = task == 0;
    let server = Server::new(&cfg.cluster, "worker", task, cfg.transport.server_options())?;
    on_progress(Progress::Serving(server.target().to_string()));
    // Only this worker's shard of the training set is read into memory.
    let Mnist { train: shard, test } = read_mnist_shard(&cfg.train.data_dir, num_workers, task as usize)?;
    let worker_device = format!("/job:worker/task:{task}");
    let g = build_graph(cfg, &worker_device)?;
    let config = ConfigProto {
        device_filters: vec!["/job:ps".into(), worker_device.clone()],
        operation_timeout_in_ms: cfg.step_timeout.as_millis() as i64,
        graph_options: (!cfg.train.fusion).then(|| ferroflow_core::proto::GraphOptions {
            rewrite_options: Some(ferroflow_core::proto::RewriterConfig { remapping: 2 }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut chief = match (&cfg.logdir, is_chief) {
        (Some(dir), true) => {
            Some(Chief::new(dir.clone(), cfg.save_every, cfg.summary_steps, &g.root.graph().to_graph_def())?)
        }
        _ => None,
    };
    let mut sess = open_session(server.target(), &g, &config, is_chief, cfg, chief.as_ref(), &mut on_progress)?;
    let last_step = cfg.train.steps as i64;
    // The chief's aggregation loop in sync mode (restarted with every new session).
    let start_runner = |sess: &Arc<GrpcSession>| -> Result<Option<ChiefQueueRunner>, Status> {
        match (&g.sync, is_chief) {
            (Some(n), true) => {
                let global = sess.run(&[], &[&g.global_step.value()], &[])?[0].scalar_value::<i64>()?;
                sync::start_chief_runner(sess.clone(), n, global, last_step, cfg.wait_timeout).map(Some)
            }
            _ => Ok(None),
        }
    };
    let mut runner = start_runner(&sess)?;

    let mut batches = shard.batches(cfg.train.batch, cfg.train.seed.wrapping_add(task as u64));
    let start = Instant::now();
    let gs = g.global_step.value();
    let mut local = 0usize;
    let mut loss = f32::NAN;
    let mut recoveries = 0usize;
    let mut warm = None;
    let mut global = sess.run(&[], &[&gs], &[])?[0].scalar_value::<i64>()?;
    while global < cfg.train.steps as i64 {
        let (x, y) = batches.next_batch();
        let mut feeds = vec![(&g.model.x, x), (&g.model.y, y)];
        if let Some(kp) = &g.model.keep_prob {
            feeds.push((kp, Tensor::scalar(cfg.train.keep_prob)));
        }
        // Sync: the token is the global step of the update this step waited for.
        let mut fetches = vec![&g.model.loss, g.sync.as_ref().map_or(&gs, |n| &n.token)];
        let want_summary = match (&chief, &g.chief_nodes.summary) {
            (Some(c), Some(sm)) if (local + 1).is_multiple_of(c.summary_every) => {
                fetches.push(sm);
                true
            }
            _ => false,
        };
        let out = match run_step_maybe_traced(
            &*sess,
            cfg.train.trace.as_ref(),
            local + 1,
            &feeds,
            &fetches,
            &[&g.train_op],
        ) {
            Ok(out) => out,
            // A ps task restarted (its state is gone) or is down: start a new session,
            // let the chief re-initialize what is missing, and go on.
            Err(e) if matches!(e.code, Code::Aborted | Code::Unavailable) && recoveries < MAX_RECOVERIES => {
                recoveries += 1;
                on_progress(Progress::Recovering(format!("{} ({:?})", e.message, e.code)));
                if let Some(r) = runner.take() {
                    // It failed the same way (or is about to); its error is this one.
                    let _ = r.stop();
                }
                drop(sess);
                sess = open_session(server.target(), &g, &config, is_chief, cfg, chief.as_ref(), &mut on_progress)?;
                runner = start_runner(&sess)?;
                global = sess.run(&[], &[&gs], &[])?[0].scalar_value::<i64>()?;
                continue;
            }
            Err(e) => return Err(sync_error(e, &g, runner.take())),
        };
        loss = out[0].scalar_value::<f32>()?;
        global = out[1].scalar_value::<i64>()?;
        local += 1;
        if local == WARMUP_STEPS {
            warm = Some(Instant::now());
        }
        if !loss.is_finite() {
            return Err(Status::internal(format!(
                "loss became {loss} at global step {global} on {worker_device}; lower the learning rate"
            )));
        }
        on_progress(Progress::Step { local, global, loss });
        if let Some(c) = chief.as_mut() {
            if want_summary {
                c.add_summary(&out[2], global)?;
            }
            if let Some(p) = c.maybe_save(&*sess, &g.chief_nodes, global, false)? {
                on_progress(Progress::Saved(p));
            }
        }
    }
    if let Some(r) = runner.take() {
        r.stop().map_err(|e| e.context("the sync replicas aggregation loop failed"))?;
    }
    // The training loop's time: the final checkpoint below is not part of it.
    let train_seconds = start.elapsed().as_secs_f64();
    let steady_steps_per_sec = warm
        .map(|t: Instant| t.elapsed().as_secs_f64())
        .filter(|_| local > WARMUP_STEPS)
        .map(|secs| (local - WARMUP_STEPS) as f64 / secs.max(1e-9));
    if let Some(c) = chief.as_mut() {
        if let Some(p) = c.maybe_save(&*sess, &g.chief_nodes, global, true)? {
            on_progress(Progress::Saved(p));
        }
    }
    sess.run(&[], &[], &[&g.done_inc])?;

    let mut test_accuracy = None;
    if is_chief {
        let acc = evaluate(&*sess, &g.model, &test)?;
        on_progress(Progress::Evaluated(acc));
        if let Some(c) = chief.as_mut() {
            c.finish(acc, global)?;
        }
        test_accuracy = Some(acc);
        let done = g.done.value();
        let finished = wait_until(
            cfg.wait_timeout,
            || {
                let n = sess.run(&[], &[&done], &[])?[0].scalar_value::<i32>()? as usize;
                Ok((n < num_workers).then(|| format!("{} of {num_workers} workers to finish", num_workers - n)))
            },
            |w| on_progress(Progress::Waiting(w.to_string())),
        );
        if let Err(e) = finished {
            on_progress(Progress::Waiting(format!("stopping the ps tasks anyway: {}", e.message)));
        }
        drop(sess);
        on_progress(Progress::StoppingPs);
        for t in ps_targets(cfg)? {
            if let Err(e) = shutdown_server(&t, "training finished") {
                tracing::warn!(target = %t, error = %e, "could not stop a ps task");
            }
        }
    }
    server.shutdown();
    Ok(WorkerReport {
        local_steps: local,
        global_step: global,
        final_loss: loss,
        test_accuracy,
        train_seconds,
        steady_steps_per_sec,
    })
}

/// A failed step in sync mode: the chief's aggregation loop's own error when it stopped
/// (that is why tokens stopped coming), else the step's error with the likely cause.
fn sync_error(e: Status, g: &TrainGraph, runner: Option<ChiefQueueRunner>) -> Status {
    let Some(n) = &g.sync else { return e };
    if let Some(r) = runner {
        if r.is_finished() {
            if let Err(re) = r.stop() {
                return re.context(format!("a training step failed ({})", e.message));
            }
        }
    }
    n.replicas.explain(e)
}
