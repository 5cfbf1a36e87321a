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

#[test]
fn fallible_buffer_helpers() {
    use ferroflow_core::{Code, Tensor};
    use ferroflow_kernels::array::util::{collect_vec, copy_vec, owned_vec, scratch_vec, unshared_mut};
    assert_eq!(collect_vec(&[2, 2], (0..4).map(|i| i as f32)).unwrap(), vec![0., 1., 2., 3.]);
    let e = collect_vec(&[1 << 40, 1 << 30], std::iter::empty::<i64>()).unwrap_err();
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    assert!(e.message.contains("shape[1099511627776,1073741824] and type int64"), "{e}");
    let t = Tensor::new(vec![3], vec![1i32, 2, 3]).unwrap();
    assert_eq!(copy_vec::<i32>(&t).unwrap(), vec![1, 2, 3]);
    // Shared: copied, the original kept; unshared: moved out.
    let shared = t.clone();
    assert_eq!(owned_vec::<i32>(shared).unwrap(), vec![1, 2, 3]);
    assert_eq!(t.as_slice::<i32>().unwrap(), &[1, 2, 3]);
    assert_eq!(owned_vec::<i32>(Tensor::new(vec![1], vec![9i32]).unwrap()).unwrap(), vec![9]);
    // Writing a shared tensor leaves the other holder's elements alone.
    let mut w = t.clone();
    unshared_mut::<i32>(&mut w).unwrap()[0] = 7;
    assert_eq!((w.as_slice::<i32>().unwrap()[0], t.as_slice::<i32>().unwrap()[0]), (7, 1));
    assert!(!w.shares_buffer(&t));
    assert!(scratch_vec::<(usize, usize)>(10, "pairs").unwrap().capacity() >= 10);
    let e = scratch_vec::<(usize, usize)>(usize::MAX / 2, "pairs").unwrap_err();
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
    assert!(e.message.contains("OOM when allocating") && e.message.contains("pairs"), "{e}");
}
