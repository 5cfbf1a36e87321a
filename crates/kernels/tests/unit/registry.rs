use ferroflow_core::{attr, DataType};

use ferroflow_kernels::testutil::node;
use ferroflow_kernels::{create_kernel, registry};

#[test]
fn ops_registered_as_cheap_run_inline_and_keep_their_kind() {
    let r = registry();
    assert!(r.is_cheap("NoOp") && r.is_cheap("_Recv") && r.is_cheap("StackPushV2"));
    assert!(!r.is_cheap("MatMul") && !r.is_cheap("NoSuchOp"));
    let no_op = create_kernel(&node("NoOp", &[])).unwrap();
    assert!(!no_op.is_expensive() && !no_op.is_async());
    let recv = node(
        "_Recv",
        &[
            ("tensor_type", attr::ty(DataType::Float)),
            ("tensor_name", attr::string("x")),
            ("send_device", attr::string("/job:a/replica:0/task:0/device:CPU:0")),
            ("send_device_incarnation", attr::int(1)),
            ("recv_device", attr::string("/job:a/replica:0/task:0/device:CPU:0")),
        ],
    );
    let recv = create_kernel(&recv).unwrap();
    assert!(!recv.is_expensive() && recv.is_async());
    let add = node("AddV2", &[("T", attr::ty(DataType::Float))]);
    assert!(create_kernel(&add).unwrap().is_expensive());
}
