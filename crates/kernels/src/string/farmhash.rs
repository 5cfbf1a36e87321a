//! The string hashes of TensorFlow's hash-bucket ops: FarmHash's `Fingerprint64`
//! (farmhashna's 64-bit hash, which TensorFlow's `Fingerprint64` is and which
//! `StringToHashBucketFast` and the feature-column crosses use) and SipHash-2-4 keyed with
//! two 64-bit words (`StringToHashBucketStrong`). Written from the published algorithms;
//! the golden values check them against TensorFlow.

const K0: u64 = 0xc3a5_c85c_97cb_3127;
const K1: u64 = 0xb492_b66f_be98_f273;
pub const K2: u64 = 0x9ae1_6a3b_2f90_404f;

#[inline(always)]
fn fetch64(s: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(b)
}

#[inline(always)]
fn fetch32(s: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&s[at..at + 4]);
    u64::from(u32::from_le_bytes(b))
}

#[inline(always)]
fn shift_mix(v: u64) -> u64 {
    v ^ (v >> 47)
}

#[inline(always)]
fn hash_len16(u: u64, v: u64, mul: u64) -> u64 {
    let mut a = (u ^ v).wrapping_mul(mul);
    a ^= a >> 47;
    let mut b = (v ^ a).wrapping_mul(mul);
    b ^= b >> 47;
    b.wrapping_mul(mul)
}

fn len_0_to_16(s: &[u8]) -> u64 {
    let len = s.len();
    if len >= 8 {
        let mul = K2.wrapping_add(len as u64 * 2);
        let a = fetch64(s, 0).wrapping_add(K2);
        let b = fetch64(s, len - 8);
        let c = b.rotate_right(37).wrapping_mul(mul).wrapping_add(a);
        let d = a.rotate_right(25).wrapping_add(b).wrapping_mul(mul);
        return hash_len16(c, d, mul);
    }
    if len >= 4 {
        let mul = K2.wrapping_add(len as u64 * 2);
        let a = fetch32(s, 0);
        return hash_len16((len as u64).wrapping_add(a << 3), fetch32(s, len - 4), mul);
    }
    if len > 0 {
        let (a, b, c) = (u32::from(s[0]), u32::from(s[len >> 1]), u32::from(s[len - 1]));
        let y = a.wrapping_add(b << 8);
        let z = (len as u32).wrapping_add(c << 2);
        return shift_mix(u64::from(y).wrapping_mul(K2) ^ u64::from(z).wrapping_mul(K0)).wrapping_mul(K2);
    }
    K2
}

/// The mix of the first and last 16 bytes that the 17–32 byte hash returns and the 33–64
/// byte hash starts from (the first word scaled by `first_mul`): `(mul, a, y, z)`, with `z`
/// the 17–32 byte hash's result when `first_mul` is `K1`.
#[inline(always)]
fn mix_ends(s: &[u8], first_mul: u64) -> (u64, u64, u64, u64) {
    let len = s.len();
    let mul = K2.wrapping_add(len as u64 * 2);
    let a = fetch64(s, 0).wrapping_mul(first_mul);
    let b = fetch64(s, 8);
    let c = fetch64(s, len - 8).wrapping_mul(mul);
    let d = fetch64(s, len - 16).wrapping_mul(K2);
    let y = a.wrapping_add(b).rotate_right(43).wrapping_add(c.rotate_right(30)).wrapping_add(d);
    let z = hash_len16(y, a.wrapping_add(b.wrapping_add(K2).rotate_right(18)).wrapping_add(c), mul);
    (mul, a, y, z)
}

fn len_17_to_32(s: &[u8]) -> u64 {
    mix_ends(s, K1).3
}

fn len_33_to_64(s: &[u8]) -> u64 {
    let len = s.len();
    let (mul, a, y, z) = mix_ends(s, K2);
    let e = fetch64(s, 16).wrapping_mul(mul);
    let f = fetch64(s, 24);
    let g = y.wrapping_add(fetch64(s, len - 32)).wrapping_mul(mul);
    let h = z.wrapping_add(fetch64(s, len - 24)).wrapping_mul(mul);
    hash_len16(
        e.wrapping_add(f).rotate_right(43).wrapping_add(g.rotate_right(30)).wrapping_add(h),
        e.wrapping_add(f.wrapping_add(a).rotate_right(18)).wrapping_add(g),
        mul,
    )
}

/// Two 64-bit halves mixed from 32 bytes at `at` and two seeds.
#[inline(always)]
fn weak_32_with_seeds(s: &[u8], at: usize, a: u64, b: u64) -> (u64, u64) {
    let (w, x, y, z) = (fetch64(s, at), fetch64(s, at + 8), fetch64(s, at + 16), fetch64(s, at + 24));
    let mut a = a.wrapping_add(w);
    let mut b = b.wrapping_add(a).wrapping_add(z).rotate_right(21);
    let c = a;
    a = a.wrapping_add(x).wrapping_add(y);
    b = b.wrapping_add(a.rotate_right(44));
    (a.wrapping_add(z), b.wrapping_add(c))
}

/// FarmHash `Fingerprint64` of `s` (stable across platforms and versions).
pub fn fingerprint64(s: &[u8]) -> u64 {
    let len = s.len();
    if len <= 16 {
        return len_0_to_16(s);
    }
    if len <= 32 {
        return len_17_to_32(s);
    }
    if len <= 64 {
        return len_33_to_64(s);
    }
    const SEED: u64 = 81;
    let mut x = SEED;
    let mut y = SEED.wrapping_mul(K1).wrapping_add(113);
    let mut z = shift_mix(y.wrapping_mul(K2).wrapping_add(113)).wrapping_mul(K2);
    let (mut v, mut w) = ((0u64, 0u64), (0u64, 0u64));
    x = x.wrapping_mul(K2).wrapping_add(fetch64(s, 0));
    let end = ((len - 1) / 64) * 64;
    let last64 = end + ((len - 1) & 63) - 63;
    let mut at = 0;
    loop {
        x = x.wrapping_add(y).wrapping_add(v.0).wrapping_add(fetch64(s, at + 8)).rotate_right(37).wrapping_mul(K1);
        y = y.wrapping_add(v.1).wrapping_add(fetch64(s, at + 48)).rotate_right(42).wrapping_mul(K1);
        x ^= w.1;
        y = y.wrapping_add(v.0).wrapping_add(fetch64(s, at + 40));
        z = z.wrapping_add(w.0).rotate_right(33).wrapping_mul(K1);
        v = weak_32_with_seeds(s, at, v.1.wrapping_mul(K1), x.wrapping_add(w.0));
        w = weak_32_with_seeds(s, at + 32, z.wrapping_add(w.1), y.wrapping_add(fetch64(s, at + 16)));
        std::mem::swap(&mut z, &mut x);
        at += 64;
        if at == end {
            break;
        }
    }
    let mul = K1.wrapping_add((z & 0xff) << 1);
    at = last64;
    w.0 = w.0.wrapping_add(((len - 1) & 63) as u64);
    v.0 = v.0.wrapping_add(w.0);
    w.0 = w.0.wrapping_add(v.0);
    x = x.wrapping_add(y).wrapping_add(v.0).wrapping_add(fetch64(s, at + 8)).rotate_right(37).wrapping_mul(mul);
    y = y.wrapping_add(v.1).wrapping_add(fetch64(s, at + 48)).rotate_right(42).wrapping_mul(mul);
    x ^= w.1.wrapping_mul(9);
    y = y.wrapping_add(v.0.wrapping_mul(9)).wrapping_add(fetch64(s, at + 40));
    z = z.wrapping_add(w.0).rotate_right(33).wrapping_mul(mul);
    v = weak_32_with_seeds(s, at, v.1.wrapping_mul(mul), x.wrapping_add(w.0));
    w = weak_32_with_seeds(s, at + 32, z.wrapping_add(w.1), y.wrapping_add(fetch64(s, at + 16)));
    std::mem::swap(&mut z, &mut x);
    hash_len16(
        hash_len16(v.0, w.0, mul).wrapping_add(shift_mix(y).wrapping_mul(K0)).wrapping_add(z),
        hash_len16(v.1, w.1, mul).wrapping_add(x),
        mul,
    )
}

/// SipHash-2-4 of `s` under the 128-bit key `(k0, k1)`.
pub fn siphash24(k0: u64, k1: u64, s: &[u8]) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    #[inline(always)]
    fn round(v: &mut [u64; 4]) {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    }
    let mut chunks = s.chunks_exact(8);
    for c in &mut chunks {
        let m = fetch64(c, 0);
        v[3] ^= m;
        round(&mut v);
        round(&mut v);
        v[0] ^= m;
    }
    let mut last = [0u8; 8];
    let rest = chunks.remainder();
    last[..rest.len()].copy_from_slice(rest);
    let m = u64::from_le_bytes(last) | ((s.len() as u64 & 0xff) << 56);
    v[3] ^= m;
    round(&mut v);
    round(&mut v);
    v[0] ^= m;
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}
