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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answer_vectors() {
        // Known-answer tests of the Random123 reference implementation (philox4x32, 10 rounds).
        let mut g = Philox::from_parts([0; 4], [0; 2]);
        assert_eq!(g.next4(), [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
        let mut g = Philox::from_parts([u32::MAX; 4], [u32::MAX; 2]);
        assert_eq!(g.next4(), [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]);
        let mut g =
            Philox::from_parts([0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344], [0xa409_3822, 0x299f_31d0]);
        assert_eq!(g.next4(), [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]);
    }

    #[test]
    fn skip_carries() {
        let mut g = Philox::from_parts([u32::MAX, u32::MAX, 7, 0], [1, 2]);
        g.skip(1);
        assert_eq!(g.counter(), [0, 0, 8, 0]);
        let mut g = Philox::from_parts([5, 0, 0, 0], [0, 0]);
        g.skip((3u64 << 32) | 10);
        assert_eq!(g.counter(), [15, 3, 0, 0]);
        let mut a = Philox::new(1, 2);
        let mut b = a;
        a.next4();
        a.next4();
        b.skip(2);
        assert_eq!(a, b);
        let mut c = Philox::from_parts([u32::MAX, u32::MAX, 7, 0], [3, 4]);
        let mut d = c;
        let (x, y) = c.next4x2();
        assert_eq!((x, y), (d.next4(), d.next4()));
        assert_eq!(c, d);
    }

    #[test]
    fn conversions() {
        assert_eq!(u32_to_f32(0), 0.0);
        assert_eq!(u32_to_f32(0x7f_ffff), 1.0 - f32::EPSILON);
        assert_eq!(u32_to_f32(0xff80_0000), 0.0);
        assert_eq!(u64_to_f64(0, 0), 0.0);
        assert_eq!(u64_to_f64(0xfff0_0000, 0), 0.0);
        assert_eq!(u64_to_f64(0xf_ffff, u32::MAX), 1.0 - f64::EPSILON);
        let (a, b) = box_muller_f32(0, 0);
        assert!((a - 0.0).abs() < 1e-6 && (b - (-2.0f32 * 1e-7f32.ln()).sqrt()).abs() < 1e-5);
    }
}
