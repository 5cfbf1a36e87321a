//! `ShuffleDataset`: a buffer of `buffer_size` elements from which each output is drawn
//! uniformly at random and replaced by the next input element, with TensorFlow's generator
//! (Philox seeded by `seed`, `seed2`, one 32-bit sample per draw), so a seeded pipeline
//! yields TensorFlow's order. With `reshuffle_each_iteration` every new pass (a `repeat`,
//! a re-initialised iterator) draws its own seeds from a generator kept per node and seeds
//! in the task's resources; without it every pass repeats the first order. Seeds 0, 0 mean
//! random seeds.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};
use ferroflow_kernels::random::guarded::random_u64;
use ferroflow_kernels::random::Philox;

use super::dataset::{dataset_input, scalar_i64, Dataset, DatasetIter, DatasetRef, Element, IterCtx};
use super::BuildFn;

/// TensorFlow's `SingleSampleAdapter` over Philox: samples handed out one at a time.
pub(crate) struct Samples {
    gen: Philox,
    buf: [u32; 4],
    used: usize,
}

impl Samples {
    pub(crate) fn new(seed: u64, seed2: u64) -> Samples {
        Samples { gen: Philox::new(seed, seed2), buf: [0; 4], used: 4 }
    }

    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.buf = self.gen.next4();
            self.used = 0;
        }
        self.used += 1;
        self.buf[self.used - 1]
    }
}

/// Hands each new pass of a reshuffling dataset its seeds.
struct SeedGenerator(Mutex<Samples>);

struct Shuffle {
    input: Arc<DatasetRef>,
    buffer_size: usize,
    seeds: (u64, u64),
    /// Reshuffling: the generator of each pass's seeds.
    reseed: Option<Arc<SeedGenerator>>,
}

struct ShuffleIter {
    ds: Arc<Shuffle>,
    input: Option<Box<dyn DatasetIter>>,
    buffer: VecDeque<Element>,
    rng: Samples,
}

impl Dataset for Shuffle {
    fn make_iter(self: Arc<Self>, ctx: &IterCtx) -> Result<Box<dyn DatasetIter>, Status> {
        let (s1, s2) = match &self.reseed {
            Some(g) => {
                let mut g = g.0.lock().map_err(|_| Status::internal("shuffle seed generator poisoned"))?;
                (u64::from(g.next_u32()), u64::from(g.next_u32()))
            }
            None => self.seeds,
        };
        let input = Some(self.input.iter(ctx)?);
        let cap = self.buffer_size.min(1 << 16);
        Ok(Box::new(ShuffleIter { ds: self, input, buffer: VecDeque::with_capacity(cap), rng: Samples::new(s1, s2) }))
    }

    fn cardinality(&self) -> i64 {
        self.input.cardinality()
    }
}

impl DatasetIter for ShuffleIter {
    fn next(&mut self, ctx: &IterCtx) -> Result<Option<Element>, Status> {
        while self.buffer.len() < self.ds.buffer_size {
            let Some(input) = self.input.as_mut() else { break };
            match input.next(ctx)? {
                Some(e) => self.buffer.push_back(e),
                None => self.input = None,
            }
        }
        if self.buffer.is_empty() {
            return Ok(None);
        }
        // TensorFlow's ring buffer: draw an offset from the oldest element, swap the drawn
        // element with the oldest, pop it.
        let k = self.rng.next_u32() as usize % self.buffer.len();
        self.buffer.swap(0, k);
        Ok(self.buffer.pop_front())
    }
}

/// `ShuffleDataset`.
pub(super) fn shuffle(n: &NodeDef) -> Result<BuildFn, Status> {
    let reshuffle = n.attr_bool("reshuffle_each_iteration").unwrap_or(true);
    let node = n.name.clone();
    Ok(Box::new(move |ctx| {
        let input = dataset_input(ctx, 0)?;
        let size = scalar_i64(ctx, 1, "buffer_size")?;
        if size <= 0 && size != -2 {
            return Err(ctx.error("buffer_size must be greater than zero."));
        }
        let buffer_size = if size == -2 { 1 << 20 } else { size.min(1 << 40) as usize };
        let (seed, seed2) = (scalar_i64(ctx, 2, "seed")?, scalar_i64(ctx, 3, "seed2")?);
        let seeds = if seed == 0 && seed2 == 0 { (random_u64(), random_u64()) } else { (seed as u64, seed2 as u64) };
        let reseed =
            if reshuffle {
                let name = format!("{node}/RandomSeedGenerator/{seed}/{seed2}");
                Some(ctx.resources().lookup_or_create("tf_data", &name, || {
                    Ok(SeedGenerator(Mutex::new(Samples::new(seeds.0, seeds.1))))
                })?)
            } else {
                None
            };
        Ok(Arc::new(Shuffle { input, buffer_size, seeds, reseed }) as Arc<dyn Dataset>)
    }))
}
