//! The MNIST IDX files (gzip), read into memory, with shuffling, batching and per-worker
//! sharding.

use std::path::Path;

use ferroflow_core::{Status, Tensor};

use super::idx;
use ferroflow_core::SplitMix64;

/// Images (flattened 28×28, scaled to [0, 1]) and labels.
#[derive(Clone, Debug)]
pub struct DataSet {
    images: Pixels,
    labels: Vec<i64>,
    pixels: usize,
}

/// Pixel storage: MNIST's bytes stay bytes (a quarter of the memory of floats, and no
/// 188 MB of fresh pages to fault in per process) and become floats in [0, 1] per batch.
#[derive(Clone, Debug)]
enum Pixels {
    Bytes(Vec<u8>),
    Floats(Vec<f32>),
}

impl Pixels {
    /// Appends elements `range` as floats to `out`.
    fn extend_into(&self, range: std::ops::Range<usize>, out: &mut Vec<f32>) {
        match self {
            Pixels::Bytes(b) => {
                let (src, start) = (&b[range], out.len());
                out.resize(start + src.len(), 0.0);
                let dst = &mut out[start..];
                // Vectorized divisions (one per pixel, as TensorFlow's input pipeline scales).
                ferroflow_kernels::isa::vectorized(|| {
                    for (d, &p) in dst.iter_mut().zip(src) {
                        *d = p as f32 / 255.0;
                    }
                });
            }
            Pixels::Floats(f) => out.extend_from_slice(&f[range]),
        }
    }

    /// The elements of `ranges`, in order, in the same storage.
    fn select(&self, ranges: impl Iterator<Item = std::ops::Range<usize>> + Clone) -> Pixels {
        match self {
            Pixels::Bytes(b) => Pixels::Bytes(gather_ranges(b, ranges)),
            Pixels::Floats(f) => Pixels::Floats(gather_ranges(f, ranges)),
        }
    }
}

/// `data[r]` for every range, concatenated, in a buffer allocated once.
fn gather_ranges<T: Copy>(data: &[T], ranges: impl Iterator<Item = std::ops::Range<usize>> + Clone) -> Vec<T> {
    let mut out = Vec::with_capacity(ranges.clone().map(|r| r.len()).sum());
    for r in ranges {
        out.extend_from_slice(&data[r]);
    }
    out
}

/// The training (60k) and test (10k) sets.
#[derive(Clone, Debug)]
pub struct Mnist {
    /// Training set.
    pub train: DataSet,
    /// Test set.
    pub test: DataSet,
}

/// Examples `keep` selects from an image and a label file (both gzip IDX).
fn load(dir: &Path, images: &str, labels: &str, keep: &dyn Fn(usize) -> bool) -> Result<DataSet, Status> {
    let ip = dir.join(images);
    let lp = dir.join(labels);
    let labels = idx::read_labels(&lp)?;
    let imgs = idx::read_images(&ip, keep)?;
    if imgs.count != labels.len() {
        return Err(Status::data_loss(format!(
            "{} has {} images but {} has {} labels",
            ip.display(),
            imgs.count,
            lp.display(),
            labels.len()
        )));
    }
    let labels = labels.into_iter().enumerate().filter(|&(i, _)| keep(i)).map(|(_, l)| l).collect();
    Ok(DataSet { images: Pixels::Bytes(imgs.pixels), labels, pixels: imgs.per_image })
}

/// Reads the four standard MNIST files from `dir`.
pub fn read_mnist(dir: impl AsRef<Path>) -> Result<Mnist, Status> {
    read_mnist_shard(dir, 1, 0)
}

/// Reads the test set and the `index`-th of `num_shards` shards of the training set from
/// `dir` (the examples [`DataSet::shard`] selects), without holding the rest in memory.
pub fn read_mnist_shard(dir: impl AsRef<Path>, num_shards: usize, index: usize) -> Result<Mnist, Status> {
    if num_shards == 0 || index >= num_shards {
        return Err(Status::invalid_argument(format!("shard {index} of {num_shards} does not exist")));
    }
    let dir = dir.as_ref();
    Ok(Mnist {
        train: load(dir, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", &|i| i % num_shards == index)?,
        test: load(dir, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", &|_| true)?,
    })
}

impl DataSet {
    /// Builds a data set from flattened images and labels.
    pub fn new(images: Vec<f32>, labels: Vec<i64>, pixels: usize) -> Result<DataSet, Status> {
        if pixels == 0 || images.len() != labels.len() * pixels {
            return Err(Status::invalid_argument("images and labels disagree in count"));
        }
        Ok(DataSet { images: Pixels::Floats(images), labels, pixels })
    }

    /// Number of examples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Pixels per image.
    pub fn pixels(&self) -> usize {
        self.pixels
    }

    /// The `index`-th of `num_shards` disjoint, interleaved shards (worker `index` of
    /// `num_shards` trains on examples index, index + num_shards, …).
    pub fn shard(&self, num_shards: usize, index: usize) -> Result<DataSet, Status> {
        if num_shards == 0 || index >= num_shards {
            return Err(Status::invalid_argument(format!("shard {index} of {num_shards} does not exist")));
        }
        let p = self.pixels;
        let images = self.images.select((index..self.len()).step_by(num_shards).map(|i| i * p..(i + 1) * p));
        let labels = (index..self.len()).step_by(num_shards).map(|i| self.labels[i]).collect();
        Ok(DataSet { images, labels, pixels: p })
    }

    /// Examples `idx` as (images `[n, pixels]` float32, labels `[n]` int64).
    pub fn gather(&self, idx: &[usize]) -> Result<(Tensor, Tensor), Status> {
        let mut im = Vec::with_capacity(idx.len() * self.pixels);
        let mut lb = Vec::with_capacity(idx.len());
        for &i in idx {
            self.images.extend_into(i * self.pixels..(i + 1) * self.pixels, &mut im);
            lb.push(self.labels[i]);
        }
        Ok((Tensor::new(vec![idx.len(), self.pixels], im)?, Tensor::vec(lb)))
    }

    /// All examples in order, in chunks of at most `size` (for evaluation).
    pub fn chunks(&self, size: usize) -> impl Iterator<Item = Result<(Tensor, Tensor), Status>> + '_ {
        let size = size.max(1);
        (0..self.len()).step_by(size).map(move |s| {
            let idx: Vec<usize> = (s..(s + size).min(self.len())).collect();
            self.gather(&idx)
        })
    }

    /// An endless shuffled batch iterator (reshuffled every epoch, seeded).
    pub fn batches(&self, batch: usize, seed: u64) -> Batches<'_> {
        let mut b = Batches {
            data: self,
            order: (0..self.len()).collect(),
            pos: 0,
            epoch: 0,
            batch: batch.max(1),
            rng: SplitMix64::new(seed),
        };
        b.rng.shuffle(&mut b.order);
        b
    }
}

/// Shuffled mini-batches over a [`DataSet`].
pub struct Batches<'a> {
    data: &'a DataSet,
    order: Vec<usize>,
    pos: usize,
    epoch: usize,
    batch: usize,
    rng: SplitMix64,
}

impl Batches<'_> {
    /// Completed epochs.
    pub fn epoch(&self) -> usize {
        self.epoch
    }

    /// The next batch of exactly `batch` examples (wrapping into a new shuffled epoch).
    pub fn next_batch(&mut self) -> Result<(Tensor, Tensor), Status> {
        let mut idx = Vec::with_capacity(self.batch);
        while idx.len() < self.batch {
            if self.pos == self.order.len() {
                self.epoch += 1;
                self.pos = 0;
                self.rng.shuffle(&mut self.order);
            }
            idx.push(self.order[self.pos]);
            self.pos += 1;
        }
        self.data.gather(&idx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> DataSet {
        DataSet::new((0..10 * 4).map(|i| i as f32).collect(), (0..10).collect(), 4).unwrap()
    }

    #[test]
    fn shards_are_disjoint_and_cover() {
        let d = tiny();
        let a = d.shard(3, 0).unwrap();
        let b = d.shard(3, 1).unwrap();
        let c = d.shard(3, 2).unwrap();
        assert_eq!(a.len() + b.len() + c.len(), 10);
        assert_eq!(b.labels, vec![1, 4, 7]);
        assert!(d.shard(3, 3).is_err());
    }

    #[test]
    fn batches_cover_each_epoch_once() {
        let d = tiny();
        let mut it = d.batches(5, 7);
        let (_, l1) = it.next_batch().unwrap();
        let (_, l2) = it.next_batch().unwrap();
        let mut all: Vec<i64> =
            l1.as_slice::<i64>().unwrap().iter().chain(l2.as_slice::<i64>().unwrap()).copied().collect();
        all.sort();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        assert_eq!(it.epoch(), 0);
        it.next_batch().unwrap();
        assert_eq!(it.epoch(), 1);
    }

    #[test]
    fn reads_the_bundled_files() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/mnist");
        let m = read_mnist(&dir).unwrap();
        assert_eq!(m.train.len(), 60000);
        assert_eq!(m.test.len(), 10000);
        assert_eq!(m.train.pixels(), 784);
        // The first training label of MNIST is 5, the first test label 7.
        assert_eq!(m.train.labels[0], 5);
        assert_eq!(m.test.labels[0], 7);
        // Pixels are bytes scaled to [0, 1] per batch: the first training image's
        // 153rd pixel is 3 (its first non-zero), its 162nd is 255.
        let (x, y) = m.train.gather(&[0]).unwrap();
        assert_eq!(x.shape().dims(), &[1, 784]);
        let x = x.as_slice::<f32>().unwrap();
        assert!(x[..152].iter().all(|&v| v == 0.0));
        assert_eq!(x[152], 3.0 / 255.0);
        assert_eq!(x[153], 18.0 / 255.0);
        assert_eq!(x[161], 1.0);
        assert!(x.iter().all(|&v| (0.0..=1.0).contains(&v)));
        assert_eq!(y.as_slice::<i64>().unwrap(), &[5]);
        // A shard keeps the bytes: its first image is the data set's second.
        let s = m.train.shard(2, 1).unwrap();
        assert_eq!(s.len(), 30000);
        assert_eq!(
            s.gather(&[0]).unwrap().0.as_slice::<f32>().unwrap(),
            m.train.gather(&[1]).unwrap().0.as_slice::<f32>().unwrap()
        );
        // Reading only a shard gives the same examples.
        let r = read_mnist_shard(&dir, 3, 2).unwrap();
        let s = m.train.shard(3, 2).unwrap();
        assert_eq!((r.train.len(), r.test.len()), (20000, 10000));
        let idx: Vec<usize> = (0..20000).step_by(997).collect();
        let (a, b) = (r.train.gather(&idx).unwrap(), s.gather(&idx).unwrap());
        assert_eq!(a.0.as_slice::<f32>().unwrap(), b.0.as_slice::<f32>().unwrap());
        assert_eq!(a.1.as_slice::<i64>().unwrap(), b.1.as_slice::<i64>().unwrap());
        assert_eq!(read_mnist_shard(&dir, 2, 2).unwrap_err().code, ferroflow_core::Code::InvalidArgument);
    }

    #[test]
    fn float_images_gather_as_given() {
        let d = tiny();
        let (x, y) = d.shard(3, 1).unwrap().gather(&[1]).unwrap();
        assert_eq!(x.as_slice::<f32>().unwrap(), &[16.0, 17.0, 18.0, 19.0]);
        assert_eq!(y.as_slice::<i64>().unwrap(), &[4]);
    }
}
