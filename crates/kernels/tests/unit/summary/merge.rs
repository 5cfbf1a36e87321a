use ferroflow_core::proto::{summary, Message, Summary};
use ferroflow_core::{attr, Code, Tensor};

use ferroflow_kernels::testutil::{node, run_kernel};

fn one(tag: &str, v: f32) -> Tensor {
    let s = Summary {
        value: vec![summary::Value {
            tag: tag.into(),
            value: Some(summary::value::Value::SimpleValue(v)),
            ..Default::default()
        }],
    };
    Tensor::scalar(s.encode_to_vec())
}

#[test]
fn merges_and_rejects_duplicates() {
    let n = node("MergeSummary", &[("N", attr::int(2))]);
    let out = run_kernel(n.clone(), vec![one("a", 1.0), one("b", 2.0)], 1).unwrap();
    let s = Summary::decode(out[0].scalar_value::<Vec<u8>>().unwrap().as_slice()).unwrap();
    assert_eq!(s.value.iter().map(|v| v.tag.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
    let e = run_kernel(n.clone(), vec![one("a", 1.0), one("a", 2.0)], 1).unwrap_err();
    assert!(e.message.contains("Duplicate tag a"), "{e}");
    let e = run_kernel(n, vec![one("a", 1.0), Tensor::scalar(vec![0xffu8, 0xff])], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
}
