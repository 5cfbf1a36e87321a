use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn partitions_rows_in_order() {
    let n = node("DynamicPartition", &[("T", attr::ty(DataType::Float)), ("num_partitions", attr::int(3))]);
    let data = Tensor::new(vec![4, 2], vec![1.0f32, 2., 3., 4., 5., 6., 7., 8.]).unwrap();
    let o = run_kernel(n.clone(), vec![data.clone(), Tensor::vec(vec![2i32, 0, 2, 0])], 3).unwrap();
    assert_eq!(o[0], Tensor::new(vec![2, 2], vec![3.0f32, 4., 7., 8.]).unwrap());
    assert_eq!(o[1].dims(), &[0, 2]);
    assert_eq!(o[2], Tensor::new(vec![2, 2], vec![1.0f32, 2., 5., 6.]).unwrap());
    let e = run_kernel(n.clone(), vec![data.clone(), Tensor::vec(vec![0i32, 3, 0, 0])], 3).unwrap_err();
    assert!(e.message.contains("partitions[1] = 3 is not in [0, 3)"), "{e}");
    let e = run_kernel(n.clone(), vec![data.clone(), Tensor::vec(vec![0i32, 1])], 3).unwrap_err();
    assert!(e.message.contains("data.shape must start with partitions.shape"), "{e}");
    let e = run_kernel(n, vec![data, Tensor::vec(vec![0i64, 1, 1, 1])], 3).unwrap_err();
    assert!(e.message.contains("partitions must be int32"), "{e}");
    // A 2-d partitions tensor over strings.
    let n = node("DynamicPartition", &[("T", attr::ty(DataType::String)), ("num_partitions", attr::int(2))]);
    let s: Vec<Vec<u8>> = ["a", "b", "c", "d"].iter().map(|x| x.as_bytes().to_vec()).collect();
    let o = run_kernel(
        n,
        vec![Tensor::new(vec![2, 2], s).unwrap(), Tensor::new(vec![2, 2], vec![1i32, 0, 0, 1]).unwrap()],
        2,
    )
    .unwrap();
    assert_eq!(o[0].as_slice::<Vec<u8>>().unwrap(), &[b"b".to_vec(), b"c".to_vec()]);
    assert_eq!(o[1].as_slice::<Vec<u8>>().unwrap(), &[b"a".to_vec(), b"d".to_vec()]);
}
