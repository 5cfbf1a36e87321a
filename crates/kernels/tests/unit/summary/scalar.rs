use ferroflow_core::proto::{summary, Message, Summary};
use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn one_value_per_tag() {
    let n = node("ScalarSummary", &[("T", attr::ty(DataType::Float))]);
    let tags = Tensor::vec(vec![b"loss".to_vec(), b"acc".to_vec()]);
    let out = run_kernel(n.clone(), vec![tags, Tensor::vec(vec![0.5f32, 0.25])], 1).unwrap();
    let bytes = out[0].scalar_value::<Vec<u8>>().unwrap();
    let s = Summary::decode(bytes.as_slice()).unwrap();
    assert_eq!(s.value.len(), 2);
    assert_eq!(s.value[1].tag, "acc");
    assert_eq!(s.value[1].value, Some(summary::value::Value::SimpleValue(0.25)));
    let e = run_kernel(n, vec![Tensor::scalar(b"x".to_vec()), Tensor::vec(vec![1.0f32])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("not the same shape"), "{e}");
}
