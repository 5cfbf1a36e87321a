//! Safe matrix-product front end: `gemm` (0.19) for f32/f64, plain loops for integers.
//!
//! Other families may reuse [`GemmScalar::gemm`] for any strided product.

use ferroflow_core::TensorType;
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
pub trait GemmScalar: TensorType + Copy + Default + Send + Sync {
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
    );

    /// The m×n product `a · b` in a new row-major buffer. The float forms write the
    /// product straight into fresh memory, without zero-filling it first.
    fn product(m: usize, n: usize, k: usize, a: Mat<Self>, b: Mat<Self>, parallel: bool) -> Vec<Self> {
        let mut c = vec![Self::default(); m * n];
        Self::gemm(m, n, k, a, b, &mut c, n, false, parallel);
        c
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

macro_rules! float_gemm {
    ($t:ty) => {
        impl GemmScalar for $t {
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
                unsafe { dispatch(m, n, k, Raw(c.as_mut_ptr()), ldc, a, b, accumulate, parallel, 1.0) }
            }

            fn product(m: usize, n: usize, k: usize, a: Mat<Self>, b: Mat<Self>, parallel: bool) -> Vec<Self> {
                a.check(m, k, "lhs");
                b.check(k, n, "rhs");
                let len = m.checked_mul(n).expect("gemm: output size overflows");
                let mut c: Vec<$t> = Vec::with_capacity(len);
                if len == 0 || k == 0 {
                    c.resize(len, 0.0);
                    return c;
                }
                // SAFETY: the views were bounds-checked, `c` has room for the m×n product
                // and is a fresh allocation aliasing neither input. gemm without
                // `accumulate` writes every element of the product before reading any
                // (its first pass over k stores, it never loads the destination), so all
                // `len` elements are initialized when it returns.
                unsafe {
                    dispatch(m, n, k, Raw(c.as_mut_ptr()), n, a, b, false, parallel, 1.0);
                    c.set_len(len);
                }
                c
            }
        }
    };
}

/// Runs a checked float product on the calling thread or split over the rayon pool.
///
/// # Safety
/// As [`raw_gemm`]: the views lie inside their slices and `c` (m×n, leading dimension
/// `ldc`) is writable and aliases neither input.
#[allow(clippy::too_many_arguments)]
unsafe fn dispatch<T: Copy + Send + Sync + 'static + std::ops::Add<Output = T>>(
    m: usize,
    n: usize,
    k: usize,
    c: Raw<T>,
    ldc: usize,
    a: Mat<T>,
    b: Mat<T>,
    accumulate: bool,
    parallel: bool,
    one: T,
) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        if transposes_better(m, n, k, &b) {
            return through_transpose(m, n, k, c, ldc, a, b, accumulate, parallel, one);
        }
        let threads = rayon::current_num_threads();
        let (ap, bp) = (Raw(a.data.as_ptr() as *mut T), Raw(b.data.as_ptr() as *mut T));
        if parallel && m * n * k >= PAR_GEMM_MIN && threads > 1 {
            split_gemm(m, n, k, threads, c, ldc, ap, a, bp, b, accumulate, one);
        } else {
            raw_gemm(m, n, k, c, ldc, ap, a, bp, b, accumulate, one);
        }
    }
}

/// A right operand of at least this many elements is too large to be re-packed cheaply.
const LARGE_RHS: usize = 1 << 19;

/// Whether `a · b` is faster computed as `(bᵀ · aᵀ)ᵀ`. For a row-major product gemm
/// re-packs the right operand's transpose in blocks unless `b` is stored row by row; when
/// `b` is a large transposed view (the `dy · Wᵀ` of a dense layer's input gradient) and
/// the output is narrower than `b` is wide, computing the transposed product, which reads
/// `b` in place, and transposing the small result is several times faster (the CNN's
/// 100×1024×3136 input gradient: 82 → 200 GFLOP/s on one AVX-512 core).
fn transposes_better<T>(m: usize, n: usize, k: usize, b: &Mat<T>) -> bool {
    b.rs == 1 && b.cs != 1 && n * k >= LARGE_RHS && m < n
}

/// `c (+)= a · b` computed as `t = bᵀ · aᵀ` into a scratch n×m buffer, then transposed
/// into `c` in tiles.
///
/// # Safety
/// As [`dispatch`].
#[allow(clippy::too_many_arguments)]
unsafe fn through_transpose<T: Copy + Send + Sync + 'static + std::ops::Add<Output = T>>(
    m: usize,
    n: usize,
    k: usize,
    c: Raw<T>,
    ldc: usize,
    a: Mat<T>,
    b: Mat<T>,
    accumulate: bool,
    parallel: bool,
    one: T,
) {
    let mut t: Vec<T> = Vec::with_capacity(n * m);
    let tp = Raw(t.as_mut_ptr());
    let (bt, at) = (Mat { data: b.data, rs: b.cs, cs: b.rs }, Mat { data: a.data, rs: a.cs, cs: a.rs });
    // SAFETY: `t` has room for the n×m product, which gemm writes in full before reading
    // (no accumulation), and aliases nothing; the transposed views cover the same elements.
    unsafe {
        dispatch(n, m, k, tp, m, bt, at, false, parallel, one);
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
#[derive(Clone, Copy)]
struct Raw<T>(*mut T);
// SAFETY: only used for disjoint output blocks and shared read-only inputs.
unsafe impl<T: Send> Send for Raw<T> {}
unsafe impl<T: Sync> Sync for Raw<T> {}

/// One single-threaded gemm call on raw views.
///
/// # Safety
/// The views must lie inside live allocations and `c` must alias neither input. `one` is
/// the scalar 1 (gemm's `alpha` and `beta`).
#[allow(clippy::too_many_arguments)]
unsafe fn raw_gemm<T: Copy + 'static>(
    m: usize,
    n: usize,
    k: usize,
    c: Raw<T>,
    ldc: usize,
    a: Raw<T>,
    av: Mat<T>,
    b: Raw<T>,
    bv: Mat<T>,
    accumulate: bool,
    one: T,
) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.0,
            1,
            ldc as isize,
            accumulate,
            a.0 as *const T,
            av.cs as isize,
            av.rs as isize,
            b.0 as *const T,
            bv.cs as isize,
            bv.rs as isize,
            one,
            one,
            false,
            false,
            false,
            Parallelism::None,
        )
    }
}

/// Cuts the product into `parts` blocks along its longer output dimension, one
/// single-threaded gemm each. On this machine kind that is 5–25 % faster than gemm's own
/// rayon split for the MNIST shapes (it packs less and balances exactly). The calling
/// thread computes blocks itself and idle pool threads claim the others
/// ([`crate::state::par::run_chunks`]), so a product started outside the pool does not
/// wait for pool threads to wake up and then for itself to be woken again.
///
/// # Safety
/// As [`raw_gemm`], for the whole m×n product.
#[allow(clippy::too_many_arguments)]
unsafe fn split_gemm<T: Copy + Send + Sync + 'static>(
    m: usize,
    n: usize,
    k: usize,
    parts: usize,
    c: Raw<T>,
    ldc: usize,
    a: Raw<T>,
    av: Mat<T>,
    b: Raw<T>,
    bv: Mat<T>,
    accumulate: bool,
    one: T,
) {
    let along_m = m >= n;
    let (total, unit) = if along_m { (m, 8) } else { (n, 16) };
    let per = total.div_ceil(parts).div_ceil(unit) * unit;
    let blocks = total.div_ceil(per);
    crate::state::par::run_chunks(blocks, &move |i| {
        let (c, a, b) = (c, a, b);
        let start = i * per;
        let len = per.min(total - start);
        // SAFETY: block `start..start + len` of rows (or columns) lies inside the checked
        // views; blocks of `c` are disjoint across indices, and each index runs once.
        unsafe {
            if along_m {
                raw_gemm(
                    len,
                    n,
                    k,
                    Raw(c.0.add(start * ldc)),
                    ldc,
                    Raw(a.0.add(start * av.rs)),
                    av,
                    b,
                    bv,
                    accumulate,
                    one,
                )
            } else {
                raw_gemm(m, len, k, Raw(c.0.add(start)), ldc, a, av, Raw(b.0.add(start * bv.cs)), bv, accumulate, one)
            }
        }
    });
}

float_gemm!(f32);
float_gemm!(f64);

macro_rules! int_gemm {
    ($t:ty) => {
        impl GemmScalar for $t {
            fn gemm(
                m: usize,
                n: usize,
                k: usize,
                a: Mat<Self>,
                b: Mat<Self>,
                c: &mut [Self],
                ldc: usize,
                accumulate: bool,
                _parallel: bool,
            ) {
                a.check(m, k, "lhs");
                b.check(k, n, "rhs");
                check_dst(m, n, c, ldc);
                if !accumulate {
                    zero_dst(m, n, c, ldc);
                }
                for i in 0..m {
                    let row = &mut c[i * ldc..i * ldc + n];
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
    };
}
int_gemm!(i32);
int_gemm!(i64);

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(m: usize, n: usize, k: usize, a: Mat<f64>, b: Mat<f64>) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                for p in 0..k {
                    c[i * n + j] += a.data[i * a.rs + p * a.cs] * b.data[p * b.rs + j * b.cs];
                }
            }
        }
        c
    }

    #[test]
    fn strided_products_match_naive() {
        let (m, n, k) = (37, 29, 53);
        let a: Vec<f64> = (0..m * k).map(|x| ((x * 7) % 13) as f64 - 6.0).collect();
        let b: Vec<f64> = (0..k * n).map(|x| ((x * 5) % 11) as f64 - 5.0).collect();
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let am = Mat::row_major(&a, if ta { m } else { k }, ta);
            let bm = Mat::row_major(&b, if tb { k } else { n }, tb);
            let want = naive(m, n, k, am, bm);
            let mut c = vec![1.0; m * n];
            f64::gemm(m, n, k, am, bm, &mut c, n, false, true);
            assert_eq!(c, want);
            let mut ci = vec![1i64; m * n];
            let ai: Vec<i64> = a.iter().map(|&x| x as i64).collect();
            let bi: Vec<i64> = b.iter().map(|&x| x as i64).collect();
            i64::gemm(m, n, k, Mat { data: &ai, ..am.cast() }, Mat { data: &bi, ..bm.cast() }, &mut ci, n, true, false);
            assert_eq!(ci, want.iter().map(|&x| x as i64 + 1).collect::<Vec<_>>());
        }
    }

    impl<'a> Mat<'a, f64> {
        fn cast(self) -> Mat<'static, i64> {
            Mat { data: &[], rs: self.rs, cs: self.cs }
        }
    }

    /// Products above [`PAR_GEMM_MIN`] are split into blocks along the longer output
    /// dimension (rows for tall, columns for wide); every block must land in place, also
    /// with a padded destination and when accumulating.
    #[test]
    fn split_products_match_naive() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for (m, n, k) in [(131, 45, 97), (45, 131, 97)] {
            assert!(m * n * k >= PAR_GEMM_MIN);
            let a: Vec<f64> = (0..m * k).map(|x| ((x * 7) % 13) as f64 - 6.0).collect();
            let b: Vec<f64> = (0..k * n).map(|x| ((x * 5) % 11) as f64 - 5.0).collect();
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                let am = Mat::row_major(&a, if ta { m } else { k }, ta);
                let bm = Mat::row_major(&b, if tb { k } else { n }, tb);
                let want = naive(m, n, k, am, bm);
                let ldc = n + 3;
                let mut c = vec![2.0; m * ldc];
                pool.install(|| f64::gemm(m, n, k, am, bm, &mut c, ldc, true, true));
                for i in 0..m {
                    for j in 0..n {
                        assert_eq!(c[i * ldc + j], want[i * n + j] + 2.0, "({i}, {j}) of {m}x{n}x{k} ta={ta} tb={tb}");
                    }
                    assert_eq!(&c[i * ldc + n..i * ldc + ldc], &[2.0; 3], "padding of row {i} untouched");
                }
            }
        }
    }

    /// A large transposed right operand goes through the transposed product
    /// ([`transposes_better`]): with a padded destination, accumulating or not, split or
    /// not, the result lands in place.
    #[test]
    fn large_transposed_rhs_matches_naive() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let (m, n, k) = (5, 1030, 520);
        let a: Vec<f64> = (0..m * k).map(|x| ((x * 7) % 13) as f64 - 6.0).collect();
        let b: Vec<f64> = (0..k * n).map(|x| ((x * 5) % 11) as f64 - 5.0).collect();
        for ta in [false, true] {
            let am = Mat::row_major(&a, if ta { m } else { k }, ta);
            let bm = Mat::row_major(&b, k, true);
            assert!(transposes_better(m, n, k, &bm));
            let want = naive(m, n, k, am, bm);
            for (accumulate, parallel) in [(false, false), (true, true), (false, true)] {
                let ldc = n + 2;
                let mut c = vec![2.0; m * ldc];
                pool.install(|| f64::gemm(m, n, k, am, bm, &mut c, ldc, accumulate, parallel));
                for i in 0..m {
                    for j in 0..n {
                        let w = want[i * n + j] + if accumulate { 2.0 } else { 0.0 };
                        assert_eq!(c[i * ldc + j], w, "({i}, {j}) ta={ta} accumulate={accumulate}");
                    }
                    assert_eq!(&c[i * ldc + n..i * ldc + ldc], &[2.0; 2], "padding of row {i} untouched");
                }
            }
            assert_eq!(pool.install(|| f64::product(m, n, k, am, bm, true)), want);
        }
    }

    #[test]
    fn empty_inner_dim_zeroes_or_keeps() {
        let mut c = vec![3.0f32; 4];
        f32::gemm(2, 2, 0, Mat { data: &[], rs: 0, cs: 1 }, Mat { data: &[], rs: 2, cs: 1 }, &mut c, 2, true, false);
        assert_eq!(c, vec![3.0; 4]);
        f32::gemm(2, 2, 0, Mat { data: &[], rs: 0, cs: 1 }, Mat { data: &[], rs: 2, cs: 1 }, &mut c, 2, false, false);
        assert_eq!(c, vec![0.0; 4]);
    }

    /// `product` writes into fresh, unfilled memory: small, split and deep (several passes
    /// over k) products equal the naive ones, and empty shapes give zeros.
    #[test]
    fn products_into_fresh_buffers_match_naive() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for (m, n, k) in [(7, 5, 3), (131, 45, 97), (45, 131, 97), (9, 70, 1500)] {
            let a: Vec<f64> = (0..m * k).map(|x| ((x * 7) % 13) as f64 - 6.0).collect();
            let b: Vec<f64> = (0..k * n).map(|x| ((x * 5) % 11) as f64 - 5.0).collect();
            for (ta, tb) in [(false, false), (true, true)] {
                let am = Mat::row_major(&a, if ta { m } else { k }, ta);
                let bm = Mat::row_major(&b, if tb { k } else { n }, tb);
                let got = pool.install(|| f64::product(m, n, k, am, bm, true));
                assert_eq!(got, naive(m, n, k, am, bm), "{m}x{n}x{k} ta={ta} tb={tb}");
                let a32: Vec<f32> = a.iter().map(|&x| x as f32).collect();
                let b32: Vec<f32> = b.iter().map(|&x| x as f32).collect();
                let am32 = Mat { data: &a32[..], rs: am.rs, cs: am.cs };
                let bm32 = Mat { data: &b32[..], rs: bm.rs, cs: bm.cs };
                let got32 = f32::product(m, n, k, am32, bm32, false);
                assert!(got32.iter().zip(&got).all(|(x, y)| (*x as f64 - y).abs() <= 1e-3 * y.abs().max(1.0)));
            }
        }
        let empty = Mat { data: &[][..], rs: 0, cs: 1 };
        assert_eq!(f32::product(2, 3, 0, empty, Mat { data: &[][..], rs: 3, cs: 1 }, true), vec![0.0; 6]);
        assert!(f64::product(
            0,
            3,
            4,
            Mat { data: &[][..], rs: 4, cs: 1 },
            Mat { data: &[0.0; 12][..], rs: 3, cs: 1 },
            true
        )
        .is_empty());
        assert_eq!(
            i32::product(
                1,
                1,
                2,
                Mat { data: &[2, 3][..], rs: 2, cs: 1 },
                Mat { data: &[4, 5][..], rs: 1, cs: 1 },
                false
            ),
            vec![23]
        );
    }
}
