use ferroflow_core::{attr, Status, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn rng<T: ferroflow_core::TensorType>(s: T, l: T, d: T) -> Result<Tensor, Status> {
    let n = node("Range", &[("Tidx", attr::ty(T::DTYPE))]);
    Ok(run_kernel(n, vec![Tensor::scalar(s), Tensor::scalar(l), Tensor::scalar(d)], 1)?.remove(0))
}

#[test]
fn ranges() {
    assert_eq!(rng(0i32, 5, 2).unwrap().as_slice::<i32>().unwrap(), &[0, 2, 4]);
    assert_eq!(rng(5i64, 0, -2).unwrap().as_slice::<i64>().unwrap(), &[5, 3, 1]);
    assert_eq!(rng(0i32, 0, 1).unwrap().dims(), &[0]);
    assert_eq!(rng(0.5f64, 2.0, 0.3).unwrap().num_elements(), 5);
    assert_eq!(rng(0.0f32, 1.0, 0.25).unwrap().as_slice::<f32>().unwrap(), &[0.0, 0.25, 0.5, 0.75]);
    assert!(rng(0i32, 5, 0).unwrap_err().message.contains("Requires delta != 0: 0"));
    assert!(rng(5i32, 1, 1).unwrap_err().message.contains("Requires start <= limit when delta > 0: 5/1"));
    assert!(rng(1i32, 5, -1).unwrap_err().message.contains("Requires start >= limit when delta < 0: 1/5"));
    assert!(rng(0.0f32, f32::INFINITY, 1.0).unwrap_err().message.contains("Requires ((limit - start) / delta) <="));
    assert!(rng(0.0f32, f32::NAN, 1.0).is_err());
}
