//! Every dtype TensorProto carries, through both encodings, the fill rule and bad protos.

use bytes::Bytes;
use half::{bf16, f16};

use crate::proto::TensorProto;
use crate::{Code, DataType, QInt16, QInt32, QInt8, QUInt16, QUInt8, Shape, Tensor, C128, C64};

/// One tensor of each numeric and quantized dtype, with extreme values.
fn samples() -> Vec<Tensor> {
    let v = |t: Tensor| t.reshape(vec![2, 2]).unwrap();
    vec![
        v(Tensor::vec(vec![f16::from_f32(1.5), f16::NEG_INFINITY, f16::MAX, f16::from_f32(-0.0)])),
        v(Tensor::vec(vec![bf16::from_f32(1.5), bf16::NAN, bf16::MIN, bf16::from_f32(3e38)])),
        v(Tensor::vec(vec![1i8, -128, 127, 0])),
        v(Tensor::vec(vec![1i16, i16::MIN, i16::MAX, -1])),
        v(Tensor::vec(vec![1u8, 0, 255, 7])),
        v(Tensor::vec(vec![1u16, 0, u16::MAX, 7])),
        v(Tensor::vec(vec![1u32, 0, u32::MAX, 7])),
        v(Tensor::vec(vec![1u64, 0, u64::MAX, 1 << 63])),
        v(Tensor::vec(vec![1i32, i32::MIN, i32::MAX, -1])),
        v(Tensor::vec(vec![1i64, i64::MIN, i64::MAX, -1])),
        v(Tensor::vec(vec![1.5f32, f32::INFINITY, f32::MIN_POSITIVE, -0.0])),
        v(Tensor::vec(vec![1.5f64, f64::NEG_INFINITY, f64::MAX, 1e-300])),
        v(Tensor::vec(vec![C64::new(1.0, -2.0), C64::new(0.0, 0.5), C64::new(f32::MAX, 0.0), C64::new(-0.0, 3.0)])),
        v(Tensor::vec(vec![C128::new(1.0, -2.0), C128::new(0.0, 0.5), C128::new(f64::MAX, 0.0), C128::new(-0.0, 3.0)])),
        v(Tensor::vec(vec![true, false, true, true])),
        v(Tensor::vec(vec![b"a".to_vec(), vec![], b"xyz".to_vec(), vec![0, 255]])),
        v(Tensor::vec(vec![QInt8(-128), QInt8(127), QInt8(0), QInt8(5)])),
        v(Tensor::vec(vec![QUInt8(255), QUInt8(0), QUInt8(1), QUInt8(5)])),
        v(Tensor::vec(vec![QInt16(i16::MIN), QInt16(i16::MAX), QInt16(0), QInt16(5)])),
        v(Tensor::vec(vec![QUInt16(u16::MAX), QUInt16(0), QUInt16(1), QUInt16(5)])),
        v(Tensor::vec(vec![QInt32(i32::MIN), QInt32(i32::MAX), QInt32(0), QInt32(5)])),
    ]
}

/// Equality that treats NaN as equal to itself (bit patterns are compared for floats).
fn same(a: &Tensor, b: &Tensor) -> bool {
    a.dtype() == b.dtype() && a.shape() == b.shape() && a.raw_bytes().zip(b.raw_bytes()).map_or(a == b, |(x, y)| x == y)
}

#[test]
fn every_dtype_round_trips_both_encodings() {
    let covered: Vec<DataType> = samples().iter().map(Tensor::dtype).collect();
    for d in DataType::ALL {
        assert!(covered.contains(&d) || matches!(d, DataType::Resource | DataType::Variant), "{d} not sampled");
    }
    for t in samples() {
        let c = t.to_proto();
        if let Some(size) = t.dtype().byte_size() {
            assert_eq!(c.tensor_content.len(), 4 * size, "{}", t.dtype());
        }
        assert!(same(&Tensor::from_proto(&c).unwrap(), &t), "content {}", t.dtype());
        let f = t.to_proto_field();
        assert!(f.tensor_content.is_empty());
        assert!(same(&Tensor::from_proto(&f).unwrap(), &t), "field {}", t.dtype());
        let wire = prost::Message::encode_to_vec(&f);
        let back: TensorProto = prost::Message::decode(wire.as_slice()).unwrap();
        assert!(same(&Tensor::from_proto(&back).unwrap(), &t), "wire {}", t.dtype());
    }
}

#[test]
fn typed_fields_use_tensorflows_layout() {
    let h = Tensor::vec(vec![f16::from_f32(1.0), f16::from_f32(-2.0)]).to_proto_field();
    assert_eq!(h.half_val, vec![0x3c00, 0xc000]);
    let b = Tensor::vec(vec![bf16::from_f32(1.0)]).to_proto_field();
    assert_eq!(b.half_val, vec![0x3f80]);
    let c = Tensor::vec(vec![C64::new(1.0, 2.0)]).to_proto_field();
    assert_eq!(c.scomplex_val, vec![1.0, 2.0]);
    let i = Tensor::vec(vec![-1i8, 5]).to_proto_field();
    assert_eq!(i.int_val, vec![-1, 5]);
    let q = Tensor::vec(vec![QUInt16(65535)]).to_proto_field();
    assert_eq!(q.int_val, vec![65535]);
    let u = Tensor::vec(vec![u64::MAX]).to_proto_field();
    assert_eq!(u.uint64_val, vec![u64::MAX]);
    let c = Tensor::vec(vec![C128::new(-1.0, 0.25)]).to_proto();
    assert_eq!(&c.tensor_content[..], &[(-1.0f64).to_le_bytes(), 0.25f64.to_le_bytes()].concat()[..]);
}

fn proto(dtype: DataType, n: usize) -> TensorProto {
    TensorProto { dtype: dtype.as_i32(), tensor_shape: Some(Shape::new(vec![n]).to_proto()), ..Default::default() }
}

#[test]
fn fill_rule_repeats_the_last_value_for_every_field() {
    let p = TensorProto { half_val: vec![0x3c00, 0x4000], ..proto(DataType::Half, 4) };
    let want: Vec<f16> = [1.0f32, 2.0, 2.0, 2.0].iter().map(|&x| f16::from_f32(x)).collect();
    assert_eq!(Tensor::from_proto(&p).unwrap().as_slice::<f16>().unwrap(), &want[..]);
    let p = TensorProto { half_val: vec![0x3f80], ..proto(DataType::BFloat16, 3) };
    assert_eq!(Tensor::from_proto(&p).unwrap().as_slice::<bf16>().unwrap(), &[bf16::ONE; 3]);
    let p = TensorProto { int_val: vec![-3, 300], ..proto(DataType::Int8, 3) };
    assert_eq!(Tensor::from_proto(&p).unwrap().as_slice::<i8>().unwrap(), &[-3, 44, 44]);
    let p = TensorProto { int_val: vec![7], ..proto(DataType::QUInt8, 2) };
    assert_eq!(Tensor::from_proto(&p).unwrap().as_slice::<QUInt8>().unwrap(), &[QUInt8(7); 2]);
    let p = TensorProto { uint32_val: vec![9, u32::MAX], ..proto(DataType::UInt32, 3) };
    assert_eq!(Tensor::from_proto(&p).unwrap().as_slice::<u32>().unwrap(), &[9, u32::MAX, u32::MAX]);
    let p = TensorProto { uint64_val: vec![5], ..proto(DataType::UInt64, 2) };
    assert_eq!(Tensor::from_proto(&p).unwrap().as_slice::<u64>().unwrap(), &[5, 5]);
    let p = TensorProto { scomplex_val: vec![1.0, 2.0, 3.0, 4.0], ..proto(DataType::Complex64, 3) };
    let c = [C64::new(1.0, 2.0), C64::new(3.0, 4.0), C64::new(3.0, 4.0)];
    assert_eq!(Tensor::from_proto(&p).unwrap().as_slice::<C64>().unwrap(), &c);
    let p = TensorProto { dcomplex_val: vec![0.5, -1.0], ..proto(DataType::Complex128, 2) };
    assert_eq!(Tensor::from_proto(&p).unwrap().as_slice::<C128>().unwrap(), &[C128::new(0.5, -1.0); 2]);
    // No values at all: zeros.
    for d in DataType::ALL {
        if matches!(d, DataType::Resource | DataType::Variant) {
            continue;
        }
        let t = Tensor::from_proto(&proto(d, 3)).unwrap();
        assert_eq!(t, Tensor::zeros(d, vec![3]).unwrap(), "{d}");
    }
}

#[test]
fn bad_protos_give_invalid_argument() {
    let code = |p: &TensorProto| Tensor::from_proto(p).unwrap_err().code;
    for d in DataType::ALL {
        let Some(size) = d.byte_size() else { continue };
        // One element short, and one byte off a whole number of elements.
        for len in [size, 3 * size - 1, 3 * size + 1] {
            if len == 0 {
                continue;
            }
            let p = TensorProto { tensor_content: Bytes::from(vec![1u8; len]), ..proto(d, 3) };
            assert_eq!(code(&p), Code::InvalidArgument, "{d} content of {len} bytes");
        }
    }
    let too_many = TensorProto { half_val: vec![1, 2, 3], ..proto(DataType::Half, 2) };
    assert_eq!(code(&too_many), Code::InvalidArgument);
    let too_many = TensorProto { int_val: vec![1, 2, 3], ..proto(DataType::QInt32, 2) };
    assert_eq!(code(&too_many), Code::InvalidArgument);
    let too_many = TensorProto { scomplex_val: vec![1.0; 6], ..proto(DataType::Complex64, 2) };
    assert_eq!(code(&too_many), Code::InvalidArgument);
    let odd = TensorProto { dcomplex_val: vec![1.0; 3], ..proto(DataType::Complex128, 2) };
    let e = Tensor::from_proto(&odd).unwrap_err();
    assert!(e.code == Code::InvalidArgument && e.message.contains("dcomplex_val"), "{e}");
    let too_many = TensorProto { uint64_val: vec![1; 3], ..proto(DataType::UInt64, 2) };
    assert_eq!(code(&too_many), Code::InvalidArgument);
}
