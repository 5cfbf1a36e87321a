//! How a `DT_VARIANT` tensor is laid out in a tensor bundle's `.data` file (a checkpoint,
//! a `tf.data` cache file holding ragged elements), as TensorFlow writes it: per element a
//! varint64 length, the element's `VariantTensorDataProto`, then a 4-byte masked CRC32C of
//! the length (as a little-endian u64) followed by the proto. The entry's checksum runs over
//! each element's length as a little-endian u64, its proto bytes and its 4 stored checksum
//! bytes.

use ferroflow_core::proto::{Message, VariantTensorDataProto};
use ferroflow_core::{Shape, Status, Storage, Tensor, Variant};

use super::crc::{crc32c_extend, mask};
use ferroflow_core::varint;

/// The bytes of the variant elements `items` of tensor `name` and their unmasked CRC32C. An
/// element with no encoding outside this process is UNIMPLEMENTED, naming the tensor.
pub fn encode(items: &[Variant], name: &str) -> Result<(Vec<u8>, u32), Status> {
    let mut out = Vec::new();
    let mut crc = 0u32;
    for (i, v) in items.iter().enumerate() {
        let proto = v.try_encode().map_err(|e| e.context(format!("cannot save element {i} of tensor '{name}'")))?;
        let bytes = proto.encode_to_vec();
        let len = (bytes.len() as u64).to_le_bytes();
        varint::put(&mut out, bytes.len() as u64);
        out.extend_from_slice(&bytes);
        let own = mask(crc32c_extend(crc32c_extend(0, &len), &bytes)).to_le_bytes();
        out.extend_from_slice(&own);
        crc = crc32c_extend(crc32c_extend(crc32c_extend(crc, &len), &bytes), &own);
    }
    Ok((out, crc))
}

/// Decodes `bytes` as the elements of a variant tensor of `shape`, checking each element's
/// checksum and the entry's (unmasked) `expected_crc`. `loss` makes a DATA_LOSS error that
/// names the file and tensor.
pub fn decode(
    bytes: &[u8],
    shape: Shape,
    expected_crc: u32,
    loss: &dyn Fn(String) -> Status,
) -> Result<Tensor, Status> {
    let n = shape.checked_num_elements().map_err(|e| loss(e.message))?;
    let mut pos = 0usize;
    let mut crc = 0u32;
    let mut items = Vec::with_capacity(n.min(1 << 16));
    for i in 0..n {
        let l = varint::get(bytes, &mut pos).ok_or_else(|| loss(format!("bad length of variant element {i}")))?;
        let body = usize::try_from(l)
            .ok()
            .and_then(|l| Some((l, pos.checked_add(l)?)))
            .and_then(|(l, end)| Some((l, bytes.get(pos..end)?, bytes.get(end..end.checked_add(4)?)?)));
        let Some((l, body, stored)) = body else {
            return Err(loss(format!("variant element {i} runs past the entry")));
        };
        let len = (l as u64).to_le_bytes();
        let own = mask(crc32c_extend(crc32c_extend(0, &len), body)).to_le_bytes();
        if own != stored {
            return Err(loss(format!("checksum mismatch on variant element {i}")));
        }
        crc = crc32c_extend(crc32c_extend(crc32c_extend(crc, &len), body), stored);
        let proto = VariantTensorDataProto::decode(body)
            .map_err(|e| loss(format!("variant element {i} is not a VariantTensorDataProto: {e}")))?;
        items.push(Variant::decode(&proto).map_err(|e| loss(format!("variant element {i}: {}", e.message)))?);
        pos += l + 4;
    }
    if pos != bytes.len() {
        return Err(loss(format!("{} trailing bytes after the variant elements", bytes.len() - pos)));
    }
    if crc != expected_crc {
        return Err(loss(format!("checksum mismatch (stored {expected_crc:#010x}, computed {crc:#010x})")));
    }
    Tensor::from_storage(shape, Storage::Variant(items)).map_err(|e| loss(e.message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_core::{DataType, RaggedVariant};

    /// Bytes TensorFlow 2.21 wrote for one cached element (`from_tensor_slices` of the
    /// ragged constant [[[1, 2], [3]], [[4]]], first element) and its entry checksum.
    const TF_ELEMENT: &str = "330a1352616767656454656e736f7256617269616e741a0d080912041202080352030002031a0d08091204120208035203010203927f367b";

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn ragged_elements_match_tensorflows_bytes_and_round_trip() {
        let r = RaggedVariant {
            splits: vec![vec![0, 2, 3]],
            split_type: DataType::Int64,
            values: Tensor::vec(vec![1i64, 2, 3]),
        };
        let (bytes, crc) = encode(&[r.into_variant()], "x").unwrap();
        assert_eq!(bytes, hex(TF_ELEMENT));
        assert_eq!(mask(crc), 0x0e2c_980c, "the entry checksum TensorFlow stored");
        let loss = |m: String| Status::data_loss(m);
        let t = decode(&bytes, Shape::new(vec![]), crc, &loss).unwrap();
        let back = RaggedVariant::of(&t.as_slice::<Variant>().unwrap()[0]).unwrap();
        assert_eq!(back.splits, vec![vec![0, 2, 3]]);
        assert_eq!(back.values.as_slice::<i64>().unwrap(), [1, 2, 3]);
        // A flipped byte, a cut entry and an unencodable value are errors, not panics.
        let mut bad = bytes.clone();
        bad[10] ^= 1;
        assert!(decode(&bad, Shape::new(vec![]), crc, &loss).is_err());
        assert!(decode(&bytes[..20], Shape::new(vec![]), crc, &loss).is_err());
        assert!(decode(&bytes, Shape::new(vec![2]), crc, &loss).is_err());
        let opaque = Variant::Opaque(ferroflow_core::Opaque { type_name: "x::Dataset", value: std::sync::Arc::new(1) });
        assert_eq!(encode(&[opaque], "d").unwrap_err().code, ferroflow_core::Code::Unimplemented);
    }
}
