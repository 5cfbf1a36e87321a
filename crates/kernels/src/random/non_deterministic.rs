//! `NonDeterministicInts`: a tensor of `shape` filled with random bits from the operating
//! system (`/dev/urandom`; where that cannot be read, a stream seeded from
//! [`super::guarded::random_u64`]), each run different. `tf.random.Generator
//! .from_non_deterministic_state` seeds its state with it. int32, int64, uint32, uint64.

use std::io::Read;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::SplitMix64;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::guarded::random_u64;
use super::ops::shape_from_tensor;
use crate::array::util::check_alloc;
use crate::{KernelRegistry, OpContext, OpKernel};

struct NonDeterministicInts {
    dtype: DataType,
}

/// `n` random 64-bit words.
fn random_words(n: usize) -> Vec<u64> {
    let mut bytes = vec![0u8; n * 8];
    let from_os = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).is_ok();
    if from_os {
        return bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
    }
    let mut g = SplitMix64::new(random_u64());
    (0..n).map(|_| g.next_u64()).collect()
}

impl OpKernel for NonDeterministicInts {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let shape = shape_from_tensor(ctx, &ctx.input(0)?)?;
        let n = shape.num_elements();
        check_alloc(&shape.0, DataType::Int64).map_err(|e| ctx.error_with(e))?;
        let words = random_words(n);
        let out = match self.dtype {
            DataType::Int64 => Tensor::new(shape, words.iter().map(|&w| w as i64).collect::<Vec<_>>())?,
            DataType::UInt64 => Tensor::new(shape, words)?,
            DataType::Int32 => Tensor::new(shape, words.iter().map(|&w| w as i32).collect::<Vec<_>>())?,
            _ => Tensor::new(shape, words.iter().map(|&w| w as u32).collect::<Vec<_>>())?,
        };
        ctx.set_output(0, out)
    }
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = n.attr_type("dtype")?;
    if !matches!(dtype, DataType::Int32 | DataType::Int64 | DataType::UInt32 | DataType::UInt64) {
        return Err(Status::not_found(format!(
            "No CPU kernel registered for NonDeterministicInts with dtype {dtype} (int32, int64, uint32 and uint64 are)"
        )));
    }
    Ok(Box::new(NonDeterministicInts { dtype }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("NonDeterministicInts", make);
}
