//! Splitting an element-wise variable update over the cores.
//!
//! Updates run under the variable's write lock, so they must not use rayon's `join` or
//! `scope`: a thread waiting there runs other queued jobs, and one of them may be a kernel
//! that needs the same lock (deadlock). Spawning OS threads instead is slow on a busy
//! machine (the caller waits for a thread that is not scheduled). So the work is cut into
//! chunks that anyone may claim: the caller claims and processes chunks itself, and
//! `rayon::spawn`ed helpers claim the rest if a pool thread is free. The caller only ever
//! waits for chunks that another thread is already processing, and never runs foreign jobs.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Tensors at least this large are updated in parallel.
pub const PAR_MIN: usize = 32 * 1024;

/// Elements per claimable chunk.
const CHUNK: usize = 16 * 1024;

/// A chunk job as a raw pointer whose lifetime the claim protocol guarantees.
struct Work(*const (dyn Fn(usize) + Sync));

// SAFETY: the pointee is `Sync` and only called while the caller of `run_chunks` is still
// waiting (see `run_chunks`).
unsafe impl Send for Work {}
unsafe impl Sync for Work {}

struct State {
    next: AtomicUsize,
    done: AtomicUsize,
    n: usize,
    /// Chunks that were (or will be) claimed: `n` unless a panic stopped the claims.
    claimed: AtomicUsize,
    work: Work,
    /// The first panic of a helper's chunk, re-raised on the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl State {
    /// Claims and runs chunks until none is left (or one panicked: the panic is kept for
    /// the caller and no chunk starts after it).
    fn drain(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::AcqRel);
            if i >= self.n {
                return;
            }
            // SAFETY: chunk `i < n` is claimed but not counted done, so `run_chunks` has
            // not returned (it waits for every claimed chunk) and the closure behind the
            // pointer is alive.
            let r = catch_unwind(AssertUnwindSafe(|| unsafe { (*self.work.0)(i) }));
            let failed = r.is_err();
            if let Err(p) = r {
                self.panic.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(p);
                let claimed = self.next.swap(self.n, Ordering::AcqRel).min(self.n);
                self.claimed.fetch_min(claimed, Ordering::AcqRel);
            }
            // Counted only after a panic is recorded, so the caller sees it.
            self.done.fetch_add(1, Ordering::AcqRel);
            if failed {
                return;
            }
        }
    }
}

/// Runs `work(0..n)`, each index exactly once, on the calling thread and on idle rayon
/// threads. Returns when every index has run. (Also the split of large matrix products.)
///
/// If a chunk panics (on any thread), no further chunk starts, the call waits for the
/// chunks already running and then panics on the calling thread with the first payload,
/// so neither the closure nor the slices it borrows are used after this returns.
pub fn run_chunks(n: usize, work: &(dyn Fn(usize) + Sync)) {
    // SAFETY: erases the borrow's lifetime; the pointer is dereferenced only for a claimed
    // index, and this function waits below until every claimed index has finished.
    let work: &'static (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(work) };
    let state = Arc::new(State {
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        n,
        claimed: AtomicUsize::new(n),
        work: Work(work),
        panic: Mutex::new(None),
    });
    let helpers = rayon::current_num_threads().min(n).saturating_sub(1);
    for _ in 0..helpers {
        let st = state.clone();
        rayon::spawn(move || st.drain());
    }
    state.drain();
    while state.done.load(Ordering::Acquire) < state.claimed.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    let panic = state.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

/// Number of chunks for `n` elements (1 = run inline).
fn chunks(n: usize) -> usize {
    if n < PAR_MIN {
        1
    } else {
        n.div_ceil(CHUNK)
    }
}

/// A raw pointer that may cross threads (chunks are disjoint).
#[derive(Clone, Copy)]
pub struct Ptr<T>(*mut T);
// SAFETY: used only to rebuild disjoint sub-slices of a `&mut [T]` with `T: Send`.
unsafe impl<T: Send> Send for Ptr<T> {}
unsafe impl<T: Send> Sync for Ptr<T> {}

impl<T> Ptr<T> {
    /// The start of `s`, to hand out disjoint parts of it (see [`Ptr::slice`]).
    pub fn of(s: &mut [T]) -> Ptr<T> {
        Ptr(s.as_mut_ptr())
    }

    /// # Safety
    /// `start..start + len` lies in the original slice, which outlives the result, and no
    /// other live reference overlaps it.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice(&self, start: usize, len: usize) -> &mut [T] {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), len) }
    }
}

fn range(i: usize, n: usize) -> (usize, usize) {
    let start = i * CHUNK;
    (start, (start + CHUNK).min(n) - start)
}

/// `f(a_part, x_part)` over matching parts.
pub fn zip1<T: Send + Sync>(a: &mut [T], x: &[T], f: impl Fn(&mut [T], &[T]) + Sync) {
    let n = a.len().min(x.len());
    let k = chunks(n);
    if k <= 1 {
        return crate::isa::vectorized(|| f(a, x));
    }
    let pa = Ptr(a.as_mut_ptr());
    run_chunks(k, &|i| {
        let (s, l) = range(i, n);
        // SAFETY: chunk ranges are disjoint and each index runs once.
        let a = unsafe { pa.slice(s, l) };
        crate::isa::vectorized(|| f(a, &x[s..s + l]))
    });
}

/// `f(a_part, b_part, x_part)` over matching parts.
pub fn zip2<T: Send + Sync>(a: &mut [T], b: &mut [T], x: &[T], f: impl Fn(&mut [T], &mut [T], &[T]) + Sync) {
    let n = a.len().min(b.len()).min(x.len());
    let k = chunks(n);
    if k <= 1 {
        return crate::isa::vectorized(|| f(a, b, x));
    }
    let (pa, pb) = (Ptr(a.as_mut_ptr()), Ptr(b.as_mut_ptr()));
    run_chunks(k, &|i| {
        let (s, l) = range(i, n);
        // SAFETY: as in `zip1`; `a` and `b` are distinct slices.
        let (a, b) = unsafe { (pa.slice(s, l), pb.slice(s, l)) };
        crate::isa::vectorized(|| f(a, b, &x[s..s + l]))
    });
}

/// `f(a_part, b_part, c_part, x_part)` over matching parts.
pub fn zip3<T: Send + Sync>(
    a: &mut [T],
    b: &mut [T],
    c: &mut [T],
    x: &[T],
    f: impl Fn(&mut [T], &mut [T], &mut [T], &[T]) + Sync,
) {
    let n = a.len().min(b.len()).min(c.len()).min(x.len());
    let k = chunks(n);
    if k <= 1 {
        return crate::isa::vectorized(|| f(a, b, c, x));
    }
    let (pa, pb, pc) = (Ptr(a.as_mut_ptr()), Ptr(b.as_mut_ptr()), Ptr(c.as_mut_ptr()));
    run_chunks(k, &|i| {
        let (s, l) = range(i, n);
        // SAFETY: as in `zip1`; `a`, `b` and `c` are distinct slices.
        let (a, b, c) = unsafe { (pa.slice(s, l), pb.slice(s, l), pc.slice(s, l)) };
        crate::isa::vectorized(|| f(a, b, c, &x[s..s + l]))
    });
}

/// `f(a_part, b_part, c_part, d_part, x_part)` over matching parts.
#[allow(clippy::too_many_arguments)]
pub fn zip4<T: Send + Sync>(
    a: &mut [T],
    b: &mut [T],
    c: &mut [T],
    d: &mut [T],
    x: &[T],
    f: impl Fn(&mut [T], &mut [T], &mut [T], &mut [T], &[T]) + Sync,
) {
    let n = a.len().min(b.len()).min(c.len()).min(d.len()).min(x.len());
    let k = chunks(n);
    if k <= 1 {
        return crate::isa::vectorized(|| f(a, b, c, d, x));
    }
    let (pa, pb, pc, pd) = (Ptr(a.as_mut_ptr()), Ptr(b.as_mut_ptr()), Ptr(c.as_mut_ptr()), Ptr(d.as_mut_ptr()));
    run_chunks(k, &|i| {
        let (s, l) = range(i, n);
        // SAFETY: as in `zip1`; `a`, `b`, `c` and `d` are distinct slices.
        let (a, b, c, d) = unsafe { (pa.slice(s, l), pb.slice(s, l), pc.slice(s, l), pd.slice(s, l)) };
        crate::isa::vectorized(|| f(a, b, c, d, &x[s..s + l]))
    });
}

/// Fills `out` (empty, with capacity for `src.len()` elements) with a copy of `src`, part by
/// part, and calls `f(start, part)` on each part of `out` right after it was copied, while
/// it is still in cache: a copy and an update of it in one pass over memory instead of two.
/// Parts are claimed as in [`run_chunks`], so they may run on several threads. `out` holds
/// all of `src` when this returns (or nothing, if `f` panicked).
pub fn copy_then<T: Copy + Send + Sync>(src: &[T], out: &mut Vec<T>, f: impl Fn(usize, &mut [T]) + Sync) {
    let n = src.len();
    out.clear();
    out.reserve_exact(n);
    let po = Ptr(out.as_mut_ptr());
    let part = |s: usize, l: usize| {
        // SAFETY: `s..s + l` lies within `out`'s capacity (reserved above), parts are
        // disjoint and each runs once; the copy initializes the part before it is viewed as
        // `&mut [T]` (`T: Copy`, so no element is dropped or duplicated).
        let dst = unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr().add(s), po.0.add(s), l);
            po.slice(s, l)
        };
        f(s, dst)
    };
    let k = chunks(n);
    if k <= 1 {
        part(0, n);
    } else {
        run_chunks(k, &|i| {
            let (s, l) = range(i, n);
            part(s, l)
        });
    }
    // SAFETY: every part of `0..n` was copied from `src` above (`run_chunks` returns only
    // once every part ran; a panic in one skips this line).
    unsafe { out.set_len(n) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_then_copies_and_updates_every_part_once() {
        for n in [0, 5, PAR_MIN - 1, PAR_MIN + CHUNK + 3] {
            let src: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let mut out = Vec::new();
            copy_then(&src, &mut out, |s, part| {
                for (j, v) in part.iter_mut().enumerate() {
                    assert_eq!(*v, (s + j) as f32);
                    *v = *v * 2.0 + 1.0;
                }
            });
            let want: Vec<f32> = src.iter().map(|v| v * 2.0 + 1.0).collect();
            assert_eq!(out, want, "n = {n}");
        }
    }
}
