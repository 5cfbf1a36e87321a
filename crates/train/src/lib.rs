//! Training on top of ferroflow graphs: optimizers, datasets, models and the local trainer.

pub mod data;
pub mod local;
pub mod models;
pub mod optimizer;

pub use optimizer::Optimizer;
