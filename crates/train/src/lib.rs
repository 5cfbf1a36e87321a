//! Training on top of ferroflow graphs: optimizers, datasets, models, savers, summaries
//! and supervised sessions.

pub mod data;
