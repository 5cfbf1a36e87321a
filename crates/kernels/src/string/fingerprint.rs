//! `Fingerprint` (`tf.fingerprint`): an 8-byte FarmHash `Fingerprint64` (little-endian) of
//! each row of `data` (its first dimension). A numeric row is hashed as its bytes; a row of
//! one string as the string; a row of several strings as the concatenation of their own
//! fingerprints, as in TensorFlow. `method` must be `farmhash64`.

use ferroflow_core::{Storage, Tensor};

use super::{fingerprint64, strings};
use crate::KernelRegistry;

op_kernel! {
    struct Fingerprint;
    fn compute(&self, ctx) {
        let data = ctx.input(0)?;
        let method_t = ctx.input_of_rank(1, 0, "`method` should be a scalar string: ")?;
        let method = strings(ctx, "method", &method_t)?[0].clone();
        if method != b"farmhash64" {
            return Err(ctx.error(format!("Unsupported fingerprint method: {}", String::from_utf8_lossy(&method))));
        }
        if data.rank() == 0 {
            return Err(ctx.error(format!("`data` should have at least one dimension: {}", data.shape())));
        }
        let rows = data.dims()[0];
        let per_row = data.num_elements().checked_div(rows).unwrap_or(0);
        let mut out = ferroflow_core::alloc::with_capacity::<u8>(&[rows, 8])?;
        match data.storage() {
            Storage::Str(v) => {
                for r in 0..rows {
                    let row = &v[r * per_row..(r + 1) * per_row];
                    let f = if per_row == 1 {
                        fingerprint64(&row[0])
                    } else {
                        let inner: Vec<u8> = row.iter().flat_map(|s| fingerprint64(s).to_le_bytes()).collect();
                        fingerprint64(&inner)
                    };
                    out.extend_from_slice(&f.to_le_bytes());
                }
            }
            _ => {
                let Some(bytes) = data.raw_bytes() else {
                    return Err(ctx.error(format!("Data type not supported: {}", data.dtype().tf_name())));
                };
                let row_bytes = bytes.len().checked_div(rows).unwrap_or(0);
                for r in 0..rows {
                    out.extend_from_slice(&fingerprint64(&bytes[r * row_bytes..(r + 1) * row_bytes]).to_le_bytes());
                }
            }
        }
        ctx.set_output(0, Tensor::new(vec![rows, 8], out)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Fingerprint", |_| Ok(Box::new(Fingerprint)));
}
