//! `RandomShuffle`: permutes a tensor along its first dimension with TensorFlow's
//! Fisher-Yates variant (exactly `n - 1` samples, `sample % k`), so seeded shuffles match
//! TensorFlow's.

use ferroflow_core::{Status, Tensor};

use super::guarded::GuardedPhilox;
use super::philox::SingleSample;
use crate::{KernelRegistry, OpContext, OpKernel};

struct RandomShuffle {
    gen: GuardedPhilox,
}

fn gather_rows<T: Clone>(v: &[T], perm: &[usize], row: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len());
    for &p in perm {
        out.extend_from_slice(&v[p * row..(p + 1) * row]);
    }
    out
}

/// Rows of `t` (split along dim 0) in the order `perm`.
fn permute_rows(t: &Tensor, perm: &[usize]) -> Result<Tensor, Status> {
    let row = t.dims()[1..].iter().product::<usize>();
    let s = ferroflow_core::storage_map!(t.storage(), v => gather_rows(v, perm, row));
    Tensor::from_storage(t.shape().clone(), s)
}

impl OpKernel for RandomShuffle {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let input = ctx.take_input(0)?;
        if input.num_elements() <= 1 || input.rank() == 0 || input.dims()[0] <= 1 {
            return ctx.set_output(0, input);
        }
        let n = input.dims()[0];
        if n > u32::MAX as usize {
            return Err(ctx.error(format!("cannot shuffle {n} rows (at most 2^32 - 1)")));
        }
        let samples = (n - 1) as u64;
        let mut gen = self.gen.reserve128(samples.div_ceil(4));
        let mut single = SingleSample::new(&mut gen);
        let mut perm: Vec<usize> = (0..n).collect();
        for i in 0..n - 1 {
            let k = (n - i) as u32;
            let j = i + (single.next_u32() % k) as usize;
            perm.swap(i, j);
        }
        let out = permute_rows(&input, &perm)?;
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("RandomShuffle", |n| Ok(Box::new(RandomShuffle { gen: GuardedPhilox::from_node(n)? })));
}
