//! Reduction loops over contiguous memory. A reduction over arbitrary axes is rewritten as
//! a sequence of two canonical shapes: `[outer, r]` reduced over `r` (row reduce, lane
//! accumulators so the compiler vectorizes) and `[outer, r, inner]` reduced over `r`
//! (column reduce: whole rows combined elementwise). Work splits over rayon by blocks whose
//! boundaries depend only on the shape, so results are deterministic.

use rayon::prelude::*;

use super::bcast::{chunk_len, PAR_THRESHOLD};
use super::elem::Num;
use ferroflow_core::Status;

/// Elements per partial result of a long contiguous reduction.
const BLOCK: usize = 16 * 1024;
/// Accumulator lanes of a contiguous reduction.
const LANES: usize = 16;

/// An associative reduction.
pub trait Reducer<T: Num>: Copy + Send + Sync + 'static {
    /// The identity (value of an empty reduction).
    fn init() -> T;
    /// Combines two partial results.
    fn combine(a: T, b: T) -> T;
}

/// Defines each reducer `$r` (documented by `$doc`) with identity `T::$init` and
/// combining function `Num::$op`.
macro_rules! reducers {
    ($($doc:literal $r:ident: $init:ident, $op:ident;)*) => {
        $(
            #[doc = $doc]
            #[derive(Clone, Copy)]
            pub struct $r;

            impl<T: Num> Reducer<T> for $r {
                fn init() -> T {
                    T::$init
                }
                #[inline(always)]
                fn combine(a: T, b: T) -> T {
                    a.$op(b)
                }
            }
        )*
    };
}

reducers! {
    "Sum." SumR: ZERO, add;
    "Product." ProdR: ONE, mul;
    "Maximum (NaN propagates)." MaxR: MAX_INIT, tf_max;
    "Minimum (NaN propagates)." MinR: MIN_INIT, tf_min;
}

/// Reduces a short slice with independent lane accumulators.
#[inline]
fn reduce_lanes<T: Num, R: Reducer<T>>(x: &[T]) -> T {
    let mut acc = [R::init(); LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] = R::combine(acc[i], c[i]);
        }
    }
    let mut r = acc[0];
    for &a in &acc[1..] {
        r = R::combine(r, a);
    }
    for &v in rest {
        r = R::combine(r, v);
    }
    r
}

/// Reduces a contiguous slice: block partials (in parallel when long), combined in order.
pub fn reduce_slice<T: Num, R: Reducer<T>>(x: &[T]) -> T {
    if x.len() <= BLOCK {
        return reduce_lanes::<T, R>(x);
    }
    let partials: Vec<T> = if x.len() > PAR_THRESHOLD {
        x.par_chunks(BLOCK).map(reduce_lanes::<T, R>).collect()
    } else {
        x.chunks(BLOCK).map(reduce_lanes::<T, R>).collect()
    };
    partials.into_iter().reduce(R::combine).unwrap_or_else(R::init)
}

/// `[outer, r]` → `[outer]`.
pub fn reduce_rows<T: Num, R: Reducer<T>>(x: &[T], outer: usize, r: usize) -> Result<Vec<T>, Status> {
    let mut out = ferroflow_core::alloc::filled(&[outer], R::init())?;
    if r == 0 {
        return Ok(out);
    }
    if r > BLOCK || x.len() <= PAR_THRESHOLD {
        // Long rows parallelize inside `reduce_slice`.
        out.iter_mut().zip(x.chunks_exact(r)).for_each(|(o, row)| *o = reduce_slice::<T, R>(row));
    } else {
        let rows = (chunk_len(x.len()) / r).max(1);
        out.par_chunks_mut(rows).zip(x.par_chunks(rows * r)).for_each(|(o, xs)| {
            o.iter_mut().zip(xs.chunks_exact(r)).for_each(|(o, row)| *o = reduce_lanes::<T, R>(row));
        });
    }
    Ok(out)
}

/// Combines rows `x[i*c .. (i+1)*c]` of a `[rows, c]` block into `acc` elementwise.
#[inline]
fn fold_rows<T: Num, R: Reducer<T>>(acc: &mut [T], x: &[T], c: usize) {
    for row in x.chunks_exact(c) {
        acc.iter_mut().zip(row).for_each(|(a, &v)| *a = R::combine(*a, v));
    }
}

/// `[r, c]` → `[c]` (reduce the leading dimension).
fn reduce_cols_into<T: Num, R: Reducer<T>>(x: &[T], c: usize, out: &mut [T]) {
    out.fill(R::init());
    if x.len() <= PAR_THRESHOLD {
        fold_rows::<T, R>(out, x, c);
    } else if c >= 4096 {
        // Wide: split the columns; each task folds every row of its column range.
        let w = chunk_len(c).min(c);
        out.par_chunks_mut(w).enumerate().for_each(|(k, o)| {
            let (start, n) = (k * w, o.len());
            for row in x.chunks_exact(c) {
                o.iter_mut().zip(&row[start..start + n]).for_each(|(a, &v)| *a = R::combine(*a, v));
            }
        });
    } else {
        // Narrow: fixed row blocks give partial rows, combined in order.
        let rows = (BLOCK / c).max(1);
        let partials: Vec<Vec<T>> = x
            .par_chunks(rows * c)
            .map(|xs| {
                let mut p = vec![R::init(); c];
                fold_rows::<T, R>(&mut p, xs, c);
                p
            })
            .collect();
        for p in partials {
            out.iter_mut().zip(&p).for_each(|(a, &v)| *a = R::combine(*a, v));
        }
    }
}

/// `[outer, r, inner]` → `[outer, inner]`.
pub fn reduce_middle<T: Num, R: Reducer<T>>(x: &[T], outer: usize, r: usize, inner: usize) -> Result<Vec<T>, Status> {
    let mut out = ferroflow_core::alloc::filled(&[outer, inner], R::init())?;
    if r == 0 || inner == 0 {
        return Ok(out);
    }
    let block = r * inner;
    if outer >= 2 && x.len() > PAR_THRESHOLD {
        let per = (chunk_len(x.len()) / block).max(1);
        out.par_chunks_mut(per * inner).zip(x.par_chunks(per * block)).for_each(|(o, xs)| {
            for (o, xb) in o.chunks_exact_mut(inner).zip(xs.chunks_exact(block)) {
                o.fill(R::init());
                fold_rows::<T, R>(o, xb, inner);
            }
        });
    } else {
        for (o, xb) in out.chunks_exact_mut(inner).zip(x.chunks_exact(block)) {
            reduce_cols_into::<T, R>(xb, inner, o);
        }
    }
    Ok(out)
}

/// Reduces `x` of shape `dims` over the axes flagged in `reduced`; returns the values of
/// the kept axes in order.
pub fn reduce_axes<T: Num, R: Reducer<T>>(x: &[T], dims: &[usize], reduced: &[bool]) -> Result<Vec<T>, Status> {
    // Collapse: drop size-1 axes, merge neighbours with the same flag.
    let mut groups: Vec<(usize, bool)> = Vec::new();
    for (&d, &red) in dims.iter().zip(reduced) {
        if d == 1 {
            continue;
        }
        match groups.last_mut() {
            Some((s, f)) if *f == red => *s *= d,
            _ => groups.push((d, red)),
        }
    }
    let out_len: usize = groups.iter().filter(|g| !g.1).map(|g| g.0).product();
    if x.is_empty() {
        return ferroflow_core::alloc::filled(&[out_len], R::init());
    }
    let mut owned: Option<Vec<T>> = None;
    while let Some(j) = groups.iter().rposition(|g| g.1) {
        let cur: &[T] = owned.as_deref().unwrap_or(x);
        let outer: usize = groups[..j].iter().map(|g| g.0).product();
        let inner: usize = groups[j + 1..].iter().map(|g| g.0).product();
        let r = groups[j].0;
        let next =
            if inner == 1 { reduce_rows::<T, R>(cur, outer, r)? } else { reduce_middle::<T, R>(cur, outer, r, inner)? };
        groups.remove(j);
        if j > 0 && j < groups.len() {
            let (s, _) = groups.remove(j);
            groups[j - 1].0 *= s;
        }
        owned = Some(next);
    }
    match owned {
        Some(v) => Ok(v),
        None => {
            let mut v = ferroflow_core::alloc::with_capacity(&[x.len()])?;
            v.extend_from_slice(x);
            Ok(v)
        }
    }
}
