use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn pack_and_unpack() {
    let a = Tensor::vec(vec![1i32, 2]);
    let b = Tensor::vec(vec![3i32, 4]);
    let pack = |axis| node("Pack", &[("T", attr::ty(DataType::Int32)), ("N", attr::int(2)), ("axis", attr::int(axis))]);
    let o = run_kernel(pack(0), vec![a.clone(), b.clone()], 1).unwrap();
    assert_eq!((o[0].dims(), o[0].as_slice::<i32>().unwrap()), (&[2usize, 2][..], &[1, 2, 3, 4][..]));
    let o = run_kernel(pack(-1), vec![a.clone(), b.clone()], 1).unwrap();
    assert_eq!(o[0].as_slice::<i32>().unwrap(), &[1, 3, 2, 4]);
    assert!(run_kernel(pack(2), vec![a.clone(), b.clone()], 1)
        .unwrap_err()
        .message
        .contains("axis = 2 not in [-2, 2)"));
    let e = run_kernel(pack(0), vec![a, Tensor::vec(vec![1i32])], 1).unwrap_err();
    assert!(e.message.contains("Shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [1]"));
    let x = Tensor::new(vec![2, 3], (0..6).collect::<Vec<i32>>()).unwrap();
    let un = |num, axis| {
        node("Unpack", &[("T", attr::ty(DataType::Int32)), ("num", attr::int(num)), ("axis", attr::int(axis))])
    };
    let o = run_kernel(un(3, 1), vec![x.clone()], 3).unwrap();
    assert_eq!(o[2].as_slice::<i32>().unwrap(), &[2, 5]);
    assert_eq!(o[2].dims(), &[2]);
    let e = run_kernel(un(3, 0), vec![x], 3).unwrap_err();
    assert!(e.message.contains("Input shape axis 0 must equal 3, got shape [2,3]"));
}
