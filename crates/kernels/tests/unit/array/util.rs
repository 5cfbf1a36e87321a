use ferroflow_core::DataType;

use ferroflow_kernels::array::util::check_alloc;

#[test]
fn alloc_guard() {
    assert!(check_alloc(&[1 << 20, 4], DataType::Float).is_ok());
    let e = check_alloc(&[1 << 40], DataType::Float).unwrap_err();
    assert_eq!(e.code, ferroflow_core::Code::ResourceExhausted);
    assert!(e.message.contains("shape[1099511627776] and type float"), "{e}");
    assert!(e.message.contains("memory limit"), "{e}");
    assert!(check_alloc(&[usize::MAX, 2], DataType::UInt8).is_err());
}
