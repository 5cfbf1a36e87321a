use ferroflow_core::proto::{summary, Message, Summary};
use ferroflow_core::{attr, DataType, Tensor};

use ferroflow_kernels::summary::histogram::default_bucket_limits;
use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn default_buckets_match_tensorflow() {
    let l = default_bucket_limits();
    assert_eq!(l.len(), 1551);
    assert_eq!(l[l.len() / 2], 0.0);
    assert_eq!(l[l.len() / 2 + 1], 1e-12);
    assert_eq!(*l.last().unwrap(), f64::MAX);
    assert_eq!(l[0], -f64::MAX);
    assert!(l.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn histogram_summary() {
    let n = node("HistogramSummary", &[("T", attr::ty(DataType::Float))]);
    let vals = Tensor::vec(vec![0.0f32, 1.0, 1.0, -2.0]);
    let out = run_kernel(n.clone(), vec![Tensor::scalar(b"w".to_vec()), vals], 1).unwrap();
    let s = Summary::decode(out[0].scalar_value::<Vec<u8>>().unwrap().as_slice()).unwrap();
    let Some(summary::value::Value::Histo(h)) = &s.value[0].value else { panic!("no histogram") };
    assert_eq!((h.min, h.max, h.num, h.sum, h.sum_squares), (-2.0, 1.0, 4.0, 0.0, 6.0));
    assert_eq!(h.bucket.iter().sum::<f64>(), 4.0);
    assert_eq!(h.bucket.len(), h.bucket_limit.len());
    // 0.0 lands in the bucket whose limit is the next one above 0 (1e-12).
    let zero = h.bucket_limit.iter().position(|&l| l == 1e-12).unwrap();
    assert_eq!(h.bucket[zero], 1.0);
    // 1.0 lands in the bucket whose limit is the first one above 1.
    let one = h.bucket_limit.iter().position(|&l| l > 1.0).unwrap();
    assert_eq!(h.bucket[one], 2.0);
    let nan = Tensor::vec(vec![1.0f32, f32::NAN]);
    let e = run_kernel(n, vec![Tensor::scalar(b"w".to_vec()), nan], 1).unwrap_err();
    assert!(e.message.contains("Nan in summary histogram for: w"), "{e}");
}
