//! The hand-written parts of the Winograd convolutions (`winograd.rs`), generic over the
//! vector ([`F32Vec`]) and the tile ([`Tile`]): the input and output transforms of one
//! tile, the products `M[p] = V[p] · U[p]` and the loop over one band of an image.

use std::ops::Range;

use super::simd::{isa_entry_points, F32Vec, Y, Z};
use super::winograd::{plane, Shape};
use super::winograd_tile::Tile;

/// The transformed inputs `V` and products `M` of one block of tiles, reused from block to
/// block (and from image to image on one thread).
pub struct Scratch {
    v: Vec<f32>,
    m: Vec<f32>,
}

impl Scratch {
    /// Room for `T::TILES` tiles of `s`.
    pub fn new<T: Tile<M, N>, const M: usize, const N: usize>(s: &Shape) -> Scratch {
        Scratch { v: vec![0f32; N * N * plane(T::TILES, s.c)], m: vec![0f32; N * N * plane(T::TILES, s.k)] }
    }
}
/// `V[p][t]` (`v`: `N²` planes of `pv` floats, rows of `c`) for tile (ty, tx) of one image `x`.
///
/// # Safety
/// The CPU must support `V`'s instructions; `x` is one image of `s`, `t` fits a plane, `v`
/// holds `N²·pv` and `c` is a multiple of `V::LANES`.
#[inline(always)]
pub(super) unsafe fn input_tile<V: F32Vec, T: Tile<M, N>, const M: usize, const N: usize>(
    s: &Shape,
    x: &[f32],
    (ty, tx): (usize, usize),
    (t, pv): (usize, usize),
    v: &mut [f32],
) {
    let c = s.c;
    let (iy0, ix0) = ((M * ty) as isize - s.pad_y as isize, (M * tx) as isize - s.pad_x as isize);
    let inside = |i: isize, n: usize| i >= 0 && (i as usize) < n;
    // SAFETY: reads are of in-bounds pixels (checked) at channels g0..g0 + LANES <= c;
    // writes land in v (p < N², t < the plane's rows, g0 + LANES <= c).
    unsafe {
        for g0 in (0..c).step_by(V::LANES) {
            let mut rows = [[V::zero(); N]; N];
            for (r, row) in rows.iter_mut().enumerate() {
                let iy = iy0 + r as isize;
                let mut d = [V::zero(); N];
                if inside(iy, s.ih) {
                    for (sc, ds) in d.iter_mut().enumerate() {
                        let ix = ix0 + sc as isize;
                        if inside(ix, s.iw) {
                            *ds = V::load(x.as_ptr().add((iy as usize * s.iw + ix as usize) * c + g0));
                        }
                    }
                }
                *row = T::input_1d(d);
            }
            for j in 0..N {
                let col = T::input_1d(rows.map(|r| r[j]));
                for (i, vi) in col.iter().enumerate() {
                    vi.store(v.as_mut_ptr().add((i * N + j) * pv + t * c + g0));
                }
            }
        }
    }
}

/// Writes tile (ty, tx) of one image's output from `M[p][t]` (`m`: `N²` planes of
/// `T::TILES` rows of `k`) to `out`, which starts at output row `row0`.
///
/// # Safety
/// As [`input_tile`], with `out` the image's output rows `row0..` up to and including the
/// tile's (or to the image's end), and `m` of `N²` such planes.
#[inline(always)]
unsafe fn output_tile<V: F32Vec, T: Tile<M, N>, const M: usize, const N: usize>(
    s: &Shape,
    m: &[f32],
    (ty, tx): (usize, usize),
    t: usize,
    (out, row0): (&mut [f32], usize),
) {
    let (k, pm) = (s.k, plane(T::TILES, s.k));
    // SAFETY: reads from m as input_tile writes v; writes only to output pixels inside
    // the image, channels g0..g0 + LANES <= k.
    unsafe {
        for g0 in (0..k).step_by(V::LANES) {
            let mut cols = [[V::zero(); M]; N];
            for (j, col) in cols.iter_mut().enumerate() {
                let mut mj = [V::zero(); N];
                for (i, mij) in mj.iter_mut().enumerate() {
                    *mij = V::load(m.as_ptr().add((i * N + j) * pm + t * k + g0));
                }
                *col = T::output_1d(mj);
            }
            for a in 0..M {
                let oy = M * ty + a;
                if oy >= s.oh {
                    break;
                }
                let y = T::output_1d(cols.map(|c| c[a]));
                for (b, yb) in y.iter().enumerate() {
                    let ox = M * tx + b;
                    if ox < s.ow {
                        yb.store(out.as_mut_ptr().add(((oy - row0) * s.ow + ox) * k + g0));
                    }
                }
            }
        }
    }
}

/// Rows of `M` computed together by one micro-kernel call.
const ROWS: usize = 6;

/// `m[t][kb..kb + L·LANES] = Σ_ci v[t][ci] · u[ci][kb..]` for the `R` rows from `t0`.
///
/// # Safety
/// The CPU must support `V`'s instructions; `v` holds rows `t0 + R` of `c`, `u` holds
/// `c` rows of `k`, `m` rows `t0 + R` of `k`, and `kb + L·LANES <= k`.
#[inline(always)]
unsafe fn rows<V: F32Vec, const L: usize, const R: usize>(
    v: &[f32],
    u: &[f32],
    m: &mut [f32],
    (c, k): (usize, usize),
    (t0, kb): (usize, usize),
) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let mut acc = [[V::zero(); L]; R];
        let (vp, up) = (v.as_ptr().add(t0 * c), u.as_ptr().add(kb));
        for ci in 0..c {
            let mut w = [V::zero(); L];
            for (l, wl) in w.iter_mut().enumerate() {
                *wl = V::load(up.add(ci * k + l * V::LANES));
            }
            for (r, ar) in acc.iter_mut().enumerate() {
                let a = V::splat(*vp.add(r * c + ci));
                for (al, &wl) in ar.iter_mut().zip(&w) {
                    *al = al.mul_add(a, wl);
                }
            }
        }
        let mp = m.as_mut_ptr().add(t0 * k + kb);
        for (r, ar) in acc.iter().enumerate() {
            for (l, al) in ar.iter().enumerate() {
                al.store(mp.add(r * k + l * V::LANES));
            }
        }
    }
}

/// The `L·LANES` output channels from `kb` of the first `n` rows.
///
/// # Safety
/// As [`rows`], for rows `0..n`.
#[inline(always)]
unsafe fn columns<V: F32Vec, const L: usize>(
    v: &[f32],
    u: &[f32],
    m: &mut [f32],
    ck: (usize, usize),
    n: usize,
    kb: usize,
) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let mut t = 0;
        while t + ROWS <= n {
            rows::<V, L, ROWS>(v, u, m, ck, (t, kb));
            t += ROWS;
        }
        match n - t {
            5 => rows::<V, L, 5>(v, u, m, ck, (t, kb)),
            4 => rows::<V, L, 4>(v, u, m, ck, (t, kb)),
            3 => rows::<V, L, 3>(v, u, m, ck, (t, kb)),
            2 => rows::<V, L, 2>(v, u, m, ck, (t, kb)),
            1 => rows::<V, L, 1>(v, u, m, ck, (t, kb)),
            _ => {}
        }
    }
}

/// `m = v · u` for the first `n` rows (`v`: rows of `c`, `u`: `c × k`), `LMAX` vectors
/// of output channels at a time.
///
/// # Safety
/// The CPU must support `V`'s instructions; `k` is a multiple of `V::LANES`.
#[inline(always)]
unsafe fn product<V: F32Vec, const LMAX: usize>(v: &[f32], u: &[f32], m: &mut [f32], (c, k): (usize, usize), n: usize) {
    assert!(v.len() >= n * c && u.len() >= c * k && m.len() >= n * k && k.is_multiple_of(V::LANES));
    // SAFETY: the sizes were checked above; the caller guarantees the instructions.
    unsafe {
        let mut kb = 0;
        while kb < k {
            let left = (k - kb) / V::LANES;
            if LMAX >= 4 && left >= 4 {
                columns::<V, 4>(v, u, m, (c, k), n, kb);
                kb += 4 * V::LANES;
            } else if left >= 2 {
                columns::<V, 2>(v, u, m, (c, k), n, kb);
                kb += 2 * V::LANES;
            } else {
                columns::<V, 1>(v, u, m, (c, k), n, kb);
                kb += V::LANES;
            }
        }
    }
}

/// One band of tile rows `rows` of one image: tiles `T::TILES` at a time, transformed,
/// multiplied and written back to `out`, the image's output from row `M·rows.start` on.
///
/// # Safety
/// The CPU must support `V`'s instructions; `x` and `u` have the sizes of one image of `s`
/// and of `T`'s transformed filter, `out` holds the band's output rows (`M·rows.len()`,
/// fewer at the image's end), `sc` was made for `T` and `s`.
#[inline(always)]
unsafe fn image<V: F32Vec, T: Tile<M, N>, const M: usize, const N: usize, const LMAX: usize>(
    s: &Shape,
    x: &[f32],
    u: &[f32],
    (out, rows): (&mut [f32], Range<usize>),
    sc: &mut Scratch,
) {
    let (c, k, tw) = (s.c, s.k, s.tiles_x(M));
    assert_eq!(out.len(), (M * rows.end).min(s.oh).saturating_sub(M * rows.start) * s.ow * k, "winograd: band size");
    let (pv, pm) = (plane(T::TILES, c), plane(T::TILES, k));
    assert!(sc.v.len() >= N * N * pv && sc.m.len() >= N * N * pm, "winograd: scratch size");
    let (mut t0, end) = (rows.start * tw, rows.end * tw);
    while t0 < end {
        let n = T::TILES.min(end - t0);
        for t in 0..n {
            // SAFETY: as this function's contract (t < TILES).
            unsafe { input_tile::<V, T, M, N>(s, x, ((t0 + t) / tw, (t0 + t) % tw), (t, pv), &mut sc.v) };
        }
        for p in 0..N * N {
            let (vp, up, mp) = (&sc.v[p * pv..], &u[p * c * k..], &mut sc.m[p * pm..]);
            // SAFETY: the caller guarantees the instructions; `product` checks sizes.
            unsafe { product::<V, LMAX>(vp, up, mp, (c, k), n) };
        }
        for t in 0..n {
            // SAFETY: as this function's contract (t < TILES); the tile's rows are in the band.
            unsafe {
                output_tile::<V, T, M, N>(s, &sc.m, ((t0 + t) / tw, (t0 + t) % tw), t, (&mut *out, M * rows.start))
            };
        }
        t0 += n;
    }
}

isa_entry_points! {
    [T: Tile<M, N>, const M: usize, const N: usize](
        s: &Shape,
        x: &[f32],
        u: &[f32],
        out: (&mut [f32], Range<usize>),
        sc: &mut Scratch,
    );
    /// [`image`] with AVX2 vectors (two per row: 12 accumulators fit AVX2's 16 registers).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; sizes as [`image`].
    pub fn image256 {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe { image::<Y, T, M, N, 2>(s, x, u, out, sc) }
    }
    /// [`image`] with AVX-512 vectors.
    ///
    /// # Safety
    /// The CPU must support AVX-512 F/BW/VL, AVX2 and FMA; sizes as [`image`].
    pub fn image512 {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe { image::<Z, T, M, N, 4>(s, x, u, out, sc) }
    }
}
