//! Byte-string kernels of input pipelines: `DecodeRaw` (each string's bytes reinterpreted
//! as a vector of numbers, little- or big-endian) and `StringLength` (bytes or UTF-8
//! characters per string).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Shape, Status, Storage, Tensor, TensorType, C128, C64};

use crate::array::util::collect_vec;
use crate::{KernelRegistry, OpContext, OpKernel};

fn strings(ctx: &OpContext, t: &Tensor) -> Result<Vec<Vec<u8>>, Status> {
    match t.storage() {
        Storage::Str(v) => Ok(v.clone()),
        _ => Err(ctx.error(format!("input must be a string tensor, got {}", t.dtype()))),
    }
}

/// `DecodeRaw`.
struct DecodeRaw {
    out: DataType,
    little: bool,
}

/// Decodes `n`-byte chunks with `f` (given the chunk in little-endian order).
fn chunks<T: TensorType>(
    dims: &[usize],
    bytes: &[Vec<u8>],
    n: usize,
    little: bool,
    f: impl Fn(&[u8]) -> T,
) -> Result<Vec<T>, Status> {
    let mut out = ferroflow_core::alloc::with_capacity(dims)?;
    let mut buf = vec![0u8; n];
    for s in bytes {
        for c in s.chunks_exact(n) {
            buf.copy_from_slice(c);
            if !little {
                buf.reverse();
            }
            out.push(f(&buf));
        }
    }
    Ok(out)
}

macro_rules! le {
    ($t:ty) => {
        |b: &[u8]| <$t>::from_le_bytes(b.try_into().unwrap_or_default())
    };
}

impl OpKernel for DecodeRaw {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        let bytes = strings(ctx, &t)?;
        let size = match self.out {
            DataType::UInt8 | DataType::Int8 | DataType::Bool => 1,
            DataType::Int16 | DataType::UInt16 | DataType::Half | DataType::BFloat16 => 2,
            DataType::Int32 | DataType::Float => 4,
            DataType::Int64 | DataType::Double | DataType::Complex64 => 8,
            DataType::Complex128 => 16,
            d => return Err(ctx.error(format!("DecodeRaw does not produce {d}"))),
        };
        let len = bytes.first().map_or(0, Vec::len);
        if len % size != 0 {
            return Err(ctx.error(format!(
                "Input to DecodeRaw has length {len} that is not a multiple of {size}, the size of {}",
                crate::state::handle::tf_type_name(self.out)
            )));
        }
        if let Some((i, s)) = bytes.iter().enumerate().find(|(_, s)| s.len() != len) {
            return Err(ctx.error(format!(
                "DecodeRaw requires input strings to all be the same size, but element {i} has size {} != {len}",
                s.len()
            )));
        }
        let mut dims = t.dims().to_vec();
        dims.push(len / size);
        let l = self.little;
        // Complex numbers: two floats, each in the requested byte order.
        let c64 = |b: &[u8]| {
            C64::new(f32::from_le_bytes([b[0], b[1], b[2], b[3]]), f32::from_le_bytes([b[4], b[5], b[6], b[7]]))
        };
        let s = match self.out {
            DataType::UInt8 => Storage::U8(collect_vec(&dims, bytes.iter().flatten().copied())?),
            DataType::Int8 => Storage::I8(collect_vec(&dims, bytes.iter().flatten().map(|&b| b as i8))?),
            DataType::Bool => Storage::Bool(collect_vec(&dims, bytes.iter().flatten().map(|&b| b != 0))?),
            DataType::Int16 => Storage::I16(chunks(&dims, &bytes, 2, l, le!(i16))?),
            DataType::UInt16 => Storage::U16(chunks(&dims, &bytes, 2, l, le!(u16))?),
            DataType::Half => {
                Storage::F16(chunks(&dims, &bytes, 2, l, |b| ferroflow_core::half::f16::from_le_bytes([b[0], b[1]]))?)
            }
            DataType::BFloat16 => {
                Storage::BF16(chunks(&dims, &bytes, 2, l, |b| ferroflow_core::half::bf16::from_le_bytes([b[0], b[1]]))?)
            }
            DataType::Int32 => Storage::I32(chunks(&dims, &bytes, 4, l, le!(i32))?),
            DataType::Float => Storage::F32(chunks(&dims, &bytes, 4, l, le!(f32))?),
            DataType::Int64 => Storage::I64(chunks(&dims, &bytes, 8, l, le!(i64))?),
            DataType::Double => Storage::F64(chunks(&dims, &bytes, 8, l, le!(f64))?),
            DataType::Complex64 => {
                if l {
                    Storage::C64(chunks(&dims, &bytes, 8, true, c64)?)
                } else {
                    // Each part big-endian: swap within the four-byte halves.
                    Storage::C64(chunks(&dims, &bytes, 8, true, |b| {
                        C64::new(
                            f32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                            f32::from_be_bytes([b[4], b[5], b[6], b[7]]),
                        )
                    })?)
                }
            }
            _ => Storage::C128(chunks(&dims, &bytes, 16, true, |b| {
                let part = |o: usize| {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(&b[o..o + 8]);
                    if l {
                        f64::from_le_bytes(a)
                    } else {
                        f64::from_be_bytes(a)
                    }
                };
                C128::new(part(0), part(8))
            })?),
        };
        ctx.set_output(0, Tensor::from_storage(Shape::new(dims), s)?)
    }
}

op_kernel! {
    /// `StringLength`.
    struct StringLength { utf8: bool }
    fn compute(&self, ctx) {
        let t = ctx.input(0)?;
        let v = strings(ctx, &t)?;
        let n: Vec<i32> = v
            .iter()
            .map(|s| if self.utf8 { s.iter().filter(|&&b| (b & 0xC0) != 0x80).count() } else { s.len() } as i32)
            .collect();
        ctx.set_output(0, Tensor::new(t.shape().clone(), n)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("DecodeRaw", |n: &NodeDef| {
        Ok(Box::new(DecodeRaw { out: n.attr_type("out_type")?, little: n.attr_bool("little_endian").unwrap_or(true) }))
    });
    r.add_cheap("StringLength", |n: &NodeDef| {
        Ok(Box::new(StringLength { utf8: n.attr_string("unit").unwrap_or_default() == "UTF8_CHAR" }))
    });
}
