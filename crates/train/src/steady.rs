//! The steady training rate: steps per second after the first [`WARMUP_STEPS`] steps.
//!
//! The first steps of a loop build the executors (and, in a cluster, register the graphs on
//! every task); TensorFlow's benchmarks leave out their warm-up steps the same way.

use std::time::Instant;

/// Steps a training loop runs before its steady rate is timed.
pub const WARMUP_STEPS: usize = 20;

/// Times a training loop after its warm-up steps.
#[derive(Debug, Default)]
pub struct SteadyRate {
    warm: Option<Instant>,
    steps: usize,
}

impl SteadyRate {
    /// A clock for a loop that has not run a step yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that one more step finished.
    pub fn step_done(&mut self) {
        self.steps += 1;
        if self.steps == WARMUP_STEPS {
            self.warm = Some(Instant::now());
        }
    }

    /// Steps per second since the warm-up ended, once a step ran after it.
    pub fn per_sec(&self) -> Option<f64> {
        let warm = self.warm.filter(|_| self.steps > WARMUP_STEPS)?;
        Some((self.steps - WARMUP_STEPS) as f64 / warm.elapsed().as_secs_f64().max(1e-9))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_rate_until_a_step_after_the_warm_up() {
        let mut r = SteadyRate::new();
        for _ in 0..WARMUP_STEPS {
            assert_eq!(r.per_sec(), None);
            r.step_done();
        }
        assert_eq!(r.per_sec(), None, "the warm-up's last step starts the clock");
        std::thread::sleep(std::time::Duration::from_millis(20));
        r.step_done();
        r.step_done();
        let rate = r.per_sec().unwrap();
        assert!(rate > 0.0 && rate <= 2.0 / 0.02, "2 steps in at least 20 ms: {rate}");
    }
}
