//! TensorFlow's random distributions over Philox samples, and the sharded fill that makes
//! every output element depend only on the seed and its position (TensorFlow's
//! `FillPhiloxRandom`): the output is cut into groups of `GROUP` values; a fixed-rate
//! distribution uses exactly one generator call per group, a variable-rate one (truncated
//! normal) starts each group `GROUP * 64` calls further along the stream.

use rayon::prelude::*;

use super::philox::{box_muller_f32, box_muller_f64, u32_to_f32, u64_to_f64, Philox, SingleSample};

/// A distribution producing `GROUP` values per group.
pub trait Distribution: Sync {
    /// Element type.
    type T: Copy + Send + Sync;
    /// Values per group.
    const GROUP: usize;
    /// Whether a group may consume a variable number of samples.
    const VARIABLE: bool;
    /// Fixed-rate distributions: fills `out` (at most `GROUP` values) from the four
    /// samples of one generator call.
    fn convert(&self, s: [u32; 4], out: &mut [Self::T]);
    /// Fills `out` (at most `GROUP` values) with one group drawn from `gen`.
    #[inline]
    fn group(&self, gen: &mut Philox, out: &mut [Self::T]) {
        self.convert(gen.next4(), out)
    }
}

/// Implements [`Distribution`] for the fixed-rate `$name` of `$t`, `$group` values per
/// generator call; `convert(self, s, out)` is `$body`.
macro_rules! fixed_rate {
    ($name:ty, $t:ty, $group:expr, |$self_:ident, $s:ident, $out:ident| $body:block) => {
        impl Distribution for $name {
            type T = $t;
            const GROUP: usize = $group;
            const VARIABLE: bool = false;
            #[inline]
            fn convert(&$self_, $s: [u32; 4], $out: &mut [$t]) $body
        }
    };
}
pub(crate) use fixed_rate;

/// Implements [`Distribution`] for `$name`: standard normal `$t`s with `|x| < 2`, by
/// rejection, `$group` values per group, each Box-Muller pair being `$pair` (drawn from the
/// single-sample stream `$single`).
macro_rules! truncated_normal {
    ($name:ident, $t:ty, $group:expr, |$single:ident| $pair:expr) => {
        impl Distribution for $name {
            type T = $t;
            const GROUP: usize = $group;
            const VARIABLE: bool = true;
            fn convert(&self, _: [u32; 4], _: &mut [Self::T]) {
                // Variable-rate: `group` draws as many samples as it needs.
            }
            fn group(&self, gen: &mut Philox, out: &mut [$t]) {
                let mut $single = SingleSample::new(gen);
                let mut res = [0 as $t; $group];
                let mut n = 0;
                while n < $group {
                    let (a, b) = $pair;
                    for v in [a, b] {
                        if v.abs() < 2.0 && n < $group {
                            res[n] = v;
                            n += 1;
                        }
                    }
                }
                let k = out.len();
                out.copy_from_slice(&res[..k]);
            }
        }
    };
}

/// Uniform `[0, 1)` floats.
pub struct UniformF32;
fixed_rate!(UniformF32, f32, 4, |self, s, out| {
    for (o, &x) in out.iter_mut().zip(&s) {
        *o = u32_to_f32(x);
    }
});

/// Uniform `[0, 1)` doubles.
pub struct UniformF64;
fixed_rate!(UniformF64, f64, 2, |self, s, out| {
    for (i, o) in out.iter_mut().enumerate() {
        *o = u64_to_f64(s[2 * i], s[2 * i + 1]);
    }
});

/// Standard normal floats (Box-Muller).
pub struct NormalF32;
fixed_rate!(NormalF32, f32, 4, |self, s, out| {
    let (a, b) = box_muller_f32(s[0], s[1]);
    let (c, d) = box_muller_f32(s[2], s[3]);
    for (o, v) in out.iter_mut().zip([a, b, c, d]) {
        *o = v;
    }
});

/// Standard normal doubles (Box-Muller).
pub struct NormalF64;
fixed_rate!(NormalF64, f64, 2, |self, s, out| {
    let (a, b) = box_muller_f64(s[0], s[1], s[2], s[3]);
    for (o, v) in out.iter_mut().zip([a, b]) {
        *o = v;
    }
});

/// Standard normal floats with `|x| < 2`, by rejection.
pub struct TruncatedF32;
truncated_normal!(TruncatedF32, f32, 4, |single| box_muller_f32(single.next_u32(), single.next_u32()));

/// Standard normal doubles with `|x| < 2`, by rejection.
pub struct TruncatedF64;
truncated_normal!(TruncatedF64, f64, 2, |single| {
    let (x0, x1, x2, x3) = (single.next_u32(), single.next_u32(), single.next_u32(), single.next_u32());
    box_muller_f64(x0, x1, x2, x3)
});

/// Uniform integers in `[lo, lo + range)` (TensorFlow's biased `sample % range`).
pub struct UniformI32 {
    /// Lower bound.
    pub lo: i32,
    /// `hi - lo`, positive.
    pub range: u32,
}
fixed_rate!(UniformI32, i32, 4, |self, s, out| {
    for (o, &x) in out.iter_mut().zip(&s) {
        *o = self.lo.wrapping_add((x % self.range) as i32);
    }
});

/// Uniform 64-bit integers in `[lo, lo + range)`.
pub struct UniformI64 {
    /// Lower bound.
    pub lo: i64,
    /// `hi - lo`, positive.
    pub range: u64,
}
fixed_rate!(UniformI64, i64, 2, |self, s, out| {
    for (i, o) in out.iter_mut().enumerate() {
        let bits = s[2 * i] as u64 | ((s[2 * i + 1] as u64) << 32);
        *o = self.lo.wrapping_add((bits % self.range) as i64);
    }
});

/// Generator calls a variable-rate group may use before the next group's region starts.
const SKIP_PER_VARIABLE_GROUP_ELEMENT: u64 = super::guarded::SAMPLES_PER_OUTPUT / 4;

/// Fills `data` from `base` so that the result is independent of how the work is split.
pub fn fill<D: Distribution>(dist: &D, base: Philox, data: &mut [D::T]) {
    const PAR_THRESHOLD: usize = 32 * 1024;
    let groups_per_task = (16 * 1024 / D::GROUP).max(1);
    let task = groups_per_task * D::GROUP;
    if data.len() <= PAR_THRESHOLD {
        fill_range(dist, base, 0, data);
    } else {
        data.par_chunks_mut(task).enumerate().for_each(|(t, chunk)| fill_range(dist, base, t * groups_per_task, chunk));
    }
}

#[doc(hidden)]
pub fn fill_range<D: Distribution>(dist: &D, base: Philox, first_group: usize, data: &mut [D::T]) {
    if D::VARIABLE {
        let per_group = D::GROUP as u64 * SKIP_PER_VARIABLE_GROUP_ELEMENT;
        for (i, chunk) in data.chunks_mut(D::GROUP).enumerate() {
            let mut gen = base;
            gen.skip((first_group + i) as u64 * per_group);
            dist.group(&mut gen, chunk);
        }
    } else {
        let mut gen = base;
        gen.skip(first_group as u64);
        let mut pairs = data.chunks_exact_mut(2 * D::GROUP);
        for pair in &mut pairs {
            let (a, b) = gen.next4x2();
            let (x, y) = pair.split_at_mut(D::GROUP);
            dist.convert(a, x);
            dist.convert(b, y);
        }
        for chunk in pairs.into_remainder().chunks_mut(D::GROUP) {
            dist.group(&mut gen, chunk);
        }
    }
}
