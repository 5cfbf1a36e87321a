//! Strided gathers: the data movement behind Transpose, Slice, StridedSlice, Tile,
//! BroadcastTo and Pad. The output is the row-major index space `dims`; element `idx` reads
//! `src[offset + Σ idx_k · strides_k]` (strides may be 0 to broadcast or negative to reverse).

use ferroflow_core::{alloc, Status, TensorType};
use rayon::prelude::*;

use super::util::PAR_THRESHOLD;

/// Transpose tile edge (elements).
const BLOCK: usize = 32;

/// Drops unit dims and merges neighbours that are contiguous in the source.
fn simplify(dims: &[usize], strides: &[isize]) -> (Vec<usize>, Vec<isize>) {
    let mut d: Vec<usize> = Vec::with_capacity(dims.len());
    let mut s: Vec<isize> = Vec::with_capacity(dims.len());
    for (&n, &st) in dims.iter().zip(strides) {
        if n == 1 {
            continue;
        }
        let k = d.len();
        if k > 0 && s[k - 1] == st * n as isize {
            d[k - 1] *= n;
            s[k - 1] = st;
            continue;
        }
        d.push(n);
        s.push(st);
    }
    if d.is_empty() {
        d.push(1);
        s.push(0);
    }
    (d, s)
}

/// Iterates the source positions of consecutive rows of an outer index space.
struct Rows<'a> {
    dims: &'a [usize],
    strides: &'a [isize],
    idx: Vec<usize>,
    pos: isize,
}

impl<'a> Rows<'a> {
    fn starting_at(dims: &'a [usize], strides: &'a [isize], offset: isize, mut row: usize) -> Rows<'a> {
        let mut idx = vec![0; dims.len()];
        let mut pos = offset;
        for k in (0..dims.len()).rev() {
            idx[k] = row % dims[k];
            row /= dims[k];
            pos += idx[k] as isize * strides[k];
        }
        Rows { dims, strides, idx, pos }
    }

    fn advance(&mut self) {
        for k in (0..self.dims.len()).rev() {
            self.idx[k] += 1;
            self.pos += self.strides[k];
            if self.idx[k] < self.dims[k] {
                return;
            }
            self.pos -= self.strides[k] * self.dims[k] as isize;
            self.idx[k] = 0;
        }
    }
}

/// Writes one output row, `out[j] = src[pos + j·stride]`, into uninitialized room. `T`
/// needs no drop (the callers' `pod`), so a contiguous row is a plain memory copy.
fn write_row_uninit<T: Clone>(src: &[T], pos: isize, stride: isize, out: &mut [std::mem::MaybeUninit<T>]) {
    debug_assert!(!std::mem::needs_drop::<T>());
    let p = pos as usize;
    match stride {
        1 => {
            let row = &src[p..p + out.len()];
            // SAFETY: `row` and `out` have the same length and do not overlap (`out` is
            // fresh room); a `T` without drop glue is copied by its bytes, as `clone` does
            // for the number types this is called with.
            unsafe { std::ptr::copy_nonoverlapping(row.as_ptr(), out.as_mut_ptr().cast::<T>(), row.len()) };
        }
        _ => {
            for (j, o) in out.iter_mut().enumerate() {
                o.write(src[(pos + j as isize * stride) as usize].clone());
            }
        }
    }
}

fn push_row<T: Clone>(src: &[T], pos: isize, stride: isize, n: usize, out: &mut Vec<T>) {
    let p = pos as usize;
    match stride {
        1 => out.extend_from_slice(&src[p..p + n]),
        0 => out.extend(std::iter::repeat_n(src[p].clone(), n)),
        _ => out.extend((0..n).map(|j| src[(pos + j as isize * stride) as usize].clone())),
    }
}

/// Gathers `src` through a strided view. Every position the view reaches must be inside
/// `src` (callers validate shapes first; a violation is a bug and panics). The output
/// comes from [`alloc`]: RESOURCE_EXHAUSTED, never an abort, when it does not fit.
pub fn strided_gather<T: TensorType>(
    src: &[T],
    offset: isize,
    dims: &[usize],
    strides: &[isize],
) -> Result<Vec<T>, Status> {
    debug_assert_eq!(dims.len(), strides.len());
    let n: usize = dims.iter().product();
    if n == 0 {
        return Ok(Vec::new());
    }
    let (d, s) = simplify(dims, strides);
    let r = d.len();
    let (inner, is) = (d[r - 1], s[r - 1]);
    let pod = !std::mem::needs_drop::<T>();
    if pod && r >= 2 && s[r - 2] == 1 && is > 1 && inner > 1 {
        return transpose_gather(src, offset, &d, &s);
    }
    let (od, os) = (&d[..r - 1], &s[..r - 1]);
    let rows = n / inner;
    if pod && n >= PAR_THRESHOLD && rows >= 2 {
        // Written once, in parallel, into uninitialized room: no fill pass first (a large
        // Slice spent as long filling as copying).
        let mut out = alloc::with_capacity::<T>(dims)?;
        let chunk_rows = rows.div_ceil(4 * rayon::current_num_threads().max(1));
        out.spare_capacity_mut()[..n].par_chunks_mut(chunk_rows * inner).enumerate().for_each(|(c, chunk)| {
            let mut it = Rows::starting_at(od, os, offset, c * chunk_rows);
            for row in chunk.chunks_mut(inner) {
                write_row_uninit(src, it.pos, is, row);
                it.advance();
            }
        });
        // SAFETY: the chunks cover the first `n` elements of the room, and every row of
        // every chunk was written above.
        unsafe { out.set_len(n) };
        return Ok(out);
    }
    let mut out = alloc::with_capacity(dims)?;
    let mut it = Rows::starting_at(od, os, offset, 0);
    for _ in 0..rows {
        push_row(src, it.pos, is, inner, &mut out);
        it.advance();
    }
    Ok(out)
}

/// The last two view dims read the source transposed (`[.., A, B]` with strides
/// `[.., 1, sb]`): copy in cache-sized tiles.
fn transpose_gather<T: TensorType>(src: &[T], offset: isize, d: &[usize], s: &[isize]) -> Result<Vec<T>, Status> {
    let r = d.len();
    let (a_n, b_n, sb) = (d[r - 2], d[r - 1], s[r - 1]);
    let (bd, bs) = (&d[..r - 2], &s[..r - 2]);
    let n: usize = d.iter().product();
    let mat = a_n * b_n;
    let mut out = alloc::filled(d, src[offset as usize].clone())?;
    let big = n >= PAR_THRESHOLD;
    let strips = |base: isize, m: &mut [T]| {
        let f = |(k, strip): (usize, &mut [T])| tile_strip(src, base + (k * BLOCK) as isize, b_n, sb, strip);
        if big && bd.is_empty() {
            m.par_chunks_mut(BLOCK * b_n).enumerate().for_each(f);
        } else {
            m.chunks_mut(BLOCK * b_n).enumerate().for_each(f);
        }
    };
    if bd.is_empty() {
        strips(offset, &mut out);
    } else if big {
        out.par_chunks_mut(mat).enumerate().for_each(|(b, m)| strips(Rows::starting_at(bd, bs, offset, b).pos, m));
    } else {
        let mut it = Rows::starting_at(bd, bs, offset, 0);
        for m in out.chunks_mut(mat) {
            strips(it.pos, m);
            it.advance();
        }
    }
    Ok(out)
}

/// Fills `strip` (rows `a` of length `b_n`) with `src[base + a + j·sb]`, tile by tile.
fn tile_strip<T: Clone>(src: &[T], base: isize, b_n: usize, sb: isize, strip: &mut [T]) {
    let rows = strip.len() / b_n;
    for j0 in (0..b_n).step_by(BLOCK) {
        let j1 = (j0 + BLOCK).min(b_n);
        for a in 0..rows {
            let row = &mut strip[a * b_n + j0..a * b_n + j1];
            let p = base + a as isize + j0 as isize * sb;
            for (j, o) in row.iter_mut().enumerate() {
                *o = src[(p + j as isize * sb) as usize].clone();
            }
        }
    }
}

/// Writes `src` (row-major over `dims`) into `dst` through a strided view: the inverse of
/// [`strided_gather`]. Every position must be inside `dst`.
pub fn strided_scatter<T: Clone>(dst: &mut [T], offset: isize, dims: &[usize], strides: &[isize], src: &[T]) {
    let n: usize = dims.iter().product();
    if n == 0 {
        return;
    }
    let (d, s) = simplify(dims, strides);
    let r = d.len();
    let (inner, is) = (d[r - 1], s[r - 1]);
    let mut it = Rows::starting_at(&d[..r - 1], &s[..r - 1], offset, 0);
    for row in src.chunks(inner) {
        if is == 1 {
            let p = it.pos as usize;
            dst[p..p + inner].clone_from_slice(row);
        } else {
            for (j, v) in row.iter().enumerate() {
                dst[(it.pos + j as isize * is) as usize] = v.clone();
            }
        }
        it.advance();
    }
}

/// Row-major strides of `dims` as isize.
pub fn strides_of(dims: &[usize]) -> Vec<isize> {
    let mut s = vec![1isize; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1] as isize;
    }
    s
}
