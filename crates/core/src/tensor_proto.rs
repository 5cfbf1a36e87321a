//! Conversion between [`Tensor`] and `TensorProto`, in both TensorFlow encodings:
//! raw `tensor_content` and the typed `*_val` fields (with TensorFlow's fill rule).

use std::sync::Arc;

use bytes::Bytes;

use crate::proto::{tensor_shape_proto::Dim, ResourceHandleProto, TensorProto, TensorShapeProto};
use half::{bf16, f16};

use crate::storage::{pod_from_le, raw_bytes_of};
use crate::{
    DataType, QInt16, QInt32, QInt8, QUInt16, QUInt8, ResourceHandle, Shape, Status, Storage, Tensor, C128, C64,
};
use prost::Message;

impl Shape {
    /// The wire form.
    pub fn to_proto(&self) -> TensorShapeProto {
        TensorShapeProto {
            dim: self.0.iter().map(|&d| Dim { size: d as i64, name: String::new() }).collect(),
            unknown_rank: false,
        }
    }

    /// Parses a fully defined wire shape.
    pub fn from_proto(p: &TensorShapeProto) -> Result<Shape, Status> {
        if p.unknown_rank {
            return Err(Status::invalid_argument("tensor shape has unknown rank"));
        }
        Shape::from_i64(&p.dim.iter().map(|d| d.size).collect::<Vec<_>>())
    }
}

struct StorageBytes(Arc<Storage>);

impl AsRef<[u8]> for StorageBytes {
    fn as_ref(&self) -> &[u8] {
        raw_bytes_of(&self.0).unwrap_or(&[])
    }
}

/// Encodes byte strings as TensorFlow's string list: all lengths as varint32, then bytes.
pub fn encode_string_list(items: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(items.iter().map(|s| s.len() + 2).sum());
    for s in items {
        prost::encoding::encode_varint(s.len() as u64, &mut out);
    }
    for s in items {
        out.extend_from_slice(s);
    }
    out
}

/// Decodes TensorFlow's string list encoding of `n` elements.
pub fn decode_string_list(mut buf: &[u8], n: usize) -> Result<Vec<Vec<u8>>, Status> {
    // Every length takes at least one byte: a list cannot hold more elements than bytes,
    // whatever shape a peer declares.
    let mut lens = Vec::with_capacity(n.min(buf.len()));
    for i in 0..n {
        let l = prost::encoding::decode_varint(&mut buf).map_err(|_| {
            Status::invalid_argument(format!("string tensor_content: bad length varint for element {i}"))
        })?;
        if l > u32::MAX as u64 {
            return Err(Status::invalid_argument("string tensor_content: element length exceeds 2^32"));
        }
        lens.push(l as usize);
    }
    let total: usize = lens.iter().try_fold(0usize, |a, &l| a.checked_add(l)).unwrap_or(usize::MAX);
    if total != buf.len() {
        return Err(Status::invalid_argument(format!(
            "string tensor_content: lengths sum to {total} bytes but {} remain",
            buf.len()
        )));
    }
    let mut out = Vec::with_capacity(n);
    for l in lens {
        let (a, b) = buf.split_at(l);
        out.push(a.to_vec());
        buf = b;
    }
    Ok(out)
}

impl Tensor {
    /// A proto with this tensor's dtype and shape, and no values yet.
    fn proto_header(&self) -> TensorProto {
        TensorProto { dtype: self.dtype().as_i32(), tensor_shape: Some(self.shape().to_proto()), ..Default::default() }
    }

    /// Encodes with `tensor_content` (TensorFlow's AsProtoTensorContent). Numeric buffers are
    /// shared with the returned proto, not copied.
    pub fn to_proto(&self) -> TensorProto {
        let mut p = self.proto_header();
        match self.storage() {
            Storage::Str(v) => p.tensor_content = Bytes::from(encode_string_list(v)),
            Storage::Resource(v) => {
                let items: Vec<Vec<u8>> = v.iter().map(|h| h.to_proto().encode_to_vec()).collect();
                p.tensor_content = Bytes::from(encode_string_list(&items));
            }
            Storage::Variant(v) => {
                // As TensorFlow's EncodeVariantList: each element's VariantTensorDataProto.
                let items: Vec<Vec<u8>> = v.iter().map(|x| x.encode().encode_to_vec()).collect();
                p.tensor_content = Bytes::from(encode_string_list(&items));
            }
            _ => p.tensor_content = Bytes::from_owner(StorageBytes(self.storage_arc().clone())),
        }
        p
    }

    /// Encodes with the typed `*_val` fields (TensorFlow's AsProtoField).
    pub fn to_proto_field(&self) -> TensorProto {
        let mut p = self.proto_header();
        match self.storage() {
            Storage::F32(v) => p.float_val = v.clone(),
            Storage::F64(v) => p.double_val = v.clone(),
            Storage::I32(v) => p.int_val = v.clone(),
            Storage::I64(v) => p.int64_val = v.clone(),
            Storage::U8(v) => p.int_val = ints(v, i32::from),
            Storage::Bool(v) => p.bool_val = v.clone(),
            Storage::Str(v) => p.string_val = v.clone(),
            Storage::Resource(v) => p.resource_handle_val = v.iter().map(|h| h.to_proto()).collect(),
            Storage::Variant(v) => p.variant_val = crate::variant::to_variant_val(v),
            Storage::F16(v) => p.half_val = ints(v, |x| i32::from(x.to_bits())),
            Storage::BF16(v) => p.half_val = ints(v, |x| i32::from(x.to_bits())),
            Storage::I8(v) => p.int_val = ints(v, i32::from),
            Storage::I16(v) => p.int_val = ints(v, i32::from),
            Storage::U16(v) => p.int_val = ints(v, i32::from),
            Storage::U32(v) => p.uint32_val = v.clone(),
            Storage::U64(v) => p.uint64_val = v.clone(),
            Storage::C64(v) => p.scomplex_val = v.iter().flat_map(|c| [c.re, c.im]).collect(),
            Storage::C128(v) => p.dcomplex_val = v.iter().flat_map(|c| [c.re, c.im]).collect(),
            Storage::QI8(v) => p.int_val = ints(v, |x| i32::from(x.0)),
            Storage::QU8(v) => p.int_val = ints(v, |x| i32::from(x.0)),
            Storage::QI16(v) => p.int_val = ints(v, |x| i32::from(x.0)),
            Storage::QU16(v) => p.int_val = ints(v, |x| i32::from(x.0)),
            Storage::QI32(v) => p.int_val = ints(v, |x| x.0),
        }
        p
    }

    /// Decodes either encoding. Malformed protos give InvalidArgument, never a panic.
    pub fn from_proto(p: &TensorProto) -> Result<Tensor, Status> {
        let (dtype, is_ref) = DataType::from_proto(p.dtype)?;
        if is_ref {
            return Err(Status::invalid_argument(format!("TensorProto has reference dtype {}_ref", dtype.name())));
        }
        let shape = match &p.tensor_shape {
            Some(s) => Shape::from_proto(s)?,
            None => Shape::scalar(),
        };
        let n = shape.checked_num_elements()?;
        if !p.tensor_content.is_empty() || (n == 0 && dtype.byte_size().is_some()) {
            return Tensor::from_content(dtype, shape, &p.tensor_content);
        }
        // A few values may declare a huge shape (the last value repeats): refuse what this
        // task could not allocate, as TensorFlow refuses such a proto.
        crate::check_tensor_alloc(shape.dims(), dtype).map_err(|e| {
            Status::invalid_argument(format!("TensorProto of shape {shape} cannot be expanded: {}", e.message))
        })?;
        let storage = match dtype {
            DataType::Float => Storage::F32(fill(&p.float_val, n, "float_val")?),
            DataType::Double => Storage::F64(fill(&p.double_val, n, "double_val")?),
            DataType::Int32 => Storage::I32(fill(&p.int_val, n, "int_val")?),
            DataType::Int64 => Storage::I64(fill(&p.int64_val, n, "int64_val")?),
            DataType::Bool => Storage::Bool(fill(&p.bool_val, n, "bool_val")?),
            DataType::String => Storage::Str(fill(&p.string_val, n, "string_val")?),
            DataType::Resource => {
                let hs: Vec<ResourceHandle> = p.resource_handle_val.iter().map(ResourceHandle::from_proto).collect();
                Storage::Resource(fill(&hs, n, "resource_handle_val")?)
            }
            DataType::Variant => Storage::Variant(crate::variant::from_variant_val(p, n)?),
            // As TensorFlow's FromProtoField: the narrow types keep the low bits of each value.
            DataType::UInt8 => Storage::U8(fill_with(&p.int_val, n, "int_val", |x| x as u8)?),
            DataType::Int8 => Storage::I8(fill_with(&p.int_val, n, "int_val", |x| x as i8)?),
            DataType::Int16 => Storage::I16(fill_with(&p.int_val, n, "int_val", |x| x as i16)?),
            DataType::UInt16 => Storage::U16(fill_with(&p.int_val, n, "int_val", |x| x as u16)?),
            DataType::QInt8 => Storage::QI8(fill_with(&p.int_val, n, "int_val", |x| QInt8(x as i8))?),
            DataType::QUInt8 => Storage::QU8(fill_with(&p.int_val, n, "int_val", |x| QUInt8(x as u8))?),
            DataType::QInt16 => Storage::QI16(fill_with(&p.int_val, n, "int_val", |x| QInt16(x as i16))?),
            DataType::QUInt16 => Storage::QU16(fill_with(&p.int_val, n, "int_val", |x| QUInt16(x as u16))?),
            DataType::QInt32 => Storage::QI32(fill_with(&p.int_val, n, "int_val", QInt32)?),
            DataType::UInt32 => Storage::U32(fill(&p.uint32_val, n, "uint32_val")?),
            DataType::UInt64 => Storage::U64(fill(&p.uint64_val, n, "uint64_val")?),
            DataType::Half => Storage::F16(fill_with(&p.half_val, n, "half_val", |x| f16::from_bits(x as u16))?),
            DataType::BFloat16 => Storage::BF16(fill_with(&p.half_val, n, "half_val", |x| bf16::from_bits(x as u16))?),
            DataType::Complex64 => {
                Storage::C64(fill(&pairs(&p.scomplex_val, "scomplex_val", C64::new)?, n, "scomplex_val")?)
            }
            DataType::Complex128 => {
                Storage::C128(fill(&pairs(&p.dcomplex_val, "dcomplex_val", C128::new)?, n, "dcomplex_val")?)
            }
        };
        Tensor::from_storage(shape, storage)
    }

    /// Decodes raw `tensor_content` bytes of the given dtype and shape.
    pub fn from_content(dtype: DataType, shape: Shape, bytes: &[u8]) -> Result<Tensor, Status> {
        let n = shape.checked_num_elements()?;
        // Counted against the budget like every buffer sized from remote input (so that
        // many fed tensors held across steps count: a queue filled with them).
        crate::check_tensor_alloc(shape.dims(), dtype)?;
        if let Some(size) = dtype.byte_size() {
            let want = n.checked_mul(size).ok_or_else(|| Status::invalid_argument("tensor too large"))?;
            if bytes.len() != want {
                return Err(Status::invalid_argument(format!(
                    "tensor_content of {dtype} shape {shape} must be {want} bytes, got {}",
                    bytes.len()
                )));
            }
        }
        let storage = match dtype {
            DataType::Bool => Storage::Bool(bytes.iter().map(|&b| b != 0).collect()),
            DataType::String => Storage::Str(decode_string_list(bytes, n)?),
            DataType::Resource => {
                let items = decode_string_list(bytes, n)?;
                let mut hs = Vec::with_capacity(n);
                for it in items {
                    hs.push(ResourceHandle::from_proto(&ResourceHandleProto::decode(it.as_slice())?));
                }
                Storage::Resource(hs)
            }
            DataType::Variant => {
                let items = decode_string_list(bytes, n)?;
                let mut vs = Vec::with_capacity(n);
                for it in items {
                    vs.push(crate::Variant::decode(&crate::proto::VariantTensorDataProto::decode(it.as_slice())?)?);
                }
                Storage::Variant(vs)
            }
            DataType::Float => Storage::F32(pod_from_le(bytes)?),
            DataType::Double => Storage::F64(pod_from_le(bytes)?),
            DataType::Int32 => Storage::I32(pod_from_le(bytes)?),
            DataType::Int64 => Storage::I64(pod_from_le(bytes)?),
            DataType::UInt8 => Storage::U8(bytes.to_vec()),
            DataType::Int8 => Storage::I8(pod_from_le(bytes)?),
            DataType::Int16 => Storage::I16(pod_from_le(bytes)?),
            DataType::UInt16 => Storage::U16(pod_from_le(bytes)?),
            DataType::UInt32 => Storage::U32(pod_from_le(bytes)?),
            DataType::UInt64 => Storage::U64(pod_from_le(bytes)?),
            DataType::Half => Storage::F16(pod_from_le(bytes)?),
            DataType::BFloat16 => Storage::BF16(pod_from_le(bytes)?),
            DataType::Complex64 => Storage::C64(pod_from_le(bytes)?),
            DataType::Complex128 => Storage::C128(pod_from_le(bytes)?),
            DataType::QInt8 => Storage::QI8(pod_from_le(bytes)?),
            DataType::QUInt8 => Storage::QU8(pod_from_le(bytes)?),
            DataType::QInt16 => Storage::QI16(pod_from_le(bytes)?),
            DataType::QUInt16 => Storage::QU16(pod_from_le(bytes)?),
            DataType::QInt32 => Storage::QI32(pod_from_le(bytes)?),
        };
        Tensor::from_storage(shape, storage)
    }
}

/// Each element widened to the `int32` of a typed field.
fn ints<T: Copy>(v: &[T], f: impl Fn(T) -> i32) -> Vec<i32> {
    v.iter().map(|&x| f(x)).collect()
}

/// Complex values from a typed field of (real, imaginary) pairs.
fn pairs<F: Copy, C>(vals: &[F], field: &str, make: impl Fn(F, F) -> C) -> Result<Vec<C>, Status> {
    if !vals.len().is_multiple_of(2) {
        return Err(Status::invalid_argument(format!(
            "{field} holds (real, imaginary) pairs but has an odd number of values ({})",
            vals.len()
        )));
    }
    Ok(vals.chunks_exact(2).map(|c| make(c[0], c[1])).collect())
}

/// [`fill`] of the values converted by `f` (only the values present are converted).
fn fill_with<S: Copy, T: Clone + Default>(
    vals: &[S],
    n: usize,
    field: &str,
    f: impl Fn(S) -> T,
) -> Result<Vec<T>, Status> {
    if vals.len() > n {
        return Err(Status::invalid_argument(format!("{field} has {} values but the shape holds {n}", vals.len())));
    }
    fill(&vals.iter().map(|&x| f(x)).collect::<Vec<T>>(), n, field)
}

/// TensorFlow's fill rule: no values → zeros (defaults); fewer values → repeat the last.
fn fill<T: Clone + Default>(vals: &[T], n: usize, field: &str) -> Result<Vec<T>, Status> {
    if vals.len() > n {
        return Err(Status::invalid_argument(format!("{field} has {} values but the shape holds {n}", vals.len())));
    }
    let mut out = Vec::with_capacity(n);
    out.extend_from_slice(vals);
    let last = vals.last().cloned().unwrap_or_default();
    out.resize(n, last);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_round_trip() {
        let t = Tensor::new(vec![2, 2], vec![1.5f32, -2.0, 3.0, 4.25]).unwrap();
        let p = t.to_proto();
        assert_eq!(p.tensor_content.len(), 16);
        assert_eq!(Tensor::from_proto(&p).unwrap(), t);
        let i = Tensor::new(vec![3], vec![1i64, -2, 3]).unwrap();
        assert_eq!(Tensor::from_proto(&i.to_proto()).unwrap(), i);
        assert_eq!(Tensor::from_proto(&i.to_proto_field()).unwrap(), i);
    }

    #[test]
    fn fill_rule_repeats_last() {
        let p = TensorProto {
            dtype: DataType::Float.as_i32(),
            tensor_shape: Some(Shape::new(vec![4]).to_proto()),
            float_val: vec![1.0, 2.0],
            ..Default::default()
        };
        assert_eq!(Tensor::from_proto(&p).unwrap().as_slice::<f32>().unwrap(), &[1.0, 2.0, 2.0, 2.0]);
        let z = TensorProto { float_val: vec![], ..p.clone() };
        assert_eq!(Tensor::from_proto(&z).unwrap().as_slice::<f32>().unwrap(), &[0.0; 4]);
        let too_many = TensorProto { float_val: vec![1.0; 5], ..p };
        assert_eq!(Tensor::from_proto(&too_many).unwrap_err().code, crate::Code::InvalidArgument);
    }

    #[test]
    fn strings_both_encodings() {
        let t = Tensor::new(vec![3], vec![b"hello".to_vec(), vec![], b"x".to_vec()]).unwrap();
        assert_eq!(Tensor::from_proto(&t.to_proto()).unwrap(), t);
        assert_eq!(Tensor::from_proto(&t.to_proto_field()).unwrap(), t);
        let mut bad = t.to_proto();
        bad.tensor_content = Bytes::from_static(&[5, 0, 1, b'h']);
        assert!(Tensor::from_proto(&bad).is_err());
    }

    #[test]
    fn bad_protos_are_errors() {
        let mut p = Tensor::vec(vec![1.0f32, 2.0]).to_proto();
        p.tensor_content = Bytes::from_static(&[0, 0, 0]);
        assert!(Tensor::from_proto(&p).is_err());
        p.dtype = 55;
        assert!(Tensor::from_proto(&p).is_err());
        let neg = TensorProto {
            dtype: 1,
            tensor_shape: Some(TensorShapeProto {
                dim: vec![Dim { size: -3, name: String::new() }],
                unknown_rank: false,
            }),
            ..Default::default()
        };
        assert!(Tensor::from_proto(&neg).is_err());
        let huge = TensorProto {
            dtype: 1,
            tensor_shape: Some(TensorShapeProto {
                dim: vec![Dim { size: i64::MAX, name: String::new() }, Dim { size: 4, name: String::new() }],
                unknown_rank: false,
            }),
            ..Default::default()
        };
        assert!(Tensor::from_proto(&huge).is_err());
    }

    #[test]
    fn resource_round_trip() {
        let h = ResourceHandle {
            device: "/job:ps/replica:0/task:0/device:CPU:0".into(),
            name: "w".into(),
            ..Default::default()
        };
        let t = Tensor::scalar(h);
        assert_eq!(Tensor::from_proto(&t.to_proto()).unwrap(), t);
    }
}

#[cfg(test)]
#[path = "tensor_proto_dtype_tests.rs"]
mod dtype_tests;
