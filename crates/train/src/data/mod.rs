//! Datasets: the MNIST IDX reader with shuffling, batching and sharding.

mod idx;
mod mnist;

pub use idx::{parse_images, parse_labels};
pub use mnist::{read_mnist, read_mnist_shard, Batches, DataSet, Mnist};
