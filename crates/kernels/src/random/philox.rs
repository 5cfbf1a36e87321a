//! Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011),
//! the counter-based generator behind TensorFlow's stateful random ops, plus the bit-exact
//! conversions TensorFlow applies to its 32-bit samples (uniform floats from mantissa bits,
//! Box-Muller normals).
//!
//! A generator is a 64-bit key and a 128-bit counter; each call encrypts the counter with
//! ten rounds and returns four `u32`s, then increments the counter. `skip(n)` jumps `n`
//! calls ahead, which lets shards of one output draw independently yet reproducibly.

const W32A: u32 = 0x9E37_79B9;
const W32B: u32 = 0xBB67_AE85;
const M4X32A: u32 = 0xD251_1F53;
const M4X32B: u32 = 0xCD9E_8D57;

/// The state of a Philox4x32-10 stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Philox {
    counter: [u32; 4],
    key: [u32; 2],
}

impl Philox {
    /// TensorFlow's seeding: the key is `seed_lo`, the upper half of the counter `seed_hi`.
    pub fn new(seed_lo: u64, seed_hi: u64) -> Philox {
        Philox {
            counter: [0, 0, seed_hi as u32, (seed_hi >> 32) as u32],
            key: [seed_lo as u32, (seed_lo >> 32) as u32],
        }
    }

    /// A generator from an explicit counter and key.
    pub fn from_parts(counter: [u32; 4], key: [u32; 2]) -> Philox {
        Philox { counter, key }
    }

    /// The current counter.
    pub fn counter(&self) -> [u32; 4] {
        self.counter
    }

    /// The key.
    pub fn key(&self) -> [u32; 2] {
        self.key
    }

    /// Advances the 128-bit counter by `count` (skips `count` calls of [`Philox::next4`]).
    pub fn skip(&mut self, count: u64) {
        let lo = count as u32;
        let mut hi = (count >> 32) as u32;
        self.counter[0] = self.counter[0].wrapping_add(lo);
        if self.counter[0] < lo {
            hi = hi.wrapping_add(1);
        }
        self.counter[1] = self.counter[1].wrapping_add(hi);
        if self.counter[1] < hi {
            self.counter[2] = self.counter[2].wrapping_add(1);
            if self.counter[2] == 0 {
                self.counter[3] = self.counter[3].wrapping_add(1);
            }
        }
    }

    fn skip_one(&mut self) {
        for c in &mut self.counter {
            *c = c.wrapping_add(1);
            if *c != 0 {
                break;
            }
        }
    }

    #[inline(always)]
    fn round(c: [u32; 4], k: [u32; 2]) -> [u32; 4] {
        let p0 = (M4X32A as u64) * (c[0] as u64);
        let p1 = (M4X32B as u64) * (c[2] as u64);
        [((p1 >> 32) as u32) ^ c[1] ^ k[0], p1 as u32, ((p0 >> 32) as u32) ^ c[3] ^ k[1], p0 as u32]
    }

    /// Four fresh 32-bit samples.
    #[inline]
    pub fn next4(&mut self) -> [u32; 4] {
        let mut c = self.counter;
        let mut k = self.key;
        c = Self::round(c, k);
        for _ in 1..10 {
            k = [k[0].wrapping_add(W32A), k[1].wrapping_add(W32B)];
            c = Self::round(c, k);
        }
        self.skip_one();
        c
    }

    /// The next two calls of [`Philox::next4`], computed together (the two streams of
    /// rounds interleave, which roughly halves the latency-bound cost).
    #[inline]
    pub fn next4x2(&mut self) -> ([u32; 4], [u32; 4]) {
        let mut a = self.counter;
        self.skip_one();
        let mut b = self.counter;
        self.skip_one();
        let mut k = self.key;
        a = Self::round(a, k);
        b = Self::round(b, k);
        for _ in 1..10 {
            k = [k[0].wrapping_add(W32A), k[1].wrapping_add(W32B)];
            a = Self::round(a, k);
            b = Self::round(b, k);
        }
        (a, b)
    }
}

/// Hands out the samples of a [`Philox`] one at a time (TensorFlow's `SingleSampleAdapter`).
pub struct SingleSample<'a> {
    gen: &'a mut Philox,
    buf: [u32; 4],
    used: usize,
}

impl<'a> SingleSample<'a> {
    /// Wraps a generator.
    pub fn new(gen: &'a mut Philox) -> SingleSample<'a> {
        SingleSample { gen, buf: [0; 4], used: 4 }
    }

    /// The next 32-bit sample.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.buf = self.gen.next4();
            self.used = 0;
        }
        let v = self.buf[self.used];
        self.used += 1;
        v
    }
}

/// A float in `[0, 1)` from the low 23 bits of `x` (TensorFlow's `Uint32ToFloat`).
#[inline]
pub fn u32_to_f32(x: u32) -> f32 {
    f32::from_bits((127u32 << 23) | (x & 0x7f_ffff)) - 1.0
}

/// A double in `[0, 1)` from 52 bits: the low 20 of `x0` and all of `x1`
/// (TensorFlow's `Uint64ToDouble`).
#[inline]
pub fn u64_to_f64(x0: u32, x1: u32) -> f64 {
    let man = (((x0 & 0xf_ffff) as u64) << 32) | x1 as u64;
    f64::from_bits((1023u64 << 52) | man) - 1.0
}

/// Two standard normals from two samples (TensorFlow's `BoxMullerFloat`; the angle is
/// computed in double precision as TensorFlow's `2.0f * M_PI * u` is).
#[inline]
pub fn box_muller_f32(x0: u32, x1: u32) -> (f32, f32) {
    let u1 = u32_to_f32(x0).max(1.0e-7);
    let v1 = (2.0 * std::f64::consts::PI * u32_to_f32(x1) as f64) as f32;
    let u2 = (-2.0f32 * u1.ln()).sqrt();
    (v1.sin() * u2, v1.cos() * u2)
}

/// Two standard normals from four samples (TensorFlow's `BoxMullerDouble`).
#[inline]
pub fn box_muller_f64(x0: u32, x1: u32, x2: u32, x3: u32) -> (f64, f64) {
    let u1 = u64_to_f64(x0, x1).max(1.0e-7);
    let v1 = 2.0 * std::f64::consts::PI * u64_to_f64(x2, x3);
    let u2 = (-2.0 * u1.ln()).sqrt();
    (v1.sin() * u2, v1.cos() * u2)
}
