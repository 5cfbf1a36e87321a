use std::sync::Arc;

use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::testutil::node;
use ferroflow_kernels::{create_kernel, OpContext, ResourceMgr, StepCtx, Value};

fn step() -> Arc<StepCtx> {
    ferroflow_kernels::testutil::test_step(Arc::new(ResourceMgr::new()))
}

#[test]
fn switch_marks_the_untaken_output_dead() {
    for taken in [false, true] {
        let n = Arc::new(node("Switch", &[("T", attr::ty(DataType::Float))]));
        let inputs = vec![Value::Tensor(Tensor::scalar(2.5f32)), Value::Tensor(Tensor::scalar(taken))];
        let switch = create_kernel(&n).unwrap();
        let mut ctx = OpContext::new(n, inputs, 2, step());
        switch.compute(&mut ctx).unwrap();
        let out = ctx.take_output_entries().unwrap();
        assert!(out[!taken as usize].is_none());
        let v = out[taken as usize].as_ref().unwrap().tensor().unwrap();
        assert_eq!(v.scalar_value::<f32>().unwrap(), 2.5);
    }
    let n = Arc::new(node("Switch", &[("T", attr::ty(DataType::Float))]));
    let bad = vec![Value::Tensor(Tensor::scalar(1f32)), Value::Tensor(Tensor::vec(vec![true, false]))];
    let switch = create_kernel(&n).unwrap();
    let mut ctx = OpContext::new(n, bad, 2, step());
    assert!(switch.compute(&mut ctx).unwrap_err().message.contains("pred must be a scalar"));
}
