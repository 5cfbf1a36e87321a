//! The pooling sequences of fractional pooling (Graham, "Fractional Max-Pooling"): for an
//! input of `n` rows pooled to `m`, the `m + 1` cumulative boundaries `0 = a_0 < … < a_m = n`
//! whose steps are `floor(n / m)` or one more.
//!
//! The random draws follow TensorFlow's: a Philox stream seeded from `seed`/`seed2`, rows
//! drawn before columns. Pseudo-random sequences take one double `u` (two 32-bit samples)
//! and place boundary `i` at `ceil(alpha * (i + u))`; random ones shuffle `m - n % m` steps
//! of `k` and `n % m` of `k + 1` by swapping element `i` with `i + next % (m - i)`. A ratio
//! that divides the size needs no draw, but its part of the stream is skipped all the same.

use ferroflow_core::{NodeAttrs, Status};

use ferroflow_core::proto::attr_value::Value as AttrKind;
use ferroflow_core::proto::NodeDef;

use crate::random::guarded::random_u64;
use crate::random::philox::{u64_to_f64, Philox, SingleSample};

/// The generator of one run: its stream and how far it has been reserved.
pub(crate) struct SeqGen {
    gen: Philox,
}

impl SeqGen {
    /// A stream for `seeds` (random seeds when `None`).
    pub(crate) fn new(seeds: Option<(u64, u64)>) -> SeqGen {
        let (a, b) = seeds.unwrap_or_else(|| (random_u64(), random_u64()));
        SeqGen { gen: Philox::new(a, b) }
    }

    /// The stream for `samples` 32-bit values, moving the shared one past them.
    fn reserve32(&mut self, samples: usize) -> Philox {
        let local = self.gen;
        self.gen.skip(samples.div_ceil(4) as u64);
        local
    }
}

/// The cumulative pooling sequence (`output + 1` boundaries) of `input` rows pooled to
/// `output` (`1 <= output <= input`).
pub(crate) fn pooling_sequence(input: usize, output: usize, gen: &mut SeqGen, pseudo_random: bool) -> Vec<i64> {
    let k = input / output;
    let steps: Vec<i64> = if input.is_multiple_of(output) {
        // No draw is needed, but TensorFlow reserves the stream all the same (the column
        // sequence after an evenly divided row sequence depends on it).
        gen.reserve32(if pseudo_random { 2 } else { output });
        vec![k as i64; output]
    } else if pseudo_random {
        pseudo_random_steps(input, output, gen)
    } else {
        random_steps(input, output, gen)
    };
    let mut cum = Vec::with_capacity(output + 1);
    let mut at = 0i64;
    cum.push(0);
    for s in steps {
        at += s;
        cum.push(at);
    }
    cum
}

fn pseudo_random_steps(input: usize, output: usize, gen: &mut SeqGen) -> Vec<i64> {
    let alpha = input as f64 / output as f64;
    let k = (input / output) as f64;
    let u_max1 = (k + 2.0) / alpha - 1.0;
    let u_max2 = (input as f64 + 1.0 - k) / alpha - (output as f64 - 1.0);
    let mut local = gen.reserve32(2);
    let mut single = SingleSample::new(&mut local);
    let (x0, x1) = (single.next_u32(), single.next_u32());
    let u = u64_to_f64(x0, x1) * u_max1.min(u_max2);
    // 1-based boundaries, as the construction is written.
    let mut cum = vec![0i64; output + 1];
    cum[0] = 1;
    cum[output] = input as i64 + 1;
    for (i, c) in cum.iter_mut().enumerate().take(output).skip(1) {
        *c = (alpha * (i as f64 + u)).ceil() as i32 as i64;
    }
    cum.windows(2).map(|w| w[1] - w[0]).collect()
}

fn random_steps(input: usize, output: usize, gen: &mut SeqGen) -> Vec<i64> {
    let k = (input / output) as i64;
    let extra = input % output;
    let mut steps: Vec<i64> = (0..output).map(|i| if i < extra { k + 1 } else { k }).collect();
    let mut local = gen.reserve32(output);
    let mut single = SingleSample::new(&mut local);
    for i in 0..output.saturating_sub(1) {
        let j = i + (single.next_u32() as usize) % (output - i);
        steps.swap(i, j);
    }
    steps
}

/// The pooling attrs of `FractionalMaxPool` / `FractionalAvgPool`.
pub(crate) struct FractionalAttrs {
    /// Row and column ratios (batch and depth must be 1).
    pub ratio: [f32; 2],
    pub pseudo_random: bool,
    pub overlapping: bool,
    /// Fixed seeds when `deterministic`; a fresh random stream each run otherwise.
    pub seeds: Option<(u64, u64)>,
}

impl FractionalAttrs {
    pub(crate) fn parse(node: &NodeDef) -> Result<FractionalAttrs, Status> {
        let ratio = match &node.attr_value("pooling_ratio")?.value {
            Some(AttrKind::List(l)) => l.f.clone(),
            _ => return Err(node.node_error("attr 'pooling_ratio' must be a list(float)")),
        };
        if ratio.len() != 4 {
            return Err(node.node_error(format!("pooling_ratio field must specify 4 dimensions, got {}", ratio.len())));
        }
        if let Some(r) = ratio.iter().find(|&&r| r.is_nan() || r < 1.0) {
            return Err(node.node_error(format!("pooling_ratio cannot be smaller than 1, got: {r}")));
        }
        if ratio[0] != 1.0 || ratio[3] != 1.0 {
            return Err(Status::unimplemented(format!(
                "node '{}' (op {}): Fractional {} pooling is not yet supported on the batch nor channel dimension.",
                node.name,
                node.op,
                if node.op.contains("Max") { "max" } else { "average" }
            ))
            .with_node(&node.name));
        }
        let deterministic = node.attr_bool("deterministic")?;
        let (seed, seed2) = (node.attr_int("seed")?, node.attr_int("seed2")?);
        let seeds = if deterministic {
            if seed == 0 && seed2 == 0 {
                Some((random_u64(), random_u64()))
            } else {
                Some((seed as u64, seed2 as u64))
            }
        } else {
            if seed != 0 || seed2 != 0 {
                return Err(node.node_error("Both seed and seed2 should be 0 if deterministic is false."));
            }
            None
        };
        Ok(FractionalAttrs {
            ratio: [ratio[1], ratio[2]],
            pseudo_random: node.attr_bool("pseudo_random")?,
            overlapping: node.attr_bool("overlapping")?,
            seeds,
        })
    }
}

/// The `[start, end]` input range (inclusive, clipped to `size`) of pooled cell `i`.
pub(crate) fn window(seq: &[i64], i: usize, overlapping: bool, size: usize) -> (usize, usize) {
    let start = seq[i].max(0) as usize;
    let end = if overlapping { seq[i + 1] } else { seq[i + 1] - 1 };
    (start, (end.max(0) as usize).min(size.saturating_sub(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_contract(seq: &[i64], n: usize, m: usize) {
        assert_eq!(seq.len(), m + 1);
        assert_eq!(seq[0], 0);
        assert_eq!(seq[m], n as i64);
        let k = (n / m) as i64;
        for w in seq.windows(2) {
            let d = w[1] - w[0];
            assert!(d == k || d == k + 1, "step {d} of {seq:?} is not {k} or {}", k + 1);
        }
    }

    #[test]
    fn sequences_start_at_zero_end_at_size_and_step_by_floor_or_ceil() {
        for seed in 1..30u64 {
            let mut g = SeqGen::new(Some((seed, 7)));
            for (n, m) in [(7, 4), (9, 5), (10, 3), (25, 17), (5, 5), (12, 4), (11, 1), (100, 63)] {
                for pseudo in [false, true] {
                    check_contract(&pooling_sequence(n, m, &mut g, pseudo), n, m);
                }
            }
        }
    }

    #[test]
    fn same_seeds_give_the_same_sequences() {
        let a = pooling_sequence(25, 17, &mut SeqGen::new(Some((3, 4))), false);
        let b = pooling_sequence(25, 17, &mut SeqGen::new(Some((3, 4))), false);
        assert_eq!(a, b);
    }

    #[test]
    fn windows_clip_to_the_input() {
        let seq = [0, 2, 4, 5];
        assert_eq!(window(&seq, 0, false, 5), (0, 1));
        assert_eq!(window(&seq, 0, true, 5), (0, 2));
        assert_eq!(window(&seq, 2, true, 5), (4, 4));
    }
}
