//! Training on top of ferroflow graphs: optimizers, checkpoints ([`saver::Saver`]),
//! summaries ([`summary::FileWriter`]), datasets, models, the local trainer,
//! `replica_device_setter` and the distributed trainer ([`dist`]).

pub mod data;
pub mod device_setter;
pub mod dist;
pub mod learning_rate_decay;
pub mod local;
pub mod models;
pub mod monitored;
pub mod optimizer;
pub mod runner;
pub mod saver;
pub mod steady;
pub mod summary;
pub mod sync_replicas;
mod train_loop;

pub use device_setter::{replica_device_setter, PsStrategy, ReplicaDeviceSetter};
pub use learning_rate_decay::{exponential_decay, ExponentialDecay};
pub use monitored::{
    Listener, MonitoredOptions, MonitoredTrainingSession, SessionEvent, SessionRunHook, Supervisor, SupervisorOptions,
};
pub use optimizer::Optimizer;
pub use saver::{latest_checkpoint, Saver, SaverOptions};
pub use steady::{SteadyRate, WARMUP_STEPS};
pub use summary::FileWriter;
