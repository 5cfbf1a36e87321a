//! A worker task of between-graph replicated training, on a [`MonitoredTrainingSession`]
//! (the same machinery a user's own training loop gets): the monitored session waits for
//! the ps tasks, lets the chief restore the latest checkpoint or initialize the model while
//! the others wait for it, writes the chief's checkpoints and summaries, and recovers from
//! a ps or worker task that restarted (a new session, restored or re-initialized, and the
//! step retried). This loop adds what the `ferroflow train` task does around it: its data
//! shard, the progress view, the sync replicas' aggregation loop, the final evaluation and
//! the chief stopping the ps tasks once every worker is done.

use std::sync::{Arc, Mutex};

use ferroflow_core::proto::ConfigProto;
use ferroflow_core::Status;
use ferroflow_distributed::{shutdown_server, GrpcSession, Server};
use ferroflow_graph::{get_or_create_global_step, global_variables, Operation, Output, Scope, Variable};

use super::chief::{build_nodes, record_accuracy};
use super::done::DoneCounter;
use super::{ps_targets, DistConfig, Progress, WorkerReport};
use crate::data::{read_mnist_shard, Mnist};
use crate::device_setter::ReplicaDeviceSetter;
use crate::local::{evaluate, make_optimizer};
use crate::models::build;
use crate::monitored::{Listener, MonitoredOptions, MonitoredTrainingSession, SessionEvent, SessionRunHook};
use crate::optimizer::{GradAndVar, Optimizer};
use crate::saver::Saver;
use crate::sync_replicas::{
    AllReduceReplicas, BroadcastHook, QueueRunnerOptions, ReplicaCheck, SyncHandle, SyncReplicas, SyncReplicasOptimizer,
};
use crate::train_loop::LoopSpec;

/// The graph every worker builds (the same on each, as between-graph replication needs).
struct TrainGraph {
    root: Scope,
    model: crate::models::Model,
    global_step: Variable,
    train_op: Operation,
    done: DoneCounter,
    /// The chief's saver.
    saver: Arc<Saver>,
    /// `--sync`: the synchronous replicas' ops (`train_op` is then theirs).
    sync: Option<SyncReplicas>,
    /// `--sync --all_reduce`: the all-reduce replicas' nodes.
    all_reduce: Option<AllReduceNodes>,
}

/// What all-reduce training adds to a worker's graph.
struct AllReduceNodes {
    /// Worker 0's variables to every replica.
    broadcast: Operation,
    /// The end-of-training check that every replica holds the same variables.
    check: ReplicaCheck,
    /// The global variables, in graph order (the same on every worker).
    vars: Vec<Variable>,
    /// The global step read after this step's update.
    step_after: Output,
}

/// Gradients of `loss` with a value, paired with their variables.
fn gradients(opt: &dyn Optimizer, s: &Scope, loss: &Output) -> Result<Vec<GradAndVar>, Status> {
    Ok(opt.compute_gradients(s, loss, None)?.into_iter().filter_map(|(g, v)| g.map(|g| (g, v))).collect())
}

/// The graph of an all-reduce replica: everything on this worker's task, the gradients
/// averaged over the workers before they are applied.
fn build_all_reduce_graph(cfg: &DistConfig, worker_device: &str) -> Result<TrainGraph, Status> {
    let root = Scope::new_root();
    let s = root.with_device(worker_device);
    let model = build(&s, cfg.train.model, cfg.train.seed as i64)?;
    let global_step = get_or_create_global_step(&s);
    let opt = make_optimizer(&s, &cfg.train, &global_step)?;
    let replicas = AllReduceReplicas::new(cfg.cluster.num_tasks("worker")?, cfg.task_index as usize)?;
    let mean = replicas.average_gradients(&s, &gradients(opt.as_ref(), &s, &model.loss)?)?;
    let train_op = opt.apply_gradients(&s, &mean, Some(&global_step), opt.name())?;
    let step_after = global_step.read_value(&s.with_control_deps(&[&train_op]));
    let saver = Arc::new(build_nodes(&root, &s, &model.loss, &model.accuracy, &model.logits)?);
    let done = DoneCounter::build(&root, &cfg.cluster);
    let vars = global_variables(root.graph())?;
    let broadcast = replicas.broadcast_variables(&s, &vars)?;
    let check = replicas.check_nodes(&s)?;
    root.status()?;
    let all_reduce = Some(AllReduceNodes { broadcast, check, vars, step_after });
    Ok(TrainGraph { root, model, global_step, train_op, done, saver, sync: None, all_reduce })
}

fn build_graph(cfg: &DistConfig, worker_device: &str) -> Result<TrainGraph, Status> {
    if cfg.all_reduce {
        return build_all_reduce_graph(cfg, worker_device);
    }
    let root = Scope::new_root();
    let setter =
        ReplicaDeviceSetter::for_cluster(&cfg.cluster, worker_device).with_strategy(cfg.ps_strategy).build()?;
    let s = root.with_device_fn(setter);
    let model = build(&s, cfg.train.model, cfg.train.seed as i64)?;
    let global_step = get_or_create_global_step(&s);
    let opt = make_optimizer(&s, &cfg.train, &global_step)?;
    let (train_op, sync) = if cfg.sync {
        // TensorFlow's synchronous replication: every worker's gradients are aggregated
        // (`replicas_to_aggregate = total_num_replicas`), one shared token queue.
        let workers = cfg.cluster.num_tasks("worker")?;
        let sro = SyncReplicasOptimizer::new(opt, workers, workers).with_token_timeout(cfg.step_timeout);
        let gv = gradients(sro.inner(), &s, &model.loss)?;
        let replicas = sro.apply_gradients(&s, &gv, &global_step)?;
        (replicas.train_op.clone(), Some(replicas))
    } else {
        (opt.minimize(&s, &model.loss, None, Some(&global_step))?, None)
    };
    let saver = Arc::new(build_nodes(&root, &s, &model.loss, &model.accuracy, &model.logits)?);
    let done = DoneCounter::build(&root, &cfg.cluster);
    root.status()?;
    Ok(TrainGraph { root, model, global_step, train_op, done, saver, sync, all_reduce: None })
}

/// How many times a step is retried with a new session after a task failed.
const MAX_RECOVERIES: usize = 20;

/// A progress callback shared by the loop and the monitored session's listener.
type SharedProgress = Arc<Mutex<dyn FnMut(Progress) + Send>>;

fn say(p: &SharedProgress, e: Progress) {
    (p.lock().unwrap_or_else(|e| e.into_inner()))(e)
}

/// The monitored session's events as progress.
fn listener(p: &SharedProgress) -> Listener {
    let p = p.clone();
    Arc::new(move |e| {
        say(
            &p,
            match e {
                SessionEvent::Waiting(w) => Progress::Waiting(w),
                SessionEvent::Restored(c) => Progress::Restored(c),
                SessionEvent::Ready => Progress::Ready,
                SessionEvent::Recovering(why) => Progress::Recovering(why),
                SessionEvent::Saved(c) => Progress::Saved(c),
            },
        )
    })
}

/// Trains as worker `cfg.task_index` until the global step reaches `cfg.train.steps`.
pub fn run_worker(
    cfg: &DistConfig,
    on_progress: impl FnMut(Progress) + Send + 'static,
) -> Result<WorkerReport, Status> {
    let progress: SharedProgress = Arc::new(Mutex::new(on_progress));
    let task = cfg.task_index;
    let num_workers = cfg.cluster.num_tasks("worker")?;
    let is_chief = task == 0;
    let server = Server::new(&cfg.cluster, "worker", task, cfg.transport.server_options())?;
    say(&progress, Progress::Serving(server.target().to_string()));
    // Only this worker's shard of the training set is read into memory.
    let Mnist { train: shard, test } = read_mnist_shard(&cfg.train.data_dir, num_workers, task as usize)?;
    let worker_device = format!("/job:worker/task:{task}");
    let g = build_graph(cfg, &worker_device)?;
    // An all-reduce replica also reaches worker 0 (the finished-workers counter without ps).
    let mut device_filters = vec!["/job:ps".to_string(), worker_device.clone()];
    if g.all_reduce.is_some() && task != 0 {
        device_filters.push("/job:worker/task:0".into());
    }
    let config = ConfigProto {
        device_filters,
        operation_timeout_in_ms: cfg.step_timeout.as_millis() as i64,
        graph_options: (!cfg.train.fusion).then(|| ferroflow_core::proto::GraphOptions {
            rewrite_options: Some(ferroflow_core::proto::RewriterConfig { remapping: 2, ..Default::default() }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let last_step = cfg.train.steps as i64;
    let mut hooks: Vec<Box<dyn SessionRunHook>> = Vec::new();
    let mut sync: Option<SyncHandle> = None;
    if let Some(replicas) = &g.sync {
        let (target, graph, config) = (server.target().to_string(), g.root.graph().clone(), config.clone());
        let open = Box::new(move || {
            GrpcSession::with_config(&target, &graph, config.clone())
                .map(|s| Arc::new(s) as Arc<dyn ferroflow_runtime::StepRunner + Send + Sync>)
        });
        let runner = QueueRunnerOptions { open, aggregation_timeout: cfg.wait_timeout, last_step: Some(last_step) };
        let hook = replicas.make_session_run_hook(&g.root, is_chief, -1, runner)?;
        sync = Some(hook.handle());
        hooks.push(Box::new(hook));
    }
    if let Some(ar) = &g.all_reduce {
        hooks.push(Box::new(BroadcastHook::new(&ar.broadcast, cfg.wait_timeout)));
        if num_workers > 1 {
            say(&progress, Progress::Waiting(format!("the other {} workers to join the replicas", num_workers - 1)));
        }
    }
    let ps = ps_targets(cfg)?;
    // The first step creates the session, which waits (bounded) until every ps task answers.
    if !ps.is_empty() {
        say(&progress, Progress::Waiting(format!("the ps tasks to answer ({})", ps.join(", "))));
    }
    let mut mts = MonitoredTrainingSession::new(
        &g.root,
        MonitoredOptions {
            master: server.target().to_string(),
            // Every all-reduce replica initializes its own variables (worker 0's then
            // reach it by the broadcast hook); only the chief restores and saves.
            is_chief: is_chief || g.all_reduce.is_some(),
            checkpoint_dir: if is_chief { cfg.logdir.clone() } else { None },
            // The counter first: the sync hook's chief reads the global step after it.
            chief_only_hooks: if is_chief { vec![g.done.chief_hook()] } else { Vec::new() },
            hooks,
            save_checkpoint_secs: Some(cfg.save_every),
            save_checkpoint_steps: None,
            save_summaries_steps: Some(cfg.summary_steps.max(1) as u64),
            wait_timeout: cfg.wait_timeout,
            step_timeout: cfg.step_timeout,
            max_recoveries: MAX_RECOVERIES,
            // Async: a step that hit its deadline waited for a peer it could not reach;
            // retry it on a new session once the peer answers. Sync steps are not retried
            // this way (a retried step would send its gradients twice).
            recover_deadlines: !cfg.sync && !cfg.all_reduce,
            config,
            session_factory: None,
            saver: Some(g.saver.clone()),
            listener: Some(listener(&progress)),
        },
    )?;

    let mut batches = shard.batches(cfg.train.batch, cfg.train.seed.wrapping_add(task as u64));
    let gs = g.global_step.value();
    // Sync: the token is the global step of the update this step waited for.
    let token = g.sync.as_ref().map(|r| r.train_op.output(0));
    let spec = LoopSpec {
        model: &g.model,
        train_op: &g.train_op,
        // All-reduce: the step after the update, so every replica stops at the same step.
        global_step: token.as_ref().or(g.all_reduce.as_ref().map(|a| &a.step_after)).unwrap_or(&gs),
        keep_prob: cfg.train.keep_prob,
        trace: cfg.train.trace.as_ref(),
        last_step,
        device: &worker_device,
    };
    let start = mts.raw_session()?.run(&[], &[&gs], &[])?[0].scalar_value::<i64>()?;
    let explain = |e| match &sync {
        Some(h) => h.explain(e),
        None => e,
    };
    let end = crate::train_loop::train(&mut mts, &spec, &mut batches, start, explain, |local, global, loss| {
        say(&progress, Progress::Step { local, global, loss })
    })?;
    if let Some(h) = &sync {
        h.stop()?;
    }
    let replica_checksum = match &g.all_reduce {
        Some(ar) => Some(ar.check.verify(mts.raw_session()?, &ar.vars, cfg.wait_timeout)?),
        None => None,
    };
    g.done.finished(mts.raw_session()?)?;
    if g.all_reduce.is_some() && !is_chief {
        // A replica's server answers its peers' last collective reads until every worker
        // is done (without ps the counter is on the chief's task: once it is gone, everyone
        // is).
        let all = g.done.wait_all_or_gone(mts.raw_session()?, num_workers, cfg.wait_timeout);
        if let Err(e) = all {
            tracing::debug!(error = %e, "waiting for the other replicas to finish");
        }
    }

    let mut test_accuracy = None;
    if is_chief {
        let sess = mts.raw_session()?;
        let acc = evaluate(sess, &g.model, &test)?;
        say(&progress, Progress::Evaluated(acc));
        test_accuracy = Some(acc);
        let finished =
            g.done.wait_all(sess, num_workers, cfg.wait_timeout, |w| say(&progress, Progress::Waiting(w.to_string())));
        if let Err(e) = finished {
            say(&progress, Progress::Waiting(format!("stopping the ps tasks anyway: {}", e.message)));
        }
    }
    // The chief's last checkpoint and summaries.
    mts.close()?;
    if is_chief {
        if let (Some(dir), Some(acc)) = (&cfg.logdir, test_accuracy) {
            record_accuracy(dir, acc, end.global_step)?;
        }
        if !ps.is_empty() {
            say(&progress, Progress::StoppingPs);
        }
        for t in ps {
            if let Err(e) = shutdown_server(&t, "training finished") {
                tracing::warn!(target = %t, error = %e, "could not stop a ps task");
            }
        }
    }
    server.shutdown();
    Ok(WorkerReport {
        local_steps: end.local_steps,
        global_step: end.global_step,
        final_loss: end.final_loss,
        test_accuracy,
        train_seconds: end.train_seconds,
        steady_steps_per_sec: end.steady_steps_per_sec,
        replica_checksum,
    })
}
