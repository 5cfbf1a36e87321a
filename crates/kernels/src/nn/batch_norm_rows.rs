//! The channel-last row loops of the batch norms ([`super::batch_norm::Layout`]'s sums and
//! maps over `[rows, c]` data), as [`crate::isa::PathKernel`]s: each is inlined into one
//! function per instruction-set path, so its channel loop runs at the path's vector width
//! (as a closure given to [`crate::isa::vectorized`], the loop stayed a function compiled
//! for the baseline CPU: SSE, four lanes).

use std::mem::MaybeUninit;

/// Adds `f(a, b, e, params)[k]` of every element to `acc[k]` of its channel, over the whole
/// rows of `c` channels of `a`, `b`, `e`.
pub(super) struct SumRows<'a, F, const K: usize, const P: usize> {
    pub data: [&'a [f32]; 3],
    pub params: [&'a [f32]; P],
    pub c: usize,
    pub f: &'a F,
    pub acc: &'a mut [Vec<f32>; K],
}

impl<F, const K: usize, const P: usize> crate::isa::PathKernel for SumRows<'_, F, K, P>
where
    F: Fn(f32, f32, f32, [f32; P]) -> [f32; K],
{
    #[inline(always)]
    fn run(self) {
        let c = self.c;
        if c == 0 {
            return;
        }
        // Every slice cut to `c` here, so the indexing below needs no checks.
        let params: [&[f32]; P] = std::array::from_fn(|q| &self.params[q][..c]);
        let [a, b, e] = self.data;
        for ((ar, br), er) in a.chunks_exact(c).zip(b.chunks_exact(c)).zip(e.chunks_exact(c)) {
            let (ar, br, er) = (&ar[..c], &br[..c], &er[..c]);
            // One pass per sum: independent lanes, so the channel loop vectorizes.
            for (k, acc) in self.acc.iter_mut().enumerate() {
                let acc = &mut acc[..c];
                for j in 0..c {
                    acc[j] += (self.f)(ar[j], br[j], er[j], std::array::from_fn(|q| params[q][j]))[k];
                }
            }
        }
    }
}

/// Writes `f(a, b, e, params)` of every element of whole rows of `c` channels into `out`.
pub(super) struct MapRows<'a, F, const N: usize> {
    pub out: &'a mut [MaybeUninit<f32>],
    pub data: [&'a [f32]; 3],
    pub params: [&'a [f32]; N],
    pub c: usize,
    pub f: &'a F,
}

impl<F, const N: usize> crate::isa::PathKernel for MapRows<'_, F, N>
where
    F: Fn(f32, f32, f32, [f32; N]) -> f32,
{
    #[inline(always)]
    fn run(self) {
        let c = self.c;
        if c == 0 {
            return;
        }
        let p: [&[f32]; N] = std::array::from_fn(|k| &self.params[k][..c]);
        let [a, b, e] = self.data;
        let rows = self.out.chunks_exact_mut(c).zip(a.chunks_exact(c)).zip(b.chunks_exact(c).zip(e.chunks_exact(c)));
        for ((o, ar), (br, er)) in rows {
            let (o, ar, br, er) = (&mut o[..c], &ar[..c], &br[..c], &er[..c]);
            for j in 0..c {
                o[j].write((self.f)(ar[j], br[j], er[j], std::array::from_fn(|k| p[k][j])));
            }
        }
    }
}
