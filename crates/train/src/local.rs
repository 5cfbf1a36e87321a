//! Single-process training on MNIST (`ferroflow train` without a cluster).

use std::path::PathBuf;
use std::sync::Arc;

use ferroflow_core::Status;
use ferroflow_graph::{get_or_create_global_step, Scope, Variable};
use ferroflow_runtime::{DirectSession, LOCAL_DEVICE};

use crate::data::{read_mnist, DataSet};
use crate::learning_rate_decay::{exponential_decay, ExponentialDecay};
use crate::models::{build, Model, ModelKind};
use crate::monitored::{BoxSession, MonitoredOptions, MonitoredTrainingSession, SessionFactory};
use crate::optimizer::{
    Adadelta, Adagrad, AdagradDa, Adam, Ftrl, GradientDescent, LearningRate, Momentum, Optimizer, ProximalAdagrad,
    ProximalGradientDescent, RmsProp,
};
use crate::train_loop::LoopSpec;
use ferroflow_runtime::StepRunner;

/// Which optimizer to train with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptimizerKind {
    /// Plain SGD.
    Sgd,
    /// Momentum 0.9.
    Momentum,
    /// Adagrad.
    Adagrad,
    /// Adam.
    Adam,
    /// RMSProp.
    RmsProp,
    /// Adadelta.
    Adadelta,
    /// FTRL-Proximal.
    Ftrl,
    /// Proximal gradient descent.
    ProximalSgd,
    /// Proximal Adagrad.
    ProximalAdagrad,
    /// Adagrad dual averaging (reads the global step).
    AdagradDa,
}

impl std::str::FromStr for OptimizerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "sgd" => OptimizerKind::Sgd,
            "momentum" => OptimizerKind::Momentum,
            "adagrad" => OptimizerKind::Adagrad,
            "adam" => OptimizerKind::Adam,
            "rmsprop" => OptimizerKind::RmsProp,
            "adadelta" => OptimizerKind::Adadelta,
            "ftrl" => OptimizerKind::Ftrl,
            "proximal_sgd" => OptimizerKind::ProximalSgd,
            "proximal_adagrad" => OptimizerKind::ProximalAdagrad,
            "adagrad_da" => OptimizerKind::AdagradDa,
            _ => {
                return Err(format!(
                    "unknown optimizer '{s}': expected sgd, momentum, adagrad, adam, rmsprop, adadelta, ftrl, \
                     proximal_sgd, proximal_adagrad or adagrad_da"
                ))
            }
        })
    }
}

/// Creates the optimizer `cfg` names, with its learning rate: a constant, or with
/// `cfg.lr_decay` TensorFlow's `exponential_decay` of the global step (AdagradDA also reads
/// `global_step`).
pub fn make_optimizer(s: &Scope, cfg: &TrainConfig, global_step: &Variable) -> Result<Box<dyn Optimizer>, Status> {
    let lr: LearningRate = match cfg.lr_decay {
        Some(d) => exponential_decay(s, cfg.learning_rate, global_step.value(), d)?.into(),
        None => cfg.learning_rate.into(),
    };
    Ok(match cfg.optimizer {
        OptimizerKind::Sgd => Box::new(GradientDescent::new(lr)),
        OptimizerKind::Momentum => Box::new(Momentum::new(lr, 0.9)),
        OptimizerKind::Adagrad => Box::new(Adagrad::new(lr)),
        OptimizerKind::Adam => Box::new(Adam::new(lr)),
        OptimizerKind::RmsProp => Box::new(RmsProp::new(lr)),
        OptimizerKind::Adadelta => Box::new(Adadelta::new(lr)),
        OptimizerKind::Ftrl => Box::new(Ftrl::new(lr)),
        OptimizerKind::ProximalSgd => Box::new(ProximalGradientDescent::new(lr)),
        OptimizerKind::ProximalAdagrad => Box::new(ProximalAdagrad::new(lr)),
        OptimizerKind::AdagradDa => Box::new(AdagradDa::new(lr, global_step)),
    })
}

/// What to train.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    /// Model.
    pub model: ModelKind,
    /// Optimizer.
    pub optimizer: OptimizerKind,
    /// Learning rate (the initial one with `lr_decay`).
    pub learning_rate: f64,
    /// Decay the learning rate exponentially with the global step.
    pub lr_decay: Option<ExponentialDecay>,
    /// Training steps.
    pub steps: usize,
    /// Batch size.
    pub batch: usize,
    /// Dropout keep probability during training (CNN).
    pub keep_prob: f32,
    /// Seed for initialization and shuffling.
    pub seed: u64,
    /// Directory with the four MNIST `.gz` files.
    pub data_dir: PathBuf,
    /// Fuse MatMul/Conv2D + BiasAdd (+ Relu) into one kernel (TensorFlow's remapper; the
    /// results are the same either way).
    pub fusion: bool,
    /// Trace one step into a Chrome trace file.
    pub trace: Option<crate::runner::TraceRequest>,
}

/// Outcome of a training run.
#[derive(Clone, Debug)]
pub struct TrainReport {
    /// Steps run.
    pub steps: usize,
    /// Loss of the last step.
    pub final_loss: f32,
    /// Accuracy on the 10k test images.
    pub test_accuracy: f64,
    /// Wall time of the training loop (excluding evaluation).
    pub train_seconds: f64,
    /// Steps per second after the first [`crate::WARMUP_STEPS`], when more steps than that ran.
    pub steady_steps_per_sec: Option<f64>,
}

/// Evaluates `model.accuracy` over a data set in chunks.
pub fn evaluate(sess: &(impl StepRunner + ?Sized), model: &Model, data: &DataSet) -> Result<f64, Status> {
    let mut correct = 0.0;
    for chunk in data.chunks(1000) {
        let (x, y) = chunk?;
        let n = y.num_elements() as f64;
        let acc = sess.run(&[(&model.x, x), (&model.y, y)], &[&model.accuracy], &[])?[0].scalar_value::<f32>()?;
        correct += acc as f64 * n;
    }
    Ok(correct / data.len() as f64)
}

/// Trains in this process, on a [`MonitoredTrainingSession`] over a `DirectSession` (the
/// loop distributed workers run); `on_step(step, loss)` is called after every step.
pub fn train_local(cfg: &TrainConfig, mut on_step: impl FnMut(usize, f32)) -> Result<TrainReport, Status> {
    let mnist = read_mnist(&cfg.data_dir)?;
    let s = Scope::new_root();
    let model = build(&s, cfg.model, cfg.seed as i64)?;
    let gs = get_or_create_global_step(&s);
    let opt = make_optimizer(&s, cfg, &gs)?;
    let train = opt.minimize(&s, &model.loss, None, Some(&gs))?;
    // Every update counts one global step: read it after the update.
    let gs_after = gs.read_value(&s.with_control_deps(&[&train]));
    s.status()?;
    let fusion = cfg.fusion;
    let factory: SessionFactory = Arc::new(move |g| {
        let sess = DirectSession::new(g);
        sess.set_fusion(fusion);
        Ok(Box::new(sess) as BoxSession)
    });
    let opts =
        MonitoredOptions { session_factory: Some(factory), step_timeout: LOCAL_STEP_TIMEOUT, ..Default::default() };
    let mut mts = MonitoredTrainingSession::new(&s, opts)?;
    let mut batches = mnist.train.batches(cfg.batch, cfg.seed);
    let spec = LoopSpec {
        model: &model,
        train_op: &train,
        global_step: &gs_after,
        keep_prob: cfg.keep_prob,
        trace: cfg.trace.as_ref(),
        last_step: cfg.steps as i64,
        device: LOCAL_DEVICE,
    };
    let end = crate::train_loop::train(&mut mts, &spec, &mut batches, 0, |e| e, |local, _, loss| on_step(local, loss))?;
    let test_accuracy = evaluate(mts.raw_session()?, &model, &mnist.test)?;
    mts.close()?;
    Ok(TrainReport {
        steps: end.local_steps,
        final_loss: end.final_loss,
        test_accuracy,
        train_seconds: end.train_seconds,
        steady_steps_per_sec: end.steady_steps_per_sec,
    })
}

/// A local step's deadline (generous: a CNN step on a slow host takes well under a second).
const LOCAL_STEP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

#[cfg(test)]
mod tests {
    use super::*;

    /// The optimizers added last each train the MLP on the bundled MNIST: a few hundred
    /// steps reach a test accuracy far above chance (10 %).
    #[test]
    fn proximal_and_dual_averaging_optimizers_train_the_mlp() {
        for (name, lr) in [("proximal_sgd", 0.1), ("proximal_adagrad", 0.1), ("adagrad_da", 0.1)] {
            let cfg = TrainConfig {
                model: ModelKind::Mlp,
                optimizer: name.parse().unwrap(),
                learning_rate: lr,
                lr_decay: None,
                steps: 300,
                batch: 100,
                keep_prob: 1.0,
                seed: 1,
                data_dir: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/mnist")),
                fusion: true,
                trace: None,
            };
            let mut first = None;
            let r = train_local(&cfg, |_, loss| {
                first.get_or_insert(loss);
            })
            .unwrap();
            println!("{name}: loss {:?} -> {}, test accuracy {}", first, r.final_loss, r.test_accuracy);
            assert!(r.final_loss < first.unwrap(), "{name}: loss {first:?} -> {}", r.final_loss);
            assert!(r.test_accuracy > 0.85, "{name}: test accuracy {}", r.test_accuracy);
        }
        assert!("adagrad_dA".parse::<OptimizerKind>().unwrap_err().contains("proximal_adagrad or adagrad_da"));
    }

    /// `trace`: the step named is traced and written as a Chrome trace with the model's ops.
    #[test]
    fn traces_the_step_asked_for() {
        let path = std::env::temp_dir().join(format!("ff-trace-{}.json", std::process::id()));
        let cfg = TrainConfig {
            model: ModelKind::Mlp,
            optimizer: "sgd".parse().unwrap(),
            learning_rate: 0.1,
            lr_decay: None,
            steps: 3,
            batch: 10,
            keep_prob: 1.0,
            seed: 1,
            data_dir: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/mnist")),
            fusion: false,
            trace: Some(crate::runner::TraceRequest { step: 2, path: path.clone() }),
        };
        train_local(&cfg, |_, _| {}).unwrap();
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        std::fs::remove_file(&path).ok();
        let ops: Vec<&str> = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        for op in ["MatMul", "ResourceApplyGradientDescent", "SparseSoftmaxCrossEntropyWithLogits"] {
            assert!(ops.contains(&op), "{op} not in the trace: {ops:?}");
        }
    }
}
