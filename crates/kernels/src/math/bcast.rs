//! NumPy broadcasting for elementwise kernels (reusable by every family).
//!
//! [`Plan`] collapses the broadcast of N operand shapes into the fewest dimensions (adjacent
//! dimensions where every operand is either read in full or broadcast merge), then visits the
//! output as contiguous *runs*: within a run each operand is either read contiguously (step 1)
//! or repeats one element (step 0). Same-shape, scalar-vs-tensor, row and column
//! broadcasting all become one or a few long runs, so inner loops are plain slices the
//! compiler vectorizes. [`par_runs`] splits large outputs over rayon by fixed-size chunks.
//!
//! ```
//! use ferroflow_kernels::math::bcast::{bcast_apply, Plan};
//! let plan = Plan::new([&[2usize, 3][..], &[3][..]]).unwrap();
//! let mut out = vec![0.0f32; plan.len()];
//! bcast_apply(&plan, &[1.0f32, 2., 3., 4., 5., 6.], &[10.0f32, 20., 30.], &mut out, |a, b| a + b);
//! assert_eq!(out, vec![11.0, 22., 33., 14., 25., 36.]);
//! ```

use std::sync::Arc;

use ferroflow_core::{Status, Tensor, TensorType};
use rayon::prelude::*;

/// Outputs with more elements than this are computed in parallel chunks.
pub const PAR_THRESHOLD: usize = 32 * 1024;

/// Broadcast shape of two shapes (NumPy rules), or `None` if they are incompatible.
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    Plan::new([a, b]).map(|p| p.out_shape)
}

/// Whether a tensor's buffer is referenced only by this handle (so it can be overwritten).
pub fn is_unshared(t: &Tensor) -> bool {
    Arc::strong_count(t.storage_arc()) == 1 && Arc::weak_count(t.storage_arc()) == 0
}

/// Iteration plan over the broadcast of `N` operands.
#[derive(Clone, Debug)]
pub struct Plan<const N: usize> {
    out_shape: Vec<usize>,
    len: usize,
    /// Collapsed output dimensions (at least one).
    dims: Vec<usize>,
    /// Per collapsed dimension, each operand's element stride (0 where it is broadcast).
    strides: Vec<[usize; N]>,
}

impl<const N: usize> Plan<N> {
    /// Plans the broadcast of `shapes`, or `None` if they are incompatible.
    pub fn new(shapes: [&[usize]; N]) -> Option<Plan<N>> {
        let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
        let dim = |k: usize, i: usize| -> usize {
            let s = shapes[k];
            if i + s.len() >= rank {
                s[i + s.len() - rank]
            } else {
                1
            }
        };
        let mut out_shape = Vec::with_capacity(rank);
        // (size, which operands are read in full) per output axis that is not 1.
        let mut groups: Vec<(usize, [bool; N])> = Vec::with_capacity(rank);
        for i in 0..rank {
            let mut d = 1;
            for k in 0..N {
                let dk = dim(k, i);
                if dk != 1 {
                    if d != 1 && d != dk {
                        return None;
                    }
                    d = dk;
                }
            }
            out_shape.push(d);
            if d == 1 {
                continue;
            }
            let mut full = [false; N];
            for (k, f) in full.iter_mut().enumerate() {
                *f = dim(k, i) == d;
            }
            match groups.last_mut() {
                Some((size, pat)) if *pat == full => *size *= d,
                _ => groups.push((d, full)),
            }
        }
        if groups.is_empty() {
            groups.push((1, [false; N]));
        }
        let dims: Vec<usize> = groups.iter().map(|g| g.0).collect();
        let mut strides = vec![[0usize; N]; dims.len()];
        let mut run = [1usize; N];
        for j in (0..dims.len()).rev() {
            for k in 0..N {
                if groups[j].1[k] {
                    strides[j][k] = run[k];
                    run[k] *= dims[j];
                }
            }
        }
        let len = out_shape.iter().product();
        Some(Plan { out_shape, len, dims, strides })
    }

    /// The broadcast output shape.
    pub fn out_shape(&self) -> &[usize] {
        &self.out_shape
    }

    /// Number of output elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the output is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Calls `f(out_pos, run_len, offsets, steps)` for each maximal run of output positions
    /// in `[start, end)`: operand `k` is read at `offsets[k] + i * steps[k]` (steps are 0 or 1).
    pub fn for_each_run(&self, start: usize, end: usize, mut f: impl FnMut(usize, usize, [usize; N], [usize; N])) {
        let end = end.min(self.len);
        if start >= end {
            return;
        }
        let r = self.dims.len();
        let inner = self.dims[r - 1];
        let steps = self.strides[r - 1];
        let mut idx = vec![0usize; r];
        let mut rem = start;
        for j in (0..r).rev() {
            idx[j] = rem % self.dims[j];
            rem /= self.dims[j];
        }
        let mut offs = [0usize; N];
        for (&i, st) in idx.iter().zip(&self.strides) {
            for (o, &s) in offs.iter_mut().zip(st) {
                *o += i * s;
            }
        }
        let mut pos = start;
        loop {
            let n = (inner - idx[r - 1]).min(end - pos);
            f(pos, n, offs, steps);
            pos += n;
            if pos >= end {
                return;
            }
            // The run ended at the end of the inner dimension: rewind it and carry outward.
            for (o, &s) in offs.iter_mut().zip(&steps) {
                *o -= idx[r - 1] * s;
            }
            idx[r - 1] = 0;
            for j in (0..r - 1).rev() {
                idx[j] += 1;
                let st = &self.strides[j];
                if idx[j] < self.dims[j] {
                    offs.iter_mut().zip(st).for_each(|(o, &s)| *o += s);
                    break;
                }
                // Wrapped: back to 0 in this dimension.
                offs.iter_mut().zip(st).for_each(|(o, &s)| *o -= s * (self.dims[j] - 1));
                idx[j] = 0;
            }
        }
    }
}

/// Chunk length for splitting `n` elements over the pool (fixed for a given `n`).
pub fn chunk_len(n: usize) -> usize {
    let parts = 4 * rayon::current_num_threads().max(1);
    n.div_ceil(parts).max(PAR_THRESHOLD / 4)
}

/// Visits the runs of `out` (whose length is `plan.len()`), in parallel chunks when large:
/// `f(out_run, offsets, steps)`, compiled for the process's instruction-set path.
pub fn par_runs<O: Send, const N: usize>(
    plan: &Plan<N>,
    out: &mut [O],
    f: impl Fn(&mut [O], [usize; N], [usize; N]) + Sync,
) {
    debug_assert_eq!(out.len(), plan.len());
    let n = out.len();
    let run_chunk = |base: usize, chunk: &mut [O]| {
        let end = base + chunk.len();
        crate::isa::vectorized(|| {
            plan.for_each_run(base, end, |pos, len, offs, steps| {
                f(&mut chunk[pos - base..pos - base + len], offs, steps)
            })
        });
    };
    if n <= PAR_THRESHOLD {
        run_chunk(0, out);
    } else {
        let c = chunk_len(n);
        out.par_chunks_mut(c).enumerate().for_each(|(i, chunk)| run_chunk(i * c, chunk));
    }
}

/// `out[i] = f(a[..], b[..])` over the broadcast of `a` and `b` (`out.len() == plan.len()`).
pub fn bcast_apply<A, B, O>(plan: &Plan<2>, a: &[A], b: &[B], out: &mut [O], f: impl Fn(A, B) -> O + Sync)
where
    A: Copy + Sync,
    B: Copy + Sync,
    O: Send,
{
    par_runs(plan, out, |o, [oa, ob], [sa, sb]| {
        let n = o.len();
        match (sa, sb) {
            (0, 0) => {
                let (x, y) = (a[oa], b[ob]);
                o.iter_mut().for_each(|v| *v = f(x, y));
            }
            (_, 0) => {
                let y = b[ob];
                o.iter_mut().zip(&a[oa..oa + n]).for_each(|(v, &x)| *v = f(x, y));
            }
            (0, _) => {
                let x = a[oa];
                o.iter_mut().zip(&b[ob..ob + n]).for_each(|(v, &y)| *v = f(x, y));
            }
            _ => {
                o.iter_mut().zip(a[oa..oa + n].iter().zip(&b[ob..ob + n])).for_each(|(v, (&x, &y))| *v = f(x, y));
            }
        }
    });
}

/// Like [`bcast_apply`] for operands passed by reference (strings and other non-`Copy`
/// elements).
pub fn bcast_apply_ref<A, B, O>(plan: &Plan<2>, a: &[A], b: &[B], out: &mut [O], f: impl Fn(&A, &B) -> O + Sync)
where
    A: Sync,
    B: Sync,
    O: Send,
{
    par_runs(plan, out, |o, [oa, ob], [sa, sb]| {
        for (i, v) in o.iter_mut().enumerate() {
            *v = f(&a[oa + i * sa], &b[ob + i * sb]);
        }
    });
}

/// In place: `a[i] = f(a[i], b[..])`; `a` must have the output's shape (`a.len() == plan.len()`).
pub fn bcast_apply_inplace_a<A, B>(plan: &Plan<2>, a: &mut [A], b: &[B], f: impl Fn(A, B) -> A + Sync)
where
    A: Copy + Send,
    B: Copy + Sync,
{
    inplace(plan, a, b, 1, f)
}

/// In place: `b[i] = f(a[..], b[i])`; `b` must have the output's shape.
pub fn bcast_apply_inplace_b<A, B>(plan: &Plan<2>, a: &[A], b: &mut [B], f: impl Fn(A, B) -> B + Sync)
where
    A: Copy + Sync,
    B: Copy + Send,
{
    inplace(plan, b, a, 0, |v, x| f(x, v))
}

/// In place: `out[i] = f(out[i], other[..])`, where `other` is the plan's operand `which`.
fn inplace<O, X>(plan: &Plan<2>, out: &mut [O], other: &[X], which: usize, f: impl Fn(O, X) -> O + Sync)
where
    O: Copy + Send,
    X: Copy + Sync,
{
    par_runs(plan, out, |o, offsets, strides| {
        let (off, stride) = (offsets[which], strides[which]);
        if stride == 0 {
            let x = other[off];
            o.iter_mut().for_each(|v| *v = f(*v, x));
        } else {
            let n = o.len();
            o.iter_mut().zip(&other[off..off + n]).for_each(|(v, &x)| *v = f(*v, x));
        }
    });
}

/// `f` over every element of `x` (a tensor of `dims`) into a new buffer from the fallible
/// allocation path, in parallel chunks when large, compiled for the process's
/// instruction-set path.
pub fn map_unary<T: Copy + Sync, O: TensorType + Copy + Default + Send>(
    dims: &[usize],
    x: &[T],
    f: impl Fn(T) -> O + Sync,
) -> Result<Vec<O>, Status> {
    let mut out = ferroflow_core::alloc::zeroed::<O>(dims)?;
    map_into(&mut out, x, f);
    Ok(out)
}

/// `out[i] = f(x[i])`, as [`map_unary`] computes them (for an `out` of the kernel's own
/// type).
pub fn map_into<T: Copy + Sync, O: Copy + Send>(out: &mut [O], x: &[T], f: impl Fn(T) -> O + Sync) {
    let run = |o: &mut [O], x: &[T]| crate::isa::vectorized(|| o.iter_mut().zip(x).for_each(|(o, &v)| *o = f(v)));
    if x.len() <= PAR_THRESHOLD {
        run(out, x);
    } else {
        let c = chunk_len(x.len());
        out.par_chunks_mut(c).zip(x.par_chunks(c)).for_each(|(o, x)| run(o, x));
    }
}

/// `x[i] = f(x[i])`, in parallel chunks when large, compiled for the process's
/// instruction-set path.
pub fn map_inplace<T: Copy + Send>(x: &mut [T], f: impl Fn(T) -> T + Sync) {
    let run = |x: &mut [T]| crate::isa::vectorized(|| x.iter_mut().for_each(|v| *v = f(*v)));
    if x.len() <= PAR_THRESHOLD {
        run(x);
    } else {
        let c = chunk_len(x.len());
        x.par_chunks_mut(c).for_each(run);
    }
}
