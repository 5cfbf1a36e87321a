use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn decode_raw_and_string_length() {
    let be = node("DecodeRaw", &[("out_type", attr::ty(DataType::Int16)), ("little_endian", attr::bool(false))]);
    let s = Tensor::new(vec![2], vec![vec![0u8, 1, 1, 0], vec![255, 255, 0, 2]]).unwrap();
    let out = run_kernel(be.clone(), vec![s.clone()], 1).unwrap();
    assert_eq!(out[0].dims(), &[2, 2]);
    assert_eq!(out[0].as_slice::<i16>().unwrap(), &[1, 256, -1, 2]);
    let le = node("DecodeRaw", &[("out_type", attr::ty(DataType::Int16)), ("little_endian", attr::bool(true))]);
    assert_eq!(run_kernel(le.clone(), vec![s], 1).unwrap()[0].as_slice::<i16>().unwrap(), &[256, 1, -1, 512]);
    let f = node("DecodeRaw", &[("out_type", attr::ty(DataType::Float)), ("little_endian", attr::bool(true))]);
    let one = Tensor::new(vec![1], vec![1.5f32.to_le_bytes().to_vec()]).unwrap();
    assert_eq!(run_kernel(f, vec![one], 1).unwrap()[0].as_slice::<f32>().unwrap(), &[1.5]);
    let uneven = Tensor::new(vec![2], vec![vec![0u8, 1], vec![1u8, 2, 3, 4]]).unwrap();
    assert!(run_kernel(le.clone(), vec![uneven], 1).unwrap_err().message.contains("same size"));
    let odd = Tensor::new(vec![1], vec![vec![0u8, 1, 2]]).unwrap();
    assert!(run_kernel(le, vec![odd], 1).unwrap_err().message.contains("not a multiple of 2"));
    let w = Tensor::new(vec![2], vec!["h\u{e9}llo".as_bytes().to_vec(), vec![]]).unwrap();
    let bytes = node("StringLength", &[]);
    assert_eq!(run_kernel(bytes, vec![w.clone()], 1).unwrap()[0].as_slice::<i32>().unwrap(), &[6, 0]);
    let chars = node("StringLength", &[("unit", attr::string("UTF8_CHAR"))]);
    assert_eq!(run_kernel(chars, vec![w], 1).unwrap()[0].as_slice::<i32>().unwrap(), &[5, 0]);
}
