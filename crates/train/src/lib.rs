//! Training on top of ferroflow graphs: optimizers, datasets, models, the local trainer and
//! `replica_device_setter` for between-graph replication.

pub mod data;
pub mod device_setter;
pub mod dist;
pub mod local;
pub mod models;
pub mod optimizer;
pub mod runner;

pub use device_setter::{replica_device_setter, PsStrategy, ReplicaDeviceSetter};
pub use optimizer::Optimizer;
