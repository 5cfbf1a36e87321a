use std::sync::Arc;

use ferroflow_core::{DataType, Tensor};

use ferroflow_kernels::state::lock::lock_all;
use ferroflow_kernels::testutil::{node, test_step};
use ferroflow_kernels::{OpContext, ResourceMgr, Var};

#[test]
fn locks_in_given_order_and_rejects_aliases() {
    let ctx = OpContext::new(Arc::new(node("X", &[])), vec![], 0, test_step(Arc::new(ResourceMgr::new())));
    let a = Arc::new(Var::new("a", DataType::Float));
    let b = Arc::new(Var::new("b", DataType::Float));
    let vars = vec![b.clone(), a.clone()];
    let mut g = lock_all(&ctx, &vars, &["var", "accum"]).unwrap();
    *g[0] = Some(Tensor::scalar(1.0f32));
    drop(g);
    assert!(b.is_initialized() && !a.is_initialized());
    let e = lock_all(&ctx, &[a.clone(), b, a], &["var", "m", "v"]).err().unwrap();
    assert!(e.message.contains("var and v are the same variable (a)"), "{e}");
}
