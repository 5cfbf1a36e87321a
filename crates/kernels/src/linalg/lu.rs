//! LU factorization with partial pivoting of one row-major n×n matrix, and solves with it.

use crate::math::elem::Float;

/// The factors of `P·A = L·U` stored in place (unit `L` below the diagonal, `U` on and
/// above), the row of each pivot and the permutation's sign.
pub(crate) struct Lu<T> {
    pub a: Vec<T>,
    pub n: usize,
    pub piv: Vec<usize>,
    /// +1 or -1: the sign of the row permutation.
    pub sign: T,
}

impl<T: Float> Lu<T> {
    /// Factors `a` (row-major, n×n); a zero pivot is kept (the matrix is singular).
    pub(crate) fn new(mut a: Vec<T>, n: usize) -> Lu<T> {
        let mut piv = vec![0; n];
        let mut sign = T::ONE;
        for k in 0..n {
            let mut p = k;
            let mut best = a[k * n + k].abs();
            for i in k + 1..n {
                let v = a[i * n + k].abs();
                if v > best {
                    best = v;
                    p = i;
                }
            }
            piv[k] = p;
            if p != k {
                for j in 0..n {
                    a.swap(k * n + j, p * n + j);
                }
                sign = -sign;
            }
            let d = a[k * n + k];
            if d == T::ZERO {
                continue;
            }
            let (top, rest) = a.split_at_mut((k + 1) * n);
            let krow = &top[k * n..k * n + n];
            for row in rest.chunks_mut(n) {
                let f = row[k] / d;
                row[k] = f;
                if f != T::ZERO {
                    for (x, &u) in row[k + 1..].iter_mut().zip(&krow[k + 1..]) {
                        *x = *x - f * u;
                    }
                }
            }
        }
        Lu { a, n, piv, sign }
    }

    /// The smallest |pivot| (0 for a singular matrix).
    pub(crate) fn min_abs_pivot(&self) -> T {
        (0..self.n).map(|i| self.a[i * self.n + i].abs()).fold(T::MIN_INIT, |m, v| if v < m { v } else { m })
    }

    /// Solves `A·X = B` in place for a row-major n×k `b`.
    pub(crate) fn solve(&self, b: &mut [T], k: usize) {
        let n = self.n;
        if k == 0 {
            return;
        }
        for (i, &p) in self.piv.iter().enumerate() {
            if p != i {
                for j in 0..k {
                    b.swap(i * k + j, p * k + j);
                }
            }
        }
        // L·Y = P·B (unit lower).
        for i in 0..n {
            let (done, rest) = b.split_at_mut(i * k);
            let row = &mut rest[..k];
            for (j, yj) in done.chunks(k).enumerate() {
                let l = self.a[i * n + j];
                if l != T::ZERO {
                    row.iter_mut().zip(yj).for_each(|(r, &y)| *r = *r - l * y);
                }
            }
        }
        // U·X = Y.
        for i in (0..n).rev() {
            let (head, tail) = b.split_at_mut((i + 1) * k);
            let row = &mut head[i * k..];
            for (j, xj) in tail.chunks(k).enumerate() {
                let u = self.a[i * n + i + 1 + j];
                if u != T::ZERO {
                    row.iter_mut().zip(xj).for_each(|(r, &x)| *r = *r - u * x);
                }
            }
            let d = self.a[i * n + i];
            row.iter_mut().for_each(|r| *r = *r / d);
        }
    }
}

/// The transpose of a row-major n×n matrix.
pub(crate) fn transposed<T: Copy>(a: &[T], n: usize) -> Vec<T> {
    let mut t = Vec::with_capacity(n * n);
    for j in 0..n {
        t.extend((0..n).map(|i| a[i * n + j]));
    }
    t
}
