//! How one tensor's value is laid out in a checkpoint's `.data` file, and its checksum.
//!
//! Fixed-size types are their raw little-endian bytes, checksummed with CRC32C. Strings
//! are `varint64 length` per element, a 4-byte masked CRC32C of the lengths, then the
//! bytes of every element; the entry's checksum runs over each length as a little-endian
//! u32, then the 4 stored checksum bytes, then the string bytes.

use ferroflow_core::{DataType, Shape, Status, Storage, Tensor};

use super::crc::{crc32c, crc32c_extend, mask};
use ferroflow_core::varint;

/// Dtypes a checkpoint can hold in ferroflow: every fixed-size type (numbers of every width,
/// complex, bool, quantized), strings and variants (those with an encoding of TensorFlow's:
/// see [`super::bundle_variant`]); not resource tensors.
pub fn supported(dtype: DataType) -> bool {
    dtype.byte_size().is_some() || dtype == DataType::String || dtype == DataType::Variant
}

/// The bytes of `t` in the data file and their unmasked CRC32C.
pub fn encode(t: &Tensor, name: &str) -> Result<(Vec<u8>, u32), Status> {
    if !supported(t.dtype()) {
        return Err(Status::unimplemented(format!(
            "cannot save tensor '{name}': dtype {} is not supported in checkpoints yet",
            t.dtype()
        )));
    }
    if let Some(raw) = t.raw_bytes() {
        return Ok((raw.to_vec(), crc32c(raw)));
    }
    if let Storage::Variant(items) = t.storage() {
        return super::bundle_variant::encode(items, name);
    }
    let Storage::Str(items) = t.storage() else {
        return Err(Status::internal(format!("tensor '{name}': no byte view for dtype {}", t.dtype())));
    };
    let mut out = Vec::with_capacity(items.iter().map(|s| s.len() + 2).sum::<usize>() + 4);
    let mut crc = 0u32;
    for s in items {
        varint::put(&mut out, s.len() as u64);
        let len32 = u32::try_from(s.len()).map_err(|_| {
            Status::invalid_argument(format!("tensor '{name}': a string element of 4 GiB or more cannot be saved"))
        })?;
        crc = crc32c_extend(crc, &len32.to_le_bytes());
    }
    let len_check = mask(crc).to_le_bytes();
    out.extend_from_slice(&len_check);
    crc = crc32c_extend(crc, &len_check);
    for s in items {
        out.extend_from_slice(s);
        crc = crc32c_extend(crc, s);
    }
    Ok((out, crc))
}

/// Decodes `bytes` read for tensor `name` of `dtype` and `shape`, checking the stored
/// (unmasked) checksum. `file` names the data file in errors.
pub fn decode(
    bytes: &[u8],
    dtype: DataType,
    shape: Shape,
    expected_crc: u32,
    name: &str,
    file: &str,
) -> Result<Tensor, Status> {
    let loss = |m: String| Status::data_loss(format!("{file}: tensor '{name}': {m}"));
    if !supported(dtype) {
        return Err(Status::unimplemented(format!(
            "{file}: tensor '{name}' has dtype {dtype}, which ferroflow checkpoints do not support yet"
        )));
    }
    if dtype == DataType::Variant {
        return super::bundle_variant::decode(bytes, shape, expected_crc, &loss);
    }
    let n = shape.checked_num_elements().map_err(|e| loss(e.message))?;
    if dtype != DataType::String {
        let actual = crc32c(bytes);
        if actual != expected_crc {
            return Err(loss(format!("checksum mismatch (stored {expected_crc:#010x}, computed {actual:#010x})")));
        }
        return Tensor::from_content(dtype, shape, bytes).map_err(|e| loss(e.message));
    }
    let mut pos = 0usize;
    let mut crc = 0u32;
    let mut lens = Vec::with_capacity(n.min(1 << 20));
    for i in 0..n {
        let l = varint::get(bytes, &mut pos).ok_or_else(|| loss(format!("bad length of string element {i}")))?;
        let l32 = u32::try_from(l).map_err(|_| loss(format!("string element {i} is longer than 4 GiB")))?;
        crc = crc32c_extend(crc, &l32.to_le_bytes());
        lens.push(l as usize);
    }
    let check = bytes.get(pos..pos + 4).ok_or_else(|| loss("truncated before the length checksum".into()))?;
    if u32::from_le_bytes(check.try_into().unwrap_or([0; 4])) != mask(crc) {
        return Err(loss("checksum mismatch on the string lengths".into()));
    }
    crc = crc32c_extend(crc, check);
    pos += 4;
    let mut items = Vec::with_capacity(lens.len());
    for (i, l) in lens.into_iter().enumerate() {
        let s = pos
            .checked_add(l)
            .and_then(|e| bytes.get(pos..e))
            .ok_or_else(|| loss(format!("string element {i} runs past the entry")))?;
        crc = crc32c_extend(crc, s);
        items.push(s.to_vec());
        pos += l;
    }
    if pos != bytes.len() {
        return Err(loss(format!("{} trailing bytes after the strings", bytes.len() - pos)));
    }
    if crc != expected_crc {
        return Err(loss("checksum mismatch".into()));
    }
    Tensor::from_storage(shape, Storage::Str(items)).map_err(|e| loss(e.message))
}
