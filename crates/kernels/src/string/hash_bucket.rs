//! `StringToHashBucketFast` (FarmHash Fingerprint64), `StringToHashBucketStrong`
//! (SipHash-2-4 under `key`) and `StringToHashBucket` (TensorFlow's `Hash64`): each string's
//! hash modulo `num_buckets`, as int64.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor};

use super::farmhash::{fingerprint64, siphash24};
use super::strings;
use crate::array::util::collect_vec;
use crate::{KernelRegistry, OpKernel};

#[derive(Clone, Copy)]
enum Hash {
    Fast,
    Strong(u64, u64),
    Legacy,
}

op_kernel! {
    struct HashBucket { buckets: u64, hash: Hash }
    fn compute(&self, ctx) {
        let t = ctx.input(0)?;
        let out = collect_vec(
            t.dims(),
            strings(ctx, "input", &t)?.iter().map(|s| {
                let h = match self.hash {
                    Hash::Fast => fingerprint64(s),
                    Hash::Strong(k0, k1) => siphash24(k0, k1, s),
                    Hash::Legacy => ferroflow_core::tf_hash64(s),
                };
                (h % self.buckets) as i64
            }),
        )?;
        ctx.set_output(0, Tensor::new(t.shape().clone(), out)?)
    }
}

fn factory(n: &NodeDef, hash: Hash) -> Result<Box<dyn OpKernel>, Status> {
    let b = n.attr_int("num_buckets")?;
    if b < 1 {
        return Err(n.node_error(format!("num_buckets must be >= 1, got {b}")));
    }
    Ok(Box::new(HashBucket { buckets: b as u64, hash }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("StringToHashBucketFast", |n| factory(n, Hash::Fast));
    r.add("StringToHashBucket", |n| factory(n, Hash::Legacy));
    r.add("StringToHashBucketStrong", |n| {
        let key = n.attr_list_int("key")?;
        if key.len() != 2 {
            return Err(n.node_error(format!("Key must have 2 elements, got {}", key.len())));
        }
        factory(n, Hash::Strong(key[0] as u64, key[1] as u64))
    });
}
