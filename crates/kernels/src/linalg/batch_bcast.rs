//! NumPy broadcasting of two operands' batch dimensions for the batched matrix kernels
//! (`BatchMatMulV2`, `MatrixTriangularSolve`): the output batch and, per output batch, the
//! flat batch index into each operand.

use crate::array::util::next_index;

/// Output batch dims and each operand's batch strides (zero where broadcast).
pub(crate) type Batches = (Vec<usize>, Vec<usize>, Vec<usize>);

/// Broadcasts two batch shapes (None when they are incompatible).
pub(crate) fn broadcast_batches(xb: &[usize], yb: &[usize]) -> Option<Batches> {
    let n = xb.len().max(yb.len());
    let pad = |d: &[usize]| -> Vec<usize> { std::iter::repeat_n(1, n - d.len()).chain(d.iter().copied()).collect() };
    let (xp, yp) = (pad(xb), pad(yb));
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(match (xp[i], yp[i]) {
            (a, b) if a == b => a,
            (1, b) => b,
            (a, 1) => a,
            _ => return None,
        });
    }
    // Row-major strides of each operand's batch, zero where broadcast.
    let strides = |p: &[usize]| -> Vec<usize> {
        let mut s = vec![0; n];
        let mut acc = 1;
        for i in (0..n).rev() {
            s[i] = if p[i] == 1 { 0 } else { acc };
            acc *= p[i];
        }
        s
    };
    Some((out, strides(&xp), strides(&yp)))
}

/// Appends to `idx`, per output batch of `out` in row-major order, the flat batch index into
/// each operand (batch strides `xs` and `ys`); the caller reserves the room.
pub(crate) fn push_batch_pairs(out: &[usize], xs: &[usize], ys: &[usize], idx: &mut Vec<(usize, usize)>) {
    let total: usize = out.iter().product();
    let mut pos = vec![0usize; out.len()];
    for _ in 0..total {
        let xi = pos.iter().zip(xs).map(|(p, s)| p * s).sum();
        let yi = pos.iter().zip(ys).map(|(p, s)| p * s).sum();
        idx.push((xi, yi));
        next_index(&mut pos, out);
    }
}
