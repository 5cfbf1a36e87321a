use ferroflow_core::{DataType, Tensor};

use ferroflow_kernels::{ResourceMgr, Var};

#[test]
fn create_lookup_delete() {
    let rm = ResourceMgr::new();
    assert_eq!(rm.lookup::<Var>("", "w").unwrap_err().code, ferroflow_core::Code::NotFound);
    let v = rm.lookup_or_create("", "w", || Ok(Var::new("w", DataType::Float))).unwrap();
    assert!(!v.is_initialized());
    v.assign(Tensor::scalar(1.0f32)).unwrap();
    assert!(v.assign(Tensor::scalar(1i32)).is_err());
    let again = rm.lookup::<Var>("localhost", "w").unwrap();
    assert_eq!(again.read().unwrap().scalar_value::<f32>().unwrap(), 1.0);
    assert_eq!(rm.variables().len(), 1);
    rm.cleanup(&[]);
    assert!(rm.lookup::<Var>("", "w").is_err());
}
