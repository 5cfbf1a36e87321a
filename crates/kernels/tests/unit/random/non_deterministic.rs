//! NonDeterministicInts: the shape and dtype asked for, different numbers each run.

use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn ints(dtype: DataType, shape: Tensor) -> Result<Tensor, ferroflow_core::Status> {
    let n = node("NonDeterministicInts", &[("dtype", attr::ty(dtype)), ("shape_dtype", attr::ty(shape.dtype()))]);
    Ok(run_kernel(n, vec![shape], 1)?.remove(0))
}

#[test]
fn shape_and_dtype_as_asked_and_runs_differ() {
    let a = ints(DataType::Int64, Tensor::vec(vec![2i64, 3])).unwrap();
    let b = ints(DataType::Int64, Tensor::vec(vec![2i64, 3])).unwrap();
    assert_eq!((a.dtype(), a.dims()), (DataType::Int64, &[2usize, 3][..]));
    assert_ne!(a, b);
    // 64 random bits: not all values fit in 32 bits.
    assert!(a.as_slice::<i64>().unwrap().iter().any(|v| i32::try_from(*v).is_err()));
    for dt in [DataType::Int32, DataType::UInt32, DataType::UInt64] {
        let t = ints(dt, Tensor::vec(vec![4i32])).unwrap();
        assert_eq!((t.dtype(), t.dims()), (dt, &[4usize][..]));
    }
    assert_eq!(ints(DataType::Int64, Tensor::vec(Vec::<i32>::new())).unwrap().dims(), &[] as &[usize]);
}

#[test]
fn bad_shapes_and_dtypes_fail_as_in_tensorflow() {
    let e = ints(DataType::Int64, Tensor::vec(vec![2i32, -1])).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    let e = ints(DataType::Int64, Tensor::new(vec![1, 1], vec![2i32]).unwrap()).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("shape must be a vector"), "{e}");
    let e = ints(DataType::Float, Tensor::vec(vec![2i32])).unwrap_err();
    assert_eq!(e.code, Code::NotFound, "{e}");
}
