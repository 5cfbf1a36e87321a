//! Datasets: the MNIST IDX reader with shuffling, batching and sharding.

mod mnist;
mod rng;

pub use mnist::{parse_images, parse_labels, read_mnist, Batches, DataSet, Mnist};
pub use rng::SplitMix64;
