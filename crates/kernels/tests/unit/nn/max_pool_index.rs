use ferroflow_core::{attr, Code, DataType, Tensor};

use ferroflow_kernels::testutil::{node, pool_node, run_kernel};

/// Values from a small range, so windows hold ties, zeros and negative maxima.
fn tied(dims: &[usize], seed: usize) -> Vec<f32> {
    let len: usize = dims.iter().product();
    (0..len).map(|i| ((i * 7919 + seed * 104_729) % 13) as f32 - 6.0).collect()
}

fn with_relu(mut n: ferroflow_core::proto::NodeDef, relu: bool) -> ferroflow_core::proto::NodeDef {
    n.attr.insert("relu".into(), attr::bool(relu));
    n
}

/// `MaxPool` + `MaxPoolGrad` (+ `ReluGrad`) against the indexed pair, bit for bit.
fn check(dims: [usize; 4], k: i64, s: i64, padding: &str) {
    let x = Tensor::new(dims.to_vec(), tied(&dims, 1)).unwrap();
    let y = run_kernel(pool_node("MaxPool", DataType::Float, k, s, padding), vec![x.clone()], 1).unwrap().remove(0);
    let mut yi =
        run_kernel(pool_node("_MaxPoolWithIndex", DataType::Float, k, s, padding), vec![x.clone()], 2).unwrap();
    assert_eq!(yi[0], y, "pooled values {dims:?} k{k} s{s} {padding}");
    let index = yi.remove(1);
    assert_eq!(index.dtype(), DataType::UInt8);
    let grad = Tensor::new(y.dims().to_vec(), tied(y.dims(), 2)).unwrap();
    let dx = run_kernel(
        pool_node("MaxPoolGrad", DataType::Float, k, s, padding),
        vec![x.clone(), y.clone(), grad.clone()],
        1,
    )
    .unwrap()
    .remove(0);
    let overlap = s < k;
    for relu in [false, true] {
        if relu && overlap {
            let nd = with_relu(pool_node("_MaxPoolGradWithIndex", DataType::Float, k, s, padding), true);
            let e = ferroflow_kernels::create_kernel(&nd).err().unwrap();
            assert!(e.message.contains("relu needs windows that do not overlap"), "{e}");
            continue;
        }
        let want = if relu {
            run_kernel(node("ReluGrad", &[("T", attr::ty(DataType::Float))]), vec![dx.clone(), x.clone()], 1)
                .unwrap()
                .remove(0)
        } else {
            dx.clone()
        };
        let got = run_kernel(
            with_relu(pool_node("_MaxPoolGradWithIndex", DataType::Float, k, s, padding), relu),
            vec![x.clone(), index.clone(), grad.clone()],
            1,
        )
        .unwrap()
        .remove(0);
        let bits = |t: &Tensor| t.as_slice::<f32>().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(got.dims(), want.dims());
        assert_eq!(bits(&got), bits(&want), "gradient {dims:?} k{k} s{s} {padding} relu {relu}");
    }
}

#[test]
fn equals_max_pool_and_its_gradient_whether_windows_tile_leave_gaps_or_overlap() {
    for (dims, k, s, padding) in [
        ([2, 6, 7, 3], 2, 2, "SAME"),
        ([2, 5, 5, 3], 2, 2, "SAME"),
        ([2, 5, 6, 3], 2, 2, "VALID"),
        ([2, 7, 8, 3], 2, 3, "VALID"),
        ([2, 7, 8, 3], 3, 2, "SAME"),
        ([1, 9, 9, 2], 3, 3, "SAME"),
        // Large enough to run in parallel, with the MNIST CNN's channels.
        ([6, 28, 28, 32], 2, 2, "SAME"),
    ] {
        check(dims, k, s, padding);
    }
}

#[test]
fn doubles_and_the_index_bits() {
    let x = Tensor::new(vec![1, 2, 4, 1], vec![-3.0f64, -1., 0., 0., -2., -1., 0., 5.]).unwrap();
    let out = run_kernel(pool_node("_MaxPoolWithIndex", DataType::Double, 2, 2, "VALID"), vec![x.clone()], 2).unwrap();
    assert_eq!(out[0].as_slice::<f64>().unwrap(), &[-1., 5.]);
    // Window 0: first maximum -1 at position 1, not positive; window 1: 5 at 3, positive.
    assert_eq!(out[1].as_slice::<u8>().unwrap(), &[1, 0x83]);
    let grad = Tensor::new(vec![1, 1, 2, 1], vec![10.0f64, 20.]).unwrap();
    let node = with_relu(pool_node("_MaxPoolGradWithIndex", DataType::Double, 2, 2, "VALID"), true);
    let dx = run_kernel(node, vec![x, out[1].clone(), grad], 1).unwrap().remove(0);
    assert_eq!(dx.as_slice::<f64>().unwrap(), &[0., 0., 0., 0., 0., 0., 0., 20.]);
}

#[test]
fn errors_name_what_was_expected() {
    let x = Tensor::zeros(DataType::Float, vec![1, 4, 4, 1]).unwrap();
    let grad = Tensor::zeros(DataType::Float, vec![1, 2, 2, 1]).unwrap();
    let wrong = Tensor::zeros(DataType::Float, vec![1, 2, 2, 1]).unwrap();
    let nd = pool_node("_MaxPoolGradWithIndex", DataType::Float, 2, 2, "SAME");
    let e = run_kernel(nd.clone(), vec![x.clone(), wrong, grad.clone()], 1).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("index must be uint8 of the pooled shape [1,2,2,1]"), "{e}");
    let short = Tensor::new(vec![1, 1, 2, 1], vec![0u8, 0]).unwrap();
    let e = run_kernel(nd, vec![x, short, grad], 1).unwrap_err();
    assert!(e.message.contains("got uint8 [1,1,2,1]"), "{e}");
    let big = pool_node("_MaxPoolWithIndex", DataType::Float, 12, 12, "SAME");
    let e = ferroflow_kernels::create_kernel(&big).err().unwrap();
    assert!(e.message.contains("too large for an index byte"), "{e}");
}
