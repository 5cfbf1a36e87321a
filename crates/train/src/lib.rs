//! Training on top of ferroflow graphs: optimizers, checkpoints ([`saver::Saver`]),
//! summaries ([`summary::FileWriter`]), datasets, models and the local trainer.

pub mod data;
pub mod local;
pub mod models;
pub mod optimizer;
pub mod saver;
pub mod summary;

pub use optimizer::Optimizer;
pub use saver::{latest_checkpoint, Saver, SaverOptions};
pub use summary::FileWriter;
