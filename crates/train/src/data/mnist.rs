//! The MNIST IDX files (gzip), read into memory, with shuffling, batching and per-worker
//! sharding.

use std::io::Read;
use std::path::Path;

use ferroflow_core::{Status, Tensor};

use super::rng::SplitMix64;

/// Images (flattened 28×28, scaled to [0, 1]) and labels.
#[derive(Clone, Debug)]
pub struct DataSet {
    images: Vec<f32>,
    labels: Vec<i64>,
    pixels: usize,
}

/// The training (60k) and test (10k) sets.
#[derive(Clone, Debug)]
pub struct Mnist {
    /// Training set.
    pub train: DataSet,
    /// Test set.
    pub test: DataSet,
}

fn read_gz(path: &Path) -> Result<Vec<u8>, Status> {
    let f = std::fs::File::open(path).map_err(|e| Status::not_found(format!("cannot open {}: {e}", path.display())))?;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(f)
        .read_to_end(&mut out)
        .map_err(|e| Status::data_loss(format!("{} is not valid gzip: {e}", path.display())))?;
    Ok(out)
}

fn be32(b: &[u8], at: usize, path: &Path) -> Result<usize, Status> {
    b.get(at..at + 4)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as usize)
        .ok_or_else(|| Status::data_loss(format!("{}: truncated IDX header", path.display())))
}

/// Parses an IDX image file (magic 2051).
pub fn parse_images(bytes: &[u8], path: &Path) -> Result<(Vec<f32>, usize), Status> {
    if be32(bytes, 0, path)? != 2051 {
        return Err(Status::data_loss(format!("{}: not an IDX image file (magic != 2051)", path.display())));
    }
    let (n, r, c) = (be32(bytes, 4, path)?, be32(bytes, 8, path)?, be32(bytes, 12, path)?);
    let want = n.checked_mul(r * c).and_then(|x| x.checked_add(16));
    if want != Some(bytes.len()) {
        return Err(Status::data_loss(format!(
            "{}: header says {n} images of {r}x{c} but the file has {} bytes",
            path.display(),
            bytes.len()
        )));
    }
    Ok((bytes[16..].iter().map(|&p| p as f32 / 255.0).collect(), r * c))
}

/// Parses an IDX label file (magic 2049).
pub fn parse_labels(bytes: &[u8], path: &Path) -> Result<Vec<i64>, Status> {
    if be32(bytes, 0, path)? != 2049 {
        return Err(Status::data_loss(format!("{}: not an IDX label file (magic != 2049)", path.display())));
    }
    let n = be32(bytes, 4, path)?;
    if bytes.len() != n + 8 {
        return Err(Status::data_loss(format!(
            "{}: header says {n} labels, file has {}",
            path.display(),
            bytes.len() - 8
        )));
    }
    let labels: Vec<i64> = bytes[8..].iter().map(|&l| l as i64).collect();
    if let Some(bad) = labels.iter().find(|&&l| l > 9) {
        return Err(Status::data_loss(format!("{}: label {bad} is not a digit", path.display())));
    }
    Ok(labels)
}

fn load(dir: &Path, images: &str, labels: &str) -> Result<DataSet, Status> {
    let ip = dir.join(images);
    let lp = dir.join(labels);
    let (imgs, pixels) = parse_images(&read_gz(&ip)?, &ip)?;
    let labs = parse_labels(&read_gz(&lp)?, &lp)?;
    if imgs.len() / pixels != labs.len() {
        return Err(Status::data_loss(format!(
            "{} has {} images but {} has {} labels",
            ip.display(),
            imgs.len() / pixels,
            lp.display(),
            labs.len()
        )));
    }
    Ok(DataSet { images: imgs, labels: labs, pixels })
}

/// Reads the four standard MNIST files from `dir`.
pub fn read_mnist(dir: impl AsRef<Path>) -> Result<Mnist, Status> {
    let dir = dir.as_ref();
    Ok(Mnist {
        train: load(dir, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz")?,
        test: load(dir, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")?,
    })
}

impl DataSet {
    /// Builds a data set from flattened images and labels.
    pub fn new(images: Vec<f32>, labels: Vec<i64>, pixels: usize) -> Result<DataSet, Status> {
        if pixels == 0 || images.len() != labels.len() * pixels {
            return Err(Status::invalid_argument("images and labels disagree in count"));
        }
        Ok(DataSet { images, labels, pixels })
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
        let mut images = Vec::new();
        let mut labels = Vec::new();
        for i in (index..self.len()).step_by(num_shards) {
            images.extend_from_slice(&self.images[i * self.pixels..(i + 1) * self.pixels]);
            labels.push(self.labels[i]);
        }
        Ok(DataSet { images, labels, pixels: self.pixels })
    }

    /// Examples `idx` as (images `[n, pixels]` float32, labels `[n]` int64).
    pub fn gather(&self, idx: &[usize]) -> (Tensor, Tensor) {
        let mut im = Vec::with_capacity(idx.len() * self.pixels);
        let mut lb = Vec::with_capacity(idx.len());
        for &i in idx {
            im.extend_from_slice(&self.images[i * self.pixels..(i + 1) * self.pixels]);
            lb.push(self.labels[i]);
        }
        (
            Tensor::new(vec![idx.len(), self.pixels], im).expect("sizes match"),
            Tensor::new(vec![idx.len()], lb).expect("sizes match"),
        )
    }

    /// All examples in order, in chunks of at most `size` (for evaluation).
    pub fn chunks(&self, size: usize) -> impl Iterator<Item = (Tensor, Tensor)> + '_ {
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
    pub fn next_batch(&mut self) -> (Tensor, Tensor) {
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
        let (_, l1) = it.next_batch();
        let (_, l2) = it.next_batch();
        let mut all: Vec<i64> =
            l1.as_slice::<i64>().unwrap().iter().chain(l2.as_slice::<i64>().unwrap()).copied().collect();
        all.sort();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        assert_eq!(it.epoch(), 0);
        it.next_batch();
        assert_eq!(it.epoch(), 1);
    }

    #[test]
    fn bad_idx_is_data_loss() {
        let p = Path::new("x");
        assert_eq!(parse_images(&[0, 0, 8, 3, 0, 0, 0, 1], p).unwrap_err().code, ferroflow_core::Code::DataLoss);
        let mut hdr = vec![0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2];
        hdr.extend([0u8; 7]);
        assert!(parse_images(&hdr, p).is_err());
        assert!(parse_labels(&[0, 0, 8, 1, 0, 0, 0, 1, 12], p).is_err());
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
    }
}
