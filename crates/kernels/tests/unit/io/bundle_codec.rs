use ferroflow_core::{Code, DataType, Shape, Tensor};

use ferroflow_kernels::io::bundle_codec::{decode, encode};
use ferroflow_kernels::io::crc::{crc32c, mask};

#[test]
fn round_trips() {
    let ts = vec![
        Tensor::new(vec![2, 2], vec![1.5f32, -2.0, 3.25, 0.0]).unwrap(),
        Tensor::scalar(7i64),
        Tensor::vec(vec![1.0f64, 2.0]),
        Tensor::vec(vec![true, false, true]),
        Tensor::vec(vec![1u8, 255]),
        Tensor::new(vec![0, 3], Vec::<i32>::new()).unwrap(),
        Tensor::vec(vec![b"".to_vec(), b"hello".to_vec(), vec![0u8; 200]]),
        Tensor::vec(vec![ferroflow_core::half::f16::from_f32(-1.5), ferroflow_core::half::f16::MAX]),
        Tensor::vec(vec![ferroflow_core::half::bf16::from_f32(3.0)]),
        Tensor::vec(vec![-128i8, 5]),
        Tensor::vec(vec![u64::MAX, 1]),
        Tensor::vec(vec![ferroflow_core::C128::new(1.0, -2.5)]),
        Tensor::vec(vec![ferroflow_core::QInt32(-7)]),
    ];
    for t in ts {
        let (bytes, crc) = encode(&t, "t").unwrap();
        let back = decode(&bytes, t.dtype(), t.shape().clone(), crc, "t", "f").unwrap();
        assert_eq!(back, t);
    }
}

#[test]
fn string_layout() {
    let t = Tensor::vec(vec![b"ab".to_vec(), b"c".to_vec()]);
    let (bytes, crc) = encode(&t, "s").unwrap();
    // lengths, 4 checksum bytes, contents
    assert_eq!(bytes.len(), 2 + 4 + 3);
    assert_eq!(&bytes[..2], &[2, 1]);
    assert_eq!(&bytes[6..], b"abc");
    let mut lens = Vec::new();
    lens.extend_from_slice(&2u32.to_le_bytes());
    lens.extend_from_slice(&1u32.to_le_bytes());
    assert_eq!(&bytes[2..6], &mask(crc32c(&lens)).to_le_bytes());
    let mut all = lens.clone();
    all.extend_from_slice(&bytes[2..]);
    assert_eq!(crc, crc32c(&all));
}

#[test]
fn corruption_is_data_loss() {
    let t = Tensor::vec(vec![1.0f32, 2.0]);
    let (mut bytes, crc) = encode(&t, "w").unwrap();
    bytes[0] ^= 1;
    let e = decode(&bytes, DataType::Float, Shape::new(vec![2]), crc, "w", "m.data").unwrap_err();
    assert_eq!(e.code, Code::DataLoss);
    assert!(e.message.contains("'w'") && e.message.contains("m.data"), "{e}");
    let (bytes, crc) = encode(&t, "w").unwrap();
    assert_eq!(
        decode(&bytes[..4], DataType::Float, Shape::new(vec![2]), crc, "w", "f").unwrap_err().code,
        Code::DataLoss
    );
    let s = Tensor::vec(vec![b"xyz".to_vec()]);
    let (bytes, crc) = encode(&s, "s").unwrap();
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x10;
        assert!(decode(&b, DataType::String, Shape::new(vec![1]), crc, "s", "f").is_err(), "byte {i}");
    }
    assert!(decode(&bytes[..bytes.len() - 1], DataType::String, Shape::new(vec![1]), crc, "s", "f").is_err());
    let e = encode(&Tensor::scalar(ferroflow_core::ResourceHandle::default()), "r").unwrap_err();
    assert_eq!(e.code, Code::Unimplemented);
}
