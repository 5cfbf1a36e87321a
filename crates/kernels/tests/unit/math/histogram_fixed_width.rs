use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::math::histogram_fixed_width::bins;
use ferroflow_kernels::testutil::{node, run_kernel};

#[test]
fn bad_bins_and_ranges_are_invalid_arguments() {
    let n = || node("HistogramFixedWidth", &[("T", attr::ty(DataType::Float)), ("dtype", attr::ty(DataType::Int32))]);
    let values = Tensor::vec(vec![1.0f32, 2.0]);
    let run = |range: Vec<f32>, nbins: i32| {
        run_kernel(n(), vec![values.clone(), Tensor::vec(range), Tensor::scalar(nbins)], 1).unwrap_err()
    };
    for (range, nbins, want) in [
        (vec![0.0, 1.0], 0, "nbins should be a positive number, but got '0'"),
        (vec![3.0, 1.0], 2, "value_range[0] < value_range[1]"),
        (vec![1.0, 1.0], 2, "value_range[0] < value_range[1]"),
        (vec![0.0, 1.0, 2.0], 2, "vector of 2 elements"),
    ] {
        let e = run(range, nbins);
        assert_eq!(e.code, Code::InvalidArgument, "{e}");
        assert!(e.message.contains(want), "{e}");
    }
}

#[test]
fn out_of_range_values_count_in_the_end_bins() {
    let v = [-1.0f64, 0.0, 0.99, 1.0, 2.5, 4.99, 5.0, 7.0, f64::NAN];
    assert_eq!(bins(&v, 0.0, 5.0, 5), vec![0, 0, 0, 1, 2, 4, 4, 4, 0]);
}
