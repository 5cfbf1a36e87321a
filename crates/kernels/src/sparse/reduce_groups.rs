//! The groups of a sparse reduction as TensorFlow forms them (entries reordered by the kept
//! coordinates, then the reduced ones; each run of equal kept coordinates is one group), and
//! the per-group sum and max as Eigen computes them on TensorFlow's CPU build: the sum of a
//! float group in AVX packets (8 float or 4 double lanes, four accumulators over blocks of
//! four packets, the tail added in order, lanes folded pairwise), which is bit-exact for
//! groups Eigen reduces on one thread (up to several thousand values); the max keeps a NaN
//! value once reached until a later value is not below it, starting from -inf.

use ferroflow_core::{Status, Tensor};

use super::elem::SegElem;
use super::util::Indices;
use crate::array::util::index_vec;
use crate::OpContext;

/// Which axes `reduction_axes` (a scalar or vector, each in [-rank, rank)) reduces.
pub(crate) fn reduced_axes(ctx: &OpContext, axes: &Tensor, rank: usize) -> Result<Vec<bool>, Status> {
    if axes.rank() > 1 {
        return Err(
            ctx.error(format!("Expected reduction_axes to be a scalar or a vector; got shape: {}", axes.shape()))
        );
    }
    let v = index_vec(axes).map_err(|e| ctx.error(e.message))?;
    let r = rank as i64;
    let mut reduced = vec![false; rank];
    for a in v {
        if a < -r || a >= r {
            return Err(ctx.error(format!("Invalid reduction dimension {a}, for input with {rank} dimensions.")));
        }
        reduced[((a + r) % r) as usize] = true;
    }
    Ok(reduced)
}

/// Entries in TensorFlow's reduction order and the groups among them.
pub(crate) struct Groups {
    /// Entry numbers, sorted by kept coordinates, then reduced ones.
    pub order: Vec<usize>,
    /// Each group's `[start, end)` in `order`.
    pub bounds: Vec<(usize, usize)>,
    /// The kept axes, ascending.
    pub kept: Vec<usize>,
}

/// Groups the entries of `m` by their coordinates on the axes not `reduced`.
pub(crate) fn group(m: &Indices, reduced: &[bool]) -> Groups {
    let kept: Vec<usize> = (0..reduced.len()).filter(|&k| !reduced[k]).collect();
    let key: Vec<usize> = kept.iter().copied().chain((0..reduced.len()).filter(|&k| reduced[k])).collect();
    let mut order: Vec<usize> = (0..m.n).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (m.row(a), m.row(b));
        key.iter().map(|&k| ra[k].cmp(&rb[k])).find(|o| o.is_ne()).unwrap_or(std::cmp::Ordering::Equal)
    });
    let same = |a: usize, b: usize| kept.iter().all(|&k| m.row(a)[k] == m.row(b)[k]);
    let mut bounds = Vec::new();
    let mut start = 0;
    for i in 1..=order.len() {
        if i == order.len() || !same(order[start], order[i]) {
            bounds.push((start, i));
            start = i;
        }
    }
    Groups { order, bounds, kept }
}

/// The element types of the sparse reductions, with Eigen's packet width and max start.
pub(crate) trait TfReduce: SegElem {
    /// Lanes of an AVX packet (1: integers, whose wrapping sum has one value in any order).
    const LANES: usize;
    /// The max reduction's initial value.
    const MAX_INIT: Self;
}

impl TfReduce for f32 {
    const LANES: usize = 8;
    const MAX_INIT: Self = f32::NEG_INFINITY;
}

impl TfReduce for f64 {
    const LANES: usize = 4;
    const MAX_INIT: Self = f64::NEG_INFINITY;
}

macro_rules! int_reduce {
    ($($t:ty),*) => {$(
        impl TfReduce for $t {
            const LANES: usize = 1;
            const MAX_INIT: Self = <$t>::MIN;
        }
    )*};
}
int_reduce!(i32, i64);

fn add_packet<T: TfReduce>(acc: &mut [T; 8], x: &[T]) {
    for (a, &v) in acc.iter_mut().zip(x) {
        *a = a.add(v);
    }
}

/// Eigen's full sum of `x`.
pub(crate) fn tf_sum<T: TfReduce>(x: &[T]) -> T {
    let ps = T::LANES;
    if ps <= 1 {
        return x.iter().fold(T::ZERO, |a, &v| a.add(v));
    }
    let n = x.len();
    let mut p0 = [T::ZERO; 8];
    let mut start = 0;
    if n >= 4 * ps {
        let (mut p1, mut p2, mut p3) = ([T::ZERO; 8], [T::ZERO; 8], [T::ZERO; 8]);
        let end = n / (4 * ps) * (4 * ps);
        for b in x[..end].chunks_exact(4 * ps) {
            add_packet(&mut p0, &b[..ps]);
            add_packet(&mut p1, &b[ps..2 * ps]);
            add_packet(&mut p2, &b[2 * ps..3 * ps]);
            add_packet(&mut p3, &b[3 * ps..]);
        }
        for p in [p1, p2, p3] {
            add_packet(&mut p0, &p[..ps]);
        }
        start = end;
    }
    if n >= ps && start <= n - ps {
        let end = n / ps * ps;
        for b in x[start..end].chunks_exact(ps) {
            add_packet(&mut p0, b);
        }
        start = end;
    }
    let acc = x[start..].iter().fold(T::ZERO, |a, &v| a.add(v));
    let mut len = ps;
    while len > 1 {
        len /= 2;
        for i in 0..len {
            p0[i] = p0[i].add(p0[i + len]);
        }
    }
    acc.add(p0[0])
}

/// Eigen's full max of `x`.
pub(crate) fn tf_max<T: TfReduce>(x: &[T]) -> T {
    x.iter().fold(T::MAX_INIT, |a, &v| if v < a { a } else { v })
}

/// Each group's reduced value (values taken in group order).
pub(crate) fn reduce_groups<T: TfReduce>(g: &Groups, vals: &[T], max: bool) -> Vec<T> {
    let mut buf = Vec::new();
    g.bounds
        .iter()
        .map(|&(s, e)| {
            buf.clear();
            buf.extend(g.order[s..e].iter().map(|&i| vals[i]));
            if max {
                tf_max(&buf)
            } else {
                tf_sum(&buf)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{tf_max, tf_sum};

    #[test]
    fn eigen_sum_order_and_max_nan() {
        // 1e8 then fifteen 3s: added in order each 3 rounds away (floats near 1e8 are 8
        // apart); in Eigen's eight lanes the 3s pair up before meeting 1e8.
        let mut x = vec![1e8f32];
        x.extend([3.0f32; 15]);
        assert_eq!(x.iter().fold(0f32, |a, &v| a + v), 1e8);
        assert_eq!(tf_sum(&x), 100_000_040.0);
        assert_eq!(tf_sum(&[1.0f32, 2.0, 3.0]), 6.0);
        assert_eq!(tf_sum::<i64>(&[i64::MAX, 1]), i64::MIN);
        assert!(tf_max(&[1.0f32, f32::NAN]).is_nan());
        assert_eq!(tf_max(&[f32::NAN, 1.0]), 1.0);
        assert_eq!(tf_max::<f32>(&[f32::NEG_INFINITY]), f32::NEG_INFINITY);
        assert_eq!(tf_max(&[-3i32, -7]), -3);
    }
}
