use ferroflow_core::Tensor;

use ferroflow_kernels::state::update::{add_in_place, UpdateKind};

#[test]
fn adds_and_subtracts_copy_on_write() {
    let mut t = Tensor::vec(vec![1.0f32, 2.0]);
    let reader = t.clone();
    add_in_place(&mut t, &Tensor::vec(vec![0.5f32, 0.5]), UpdateKind::Add).unwrap();
    assert_eq!(t.as_slice::<f32>().unwrap(), &[1.5, 2.5]);
    assert_eq!(reader.as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    let mut i = Tensor::vec(vec![i32::MIN, 3]);
    add_in_place(&mut i, &Tensor::vec(vec![1i32, 5]), UpdateKind::Sub).unwrap();
    assert_eq!(i.as_slice::<i32>().unwrap(), &[i32::MAX, -2]);
    assert!(add_in_place(&mut Tensor::vec(vec![true]), &Tensor::vec(vec![true]), UpdateKind::Add).is_err());
}
