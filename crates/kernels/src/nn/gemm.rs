//! Safe matrix-product front end: `gemm` (0.19) for f32/f64, plain loops for integers.
//!
//! Other families may reuse [`GemmScalar::gemm`] for any strided product.

use ferroflow_core::{Status, TensorType};
use gemm::Parallelism;

/// Products with at least this many multiply-adds (m·n·k) use gemm's rayon parallelism.
/// Below it the fork/join costs more than it saves on a 2-core machine.
pub const PAR_GEMM_MIN: usize = 1 << 18;

/// A strided read-only matrix: element (i, j) is `data[i * rs + j * cs]`.
#[derive(Clone, Copy, Debug)]
pub struct Mat<'a, T> {
    /// Backing elements.
    pub data: &'a [T],
    /// Row stride.
    pub rs: usize,
    /// Column stride.
    pub cs: usize,
}

impl<'a, T> Mat<'a, T> {
    /// A row-major matrix with `cols` columns, or its transpose when `transposed`.
    pub fn row_major(data: &'a [T], cols: usize, transposed: bool) -> Self {
        if transposed {
            Mat { data, rs: 1, cs: cols }
        } else {
            Mat { data, rs: cols, cs: 1 }
        }
    }

    fn check(&self, rows: usize, cols: usize, what: &str) {
        if rows > 0 && cols > 0 {
            let last = (rows - 1) * self.rs + (cols - 1) * self.cs;
            assert!(last < self.data.len(), "gemm: {what} view {rows}x{cols} out of bounds ({})", self.data.len());
        }
    }
}

/// Element types with a matrix product.
pub trait GemmScalar: TensorType + Copy + Default + Send + Sync + sealed::Kernel {
    /// `c[i * ldc + j] (+)= Σ_p a(i, p) · b(p, j)` for an m×k `a` and a k×n `b`; accumulates
    /// into `c` when `accumulate`, else overwrites it. `parallel` allows multithreading when
    /// the product is large enough ([`PAR_GEMM_MIN`]).
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        m: usize,
        n: usize,
        k: usize,
        a: Mat<Self>,
        b: Mat<Self>,
        c: &mut [Self],
        ldc: usize,
        accumulate: bool,
        parallel: bool,
    ) {
        a.check(m, k, "lhs");
        b.check(k, n, "rhs");
        check_dst(m, n, c, ldc);
        if m == 0 || n == 0 {
            return;
        }
        if k == 0 {
            if !accumulate {
                zero_dst(m, n, c, ldc);
            }
            return;
        }
        // SAFETY: every view was bounds-checked above for its extent, strides are
        // non-negative, and `c` is borrowed mutably so it aliases neither input.
        unsafe { Self::run(Job { m, n, k, a, b, c: Raw(c.as_mut_ptr()), ldc, accumulate }, parallel) }
    }

    /// The m×n product `a · b` in a new row-major buffer from the fallible allocation path
    /// (RESOURCE_EXHAUSTED when it does not fit the task's memory budget). The float forms
    /// write the product straight into fresh memory, without zero-filling it first.
    fn product(m: usize, n: usize, k: usize, a: Mat<Self>, b: Mat<Self>, parallel: bool) -> Result<Vec<Self>, Status> {
        a.check(m, k, "lhs");
        b.check(k, n, "rhs");
        let len = m.checked_mul(n).ok_or_else(|| {
            Status::resource_exhausted(format!("OOM when allocating a {m}x{n} product: its size overflows"))
        })?;
        if len == 0 || k == 0 || !Self::WRITES_BEFORE_READING {
            let mut c = ferroflow_core::alloc::zeroed::<Self>(&[m, n])?;
            Self::gemm(m, n, k, a, b, &mut c, n, false, parallel);
            return Ok(c);
        }
        let mut c: Vec<Self> = ferroflow_core::alloc::with_capacity(&[m, n])?;
        // SAFETY: the views were bounds-checked, `c` has room for the m×n product and is a
        // fresh allocation aliasing neither input. A kernel that `WRITES_BEFORE_READING`
        // without `accumulate` writes every element of the product before reading any, so
        // all `len` elements are initialized when it returns.
        unsafe {
            Self::run(Job { m, n, k, a, b, c: Raw(c.as_mut_ptr()), ldc: n, accumulate: false }, parallel);
            c.set_len(len);
        }
        Ok(c)
    }
}

/// The per-type kernels behind [`GemmScalar`], out of reach of other crates.
mod sealed {
    /// Runs a checked product.
    pub trait Kernel: Sized {
        /// Whether a product without `accumulate` stores every output element before it
        /// loads any (so the destination may be uninitialized memory).
        const WRITES_BEFORE_READING: bool;

        /// Computes `job` (m, n, k ≥ 1).
        ///
        /// # Safety
        /// The views lie inside their slices and `job.c` (m×n, leading dimension `ldc`) is
        /// writable and aliases neither input.
        unsafe fn run(job: super::Job<'_, Self>, parallel: bool);
    }
}

fn check_dst<T>(m: usize, n: usize, c: &[T], ldc: usize) {
    if m > 0 && n > 0 {
        assert!(
            ldc >= n && (m - 1) * ldc + n <= c.len(),
            "gemm: destination {m}x{n} (ld {ldc}) out of bounds ({})",
            c.len()
        );
    }
}

fn zero_dst<T: Copy + Default>(m: usize, n: usize, c: &mut [T], ldc: usize) {
    for i in 0..m {
        c[i * ldc..i * ldc + n].fill(T::default());
    }
}

/// One checked product `c (+)= a · b`: `a` m×k, `b` k×n, `c` m×n with leading dimension
/// `ldc`, accumulated into when `accumulate`.
pub struct Job<'a, T> {
    m: usize,
    n: usize,
    k: usize,
    a: Mat<'a, T>,
    b: Mat<'a, T>,
    c: Raw<T>,
    ldc: usize,
    accumulate: bool,
}

impl<T: Copy> Clone for Job<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Copy> Copy for Job<'_, T> {}

/// The float and complex types: gemm's kernels.
trait Float: ferroflow_core::TensorType + Copy + Send + Sync + 'static + std::ops::Add<Output = Self> {
    const ONE: Self;
}
impl Float for f32 {
    const ONE: f32 = 1.0;
}
impl Float for f64 {
    const ONE: f64 = 1.0;
}
impl Float for ferroflow_core::C64 {
    const ONE: Self = ferroflow_core::C64::new(1.0, 0.0);
}
impl Float for ferroflow_core::C128 {
    const ONE: Self = ferroflow_core::C128::new(1.0, 0.0);
}

macro_rules! float_gemm {
    ($($t:ty),*) => {$(
        impl sealed::Kernel for $t {
            // gemm's first pass over k stores, it never loads the destination.
            const WRITES_BEFORE_READING: bool = true;
            unsafe fn run(job: Job<'_, Self>, parallel: bool) {
                // SAFETY: the caller upholds this function's `# Safety` contract.
                unsafe { dispatch(job, parallel) }
            }
        }
        impl GemmScalar for $t {}
    )*};
}

/// Runs a checked float product on the calling thread or split over the rayon pool.
///
/// # Safety
/// As [`sealed::Kernel::run`].
unsafe fn dispatch<T: Float>(job: Job<'_, T>, parallel: bool) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        if copies_better(job.m, job.n, job.k, &job.b) {
            return through_copy(job, parallel);
        }
        if transposes_better(job.m, job.n, job.k, &job.b) {
            return through_transpose(job, parallel);
        }
        direct(job, parallel)
    }
}

/// The product as given, on the calling thread or split over the pool.
///
/// # Safety
/// As [`dispatch`].
unsafe fn direct<T: Float>(job: Job<'_, T>, parallel: bool) {
    let threads = rayon::current_num_threads();
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        if parallel && job.m * job.n * job.k >= PAR_GEMM_MIN && threads > 1 {
            split_gemm(job, threads);
        } else {
            raw_gemm(job);
        }
    }
}

/// A transposed right operand of at least this many elements is re-packed more slowly than
/// the product is computed the other way round (measured on AVX-512: the LSTM(256)
/// `dz · Uᵀ` of 32×1024 by 1024×256, 504 → 148 us; 32×1024 by 1024×64, 97 → 85 us).
const LARGE_RHS: usize = 1 << 14;

/// Whether `a · b` is faster computed as `(bᵀ · aᵀ)ᵀ`. For a row-major product gemm
/// re-packs the right operand's transpose in blocks unless `b` is stored row by row; when
/// `b` is a transposed view (the `dy · Wᵀ` of a dense layer's or a recurrent cell's input
/// gradient) of more than a few thousand elements and the output is narrower than `b` is
/// wide, computing the transposed product, which reads `b` in place, and transposing the
/// small result is several times faster (the CNN's 100×1024×3136 input gradient: 82 → 200
/// GFLOP/s on one AVX-512 core).
#[doc(hidden)]
pub fn transposes_better<T>(m: usize, n: usize, k: usize, b: &Mat<T>) -> bool {
    b.rs == 1 && b.cs != 1 && n * k >= LARGE_RHS && m < n
}

/// Copies of at least this many elements are split over the threads.
const PAR_COPY_MIN: usize = 1 << 16;

/// Products with at least this many rows read a transposed right operand from a row-major
/// copy instead ([`copies_better`]).
const COPY_MIN_ROWS: usize = 128;

/// Whether `a · b` is faster with `b` copied row by row first. gemm runs about 1.5× slower
/// when the right operand is stored column by column (a transposed view: the `dy · Wᵀ` of a
/// convolution's or a dense layer's input gradient) than when it is stored row by row
/// (512×256 by 256×2304: 4.7 against 3.0 ms on two AVX-512 cores); with enough rows the
/// k·n moves of the copy cost far less than that. When the operand is larger than the
/// transposed product's moves (m·k to pack `aᵀ`, m·n to turn the result), the transposed
/// product ([`transposes_better`]) is cheaper still: ResNet50's 1×1 input gradients at 4×4,
/// 128×512 by 512×2048, 3.7 ms through a copy against 1.5 ms transposed.
#[doc(hidden)]
pub fn copies_better<T>(m: usize, n: usize, k: usize, b: &Mat<T>) -> bool {
    b.rs == 1 && b.cs != 1 && n * k >= LARGE_RHS && m >= COPY_MIN_ROWS && m * (n + k) >= n * k
}

/// The `rows × cols` matrix stored row by row at `src` (leading dimension `ld`), transposed
/// into a new row-major `cols × rows` buffer, in cache-sized tiles, split over the pool
/// when `parallel` and the copy is large. None when it does not fit the memory budget.
pub(crate) fn transposed_copy<T: TensorType + Copy + Send + Sync>(
    src: &[T],
    rows: usize,
    cols: usize,
    ld: usize,
    parallel: bool,
) -> Option<Vec<T>> {
    const TILE: usize = 32;
    if rows == 0 || cols == 0 {
        return Some(Vec::new());
    }
    let mut dst = ferroflow_core::alloc::with_capacity::<T>(&[cols, rows]).ok()?;
    // One band of TILE destination rows (source columns `c0..`) at a time, in tiles, each
    // element written once into the uninitialized room (no fill pass first).
    let band = |(bi, out): (usize, &mut [std::mem::MaybeUninit<T>])| {
        let c0 = bi * TILE;
        let c1 = (c0 + TILE).min(cols);
        for r0 in (0..rows).step_by(TILE) {
            for r in r0..(r0 + TILE).min(rows) {
                for (j, &v) in src[r * ld + c0..r * ld + c1].iter().enumerate() {
                    out[j * rows + r].write(v);
                }
            }
        }
    };
    let room = &mut dst.spare_capacity_mut()[..rows * cols];
    if parallel && rows * cols >= PAR_COPY_MIN && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        room.par_chunks_mut(TILE * rows).enumerate().for_each(band);
    } else {
        room.chunks_mut(TILE * rows).enumerate().for_each(band);
    }
    // SAFETY: band `bi` holds destination rows `bi·TILE..` (the last band the rest), and
    // writes every column `r < rows` of each of them: all `rows · cols` elements.
    unsafe { dst.set_len(rows * cols) };
    Some(dst)
}

/// `c (+)= a · b` with the transposed view `b` copied row by row first.
///
/// # Safety
/// As [`dispatch`].
unsafe fn through_copy<T: Float>(job: Job<'_, T>, parallel: bool) {
    // `b` (k × n, row stride 1) is the n × k matrix stored row by row with stride `cs`.
    let Some(rows) = transposed_copy(job.b.data, job.n, job.k, job.b.cs, parallel) else {
        // Over the budget (or refused): the direct product needs no copy.
        // SAFETY: as the caller's.
        return unsafe { direct(job, parallel) };
    };
    let b = Mat { data: &rows, rs: job.n, cs: 1 };
    // SAFETY: `rows` holds the same k × n elements as the checked view `job.b`.
    unsafe { direct(Job { b, ..job }, parallel) }
}

/// `c (+)= a · b` computed as `t = bᵀ · aᵀ` into a scratch n×m buffer, then transposed
/// into `c` in tiles.
///
/// # Safety
/// As [`dispatch`].
unsafe fn through_transpose<T: Float>(job: Job<'_, T>, parallel: bool) {
    let Job { m, n, k, a, b, c, ldc, accumulate } = job;
    let Ok(mut t) = ferroflow_core::alloc::with_capacity::<T>(&[n, m]) else {
        // Over the budget (or refused): the direct product needs no scratch.
        // SAFETY: as the caller's.
        return unsafe { direct(job, parallel) };
    };
    let (bt, at) = (Mat { data: b.data, rs: b.cs, cs: b.rs }, Mat { data: a.data, rs: a.cs, cs: a.rs });
    let transposed = Job { m: n, n: m, k, a: bt, b: at, c: Raw(t.as_mut_ptr()), ldc: m, accumulate: false };
    // SAFETY: `t` has room for the n×m product, which gemm writes in full before reading
    // (no accumulation), and aliases nothing; the transposed views cover the same elements.
    unsafe {
        dispatch(transposed, parallel);
        t.set_len(n * m);
    }
    const TILE: usize = 32;
    for j0 in (0..n).step_by(TILE) {
        let j1 = (j0 + TILE).min(n);
        for i in 0..m {
            // SAFETY: row i of `c` holds n elements at `i * ldc` (checked by the caller).
            let row = unsafe { std::slice::from_raw_parts_mut(c.0.add(i * ldc + j0), j1 - j0) };
            for (d, j) in row.iter_mut().zip(j0..j1) {
                let v = t[j * m + i];
                *d = if accumulate { *d + v } else { v };
            }
        }
    }
}

/// A pointer that may cross threads: the blocks [`split_gemm`] hands out are disjoint.
struct Raw<T>(*mut T);
impl<T> Clone for Raw<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Raw<T> {}
// SAFETY: only used for disjoint output blocks.
unsafe impl<T: Send> Send for Raw<T> {}
unsafe impl<T: Sync> Sync for Raw<T> {}

/// One single-threaded gemm call.
///
/// # Safety
/// As [`dispatch`].
unsafe fn raw_gemm<T: Float>(job: Job<'_, T>) {
    let Job { m, n, k, a, b, c, ldc, accumulate } = job;
    // SAFETY: the caller upholds this function's `# Safety` contract.
    ferroflow_core::alloc::dependency_scratch(|| unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.0,
            1,
            ldc as isize,
            accumulate,
            a.data.as_ptr(),
            a.cs as isize,
            a.rs as isize,
            b.data.as_ptr(),
            b.cs as isize,
            b.rs as isize,
            T::ONE,
            T::ONE,
            false,
            false,
            false,
            Parallelism::None,
        )
    })
}

/// Cuts the product into `parts` blocks along its longer output dimension, one
/// single-threaded gemm each. On this machine kind that is 5–25 % faster than gemm's own
/// rayon split for the MNIST shapes (it packs less and balances exactly). The calling
/// thread computes blocks itself and idle pool threads claim the others
/// ([`crate::state::par::run_chunks`]), so a product started outside the pool does not
/// wait for pool threads to wake up and then for itself to be woken again.
///
/// # Safety
/// As [`dispatch`].
unsafe fn split_gemm<T: Float>(job: Job<'_, T>, parts: usize) {
    let along_m = job.m >= job.n;
    let (total, unit) = if along_m { (job.m, 8) } else { (job.n, 16) };
    let per = total.div_ceil(parts).div_ceil(unit) * unit;
    let blocks = total.div_ceil(per);
    crate::state::par::run_chunks(blocks, &move |i| {
        // The whole job, not its fields: its pointer is only `Send` inside `Raw`.
        let job = job;
        let (start, (a, b)) = (i * per, (job.a, job.b));
        let len = per.min(total - start);
        // SAFETY: block `start..start + len` of rows (or columns) lies inside the checked
        // views; blocks of `c` are disjoint across indices, and each index runs once.
        unsafe {
            if along_m {
                let a = Mat { data: &a.data[start * a.rs..], ..a };
                raw_gemm(Job { m: len, a, c: Raw(job.c.0.add(start * job.ldc)), ..job })
            } else {
                let b = Mat { data: &b.data[start * b.cs..], ..b };
                raw_gemm(Job { n: len, b, c: Raw(job.c.0.add(start)), ..job })
            }
        }
    });
}

// gemm's own complex kernels serve complex64 and complex128 (no conjugation: callers
// conjugate an operand themselves where an adjoint asks for it).
float_gemm!(f32, f64, ferroflow_core::C64, ferroflow_core::C128);

macro_rules! int_gemm {
    ($($t:ty),*) => {$(
        impl sealed::Kernel for $t {
            const WRITES_BEFORE_READING: bool = false;
            unsafe fn run(job: Job<'_, Self>, _parallel: bool) {
                let Job { m, n, k, a, b, c, ldc, accumulate } = job;
                for i in 0..m {
                    // SAFETY: row i of `c` holds n elements at `i * ldc` (the caller's contract).
                    let row = unsafe { std::slice::from_raw_parts_mut(c.0.add(i * ldc), n) };
                    if !accumulate {
                        row.fill(0);
                    }
                    for p in 0..k {
                        let av = a.data[i * a.rs + p * a.cs];
                        if b.cs == 1 {
                            let brow = &b.data[p * b.rs..p * b.rs + n];
                            for (d, &bv) in row.iter_mut().zip(brow) {
                                *d = d.wrapping_add(av.wrapping_mul(bv));
                            }
                        } else {
                            for (j, d) in row.iter_mut().enumerate() {
                                *d = d.wrapping_add(av.wrapping_mul(b.data[p * b.rs + j * b.cs]));
                            }
                        }
                    }
                }
            }
        }
        impl GemmScalar for $t {}
    )*};
}
int_gemm!(i32, i64);
