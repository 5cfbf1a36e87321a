//! A kernel's own generator (TensorFlow's `GuardedPhiloxRandom`): seeded from the `seed`
//! and `seed2` attrs (or randomly when both are 0), and advanced under a lock by each run
//! so that successive runs draw fresh numbers.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::philox::Philox;

/// 128-bit counter space TensorFlow reserves per output element, so that variable-rate
/// distributions (truncated normal) never reuse samples across runs.
pub const SAMPLES_PER_OUTPUT: u64 = 256;

/// A mutex-guarded Philox stream.
pub struct GuardedPhilox {
    gen: Mutex<Philox>,
}

/// A non-deterministic 64-bit value (std's per-process random hash keys, a counter and the
/// clock), for unseeded ops.
pub fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    h.finish()
}

impl GuardedPhilox {
    /// A generator for `seed`, `seed2`; random seeds when both are 0.
    pub fn new(seed: i64, seed2: i64) -> GuardedPhilox {
        let (s1, s2) = if seed == 0 && seed2 == 0 { (random_u64(), random_u64()) } else { (seed as u64, seed2 as u64) };
        GuardedPhilox { gen: Mutex::new(Philox::new(s1, s2)) }
    }

    /// A generator seeded from the node's `seed` and `seed2` attrs.
    pub fn from_node(node: &NodeDef) -> Result<GuardedPhilox, Status> {
        Ok(GuardedPhilox::new(node.attr_int("seed")?, node.attr_int("seed2")?))
    }

    /// Returns the current stream and moves the shared one `count` calls ahead.
    pub fn reserve128(&self, count: u64) -> Philox {
        let mut g = self.gen.lock().unwrap_or_else(|e| e.into_inner());
        let local = *g;
        g.skip(count);
        local
    }

    /// Reserves enough of the stream for `outputs` values at `multiplier` calls each.
    pub fn reserve_outputs(&self, outputs: usize, multiplier: u64) -> Philox {
        self.reserve128((outputs as u64).wrapping_mul(multiplier))
    }
}
