//! `RandomShuffle` and `StatelessShuffle`: permute a tensor along its first dimension with
//! TensorFlow's Fisher-Yates variant (exactly `n - 1` samples, `sample % k`), so seeded
//! shuffles match TensorFlow's.

use ferroflow_core::{Status, Tensor};

use super::guarded::GuardedPhilox;
use super::philox::{Philox, SingleSample};
use super::stateless::philox_of;
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

/// TensorFlow's shuffle of the rows of `input` (n - 1 draws from `gen`, one 32-bit sample
/// each, `sample % (n - i)`); inputs of at most one element or row are returned as they are.
fn shuffle_rows(ctx: &OpContext, input: Tensor, gen: impl FnOnce(u64) -> Philox) -> Result<Tensor, Status> {
    if input.num_elements() <= 1 || input.rank() == 0 || input.dims()[0] <= 1 {
        return Ok(input);
    }
    let n = input.dims()[0];
    if n > u32::MAX as usize {
        return Err(ctx.error(format!("cannot shuffle {n} rows (at most 2^32 - 1)")));
    }
    let samples = (n - 1) as u64;
    let mut gen = gen(samples.div_ceil(4));
    let mut single = SingleSample::new(&mut gen);
    let mut perm: Vec<usize> = (0..n).collect();
    for i in 0..n - 1 {
        let k = (n - i) as u32;
        let j = i + (single.next_u32() % k) as usize;
        perm.swap(i, j);
    }
    permute_rows(&input, &perm)
}

impl OpKernel for RandomShuffle {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let input = ctx.take_input(0)?;
        let out = shuffle_rows(ctx, input, |blocks| self.gen.reserve128(blocks))?;
        ctx.set_output(0, out)
    }
}

op_kernel! {
    /// `StatelessShuffle`: the same shuffle drawing from the Philox stream of its key and
    /// counter (from the counter itself: no draws are skipped); algorithm 1 (Philox) or 3
    /// (auto-select, Philox on CPU).
    struct StatelessShuffle;
    fn compute(&self, ctx) {
        let gen = philox_of(ctx, &ctx.input(1)?, &ctx.input(2)?, &ctx.input(3)?)?;
        let input = ctx.take_input(0)?;
        let out = shuffle_rows(ctx, input, |_| gen)?;
        ctx.set_output(0, out)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("RandomShuffle", |n| Ok(Box::new(RandomShuffle { gen: GuardedPhilox::from_node(n)? })));
    r.add("StatelessShuffle", |_| Ok(Box::new(StatelessShuffle)));
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{Code, Tensor};

    use crate::testutil::{node, run_kernel};

    fn run(value: Tensor, key: u64, counter: Vec<u64>, alg: i32) -> Result<Tensor, ferroflow_core::Status> {
        let n = counter.len();
        let inputs = vec![value, Tensor::vec(vec![key]), Tensor::new(vec![n], counter).unwrap(), Tensor::scalar(alg)];
        Ok(run_kernel(node("StatelessShuffle", &[]), inputs, 1)?.remove(0))
    }

    #[test]
    fn stateless_shuffle_is_tensorflows() {
        // tf.random.experimental.stateless_shuffle(tf.range(10), seed=[1, 2]) in TensorFlow 2.21,
        // through StatelessRandomGetKeyCounter's key and counter.
        let (key, counter) = (10413732777507651514, vec![0, 17830669156045600267]);
        for alg in [1, 3] {
            let out = run(Tensor::vec((0..10i64).collect()), key, counter.clone(), alg).unwrap();
            assert_eq!(out.as_slice::<i64>().unwrap(), &[0, 3, 8, 1, 5, 4, 9, 7, 6, 2]);
        }
        let e = run(Tensor::vec(vec![1i64, 2]), key, counter.clone(), 2).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.contains("Unsupported algorithm id: 2"), "{e}");
        assert!(run(Tensor::vec(vec![1i64, 2]), key, vec![0], 1).is_err());
        let one = run(Tensor::scalar(3.0f32), key, counter, 1).unwrap();
        assert_eq!(one.as_slice::<f32>().unwrap(), &[3.0]);
    }
}
