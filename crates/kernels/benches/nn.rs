//! nn kernel benchmarks on the shapes of the MNIST models (batch 50), two matrix products,
//! the six products of an LSTM step, ResNet50's 3×3 convolutions and MobileNetV2's strided
//! depthwise input gradients. Compare with `scripts/bench/tf_nn_ops.py` (TensorFlow on the same shapes).
//!
//! `cargo bench -p ferroflow-kernels --bench nn`

use criterion::{criterion_group, criterion_main, Criterion};
use ferroflow_core::{attr, DataType, Tensor};
use ferroflow_kernels::testutil::{conv_node, node, pool_node, run_kernel, seeded_f32};

// Like the ferroflow binary: freed output buffers are reused instead of page-faulted in again.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn data(dims: &[usize], seed: u64) -> Tensor {
    seeded_f32(dims, seed)
}

fn sizes(d: &[usize]) -> Tensor {
    Tensor::vec(d.iter().map(|&v| v as i32).collect::<Vec<_>>())
}

fn bench_matmul(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul");
    for (m, k, n) in [(100, 784, 256), (1024, 1024, 1024)] {
        let nd = node(
            "MatMul",
            &[("T", attr::ty(DataType::Float)), ("transpose_a", attr::bool(false)), ("transpose_b", attr::bool(false))],
        );
        let (a, b) = (data(&[m, k], 1), data(&[k, n], 2));
        g.bench_function(format!("{m}x{k}x{n}"), |bch| {
            bch.iter(|| run_kernel(nd.clone(), vec![a.clone(), b.clone()], 1).unwrap())
        });
    }
    g.finish();
}

/// The six products of an LSTM(256) step over 64 features at batch 32 (the forward
/// `x·W` and `h·U`, their input gradients `dz·Wᵀ`, `dz·Uᵀ` and weight gradients
/// `xᵀ·dz`, `hᵀ·dz`), as `(m, k, n, transpose_a, transpose_b)`.
const LSTM_PRODUCTS: [(usize, usize, usize, bool, bool); 6] = [
    (32, 64, 1024, false, false),
    (32, 256, 1024, false, false),
    (32, 1024, 64, false, true),
    (32, 1024, 256, false, true),
    (64, 32, 1024, true, false),
    (256, 32, 1024, true, false),
];

/// One criterion group timing `MatMul` on each `(m, k, n, transpose_a, transpose_b)`.
fn matmul_group(c: &mut Criterion, group: &str, products: &[(usize, usize, usize, bool, bool)], samples: usize) {
    let mut g = c.benchmark_group(group);
    g.sample_size(samples);
    for &(m, k, n, ta, tb) in products {
        let nd = node(
            "MatMul",
            &[("T", attr::ty(DataType::Float)), ("transpose_a", attr::bool(ta)), ("transpose_b", attr::bool(tb))],
        );
        let a = if ta { data(&[k, m], 1) } else { data(&[m, k], 1) };
        let b = if tb { data(&[n, k], 2) } else { data(&[k, n], 2) };
        g.bench_function(format!("{m}x{k}x{n}_ta{}_tb{}", ta as u8, tb as u8), |bch| {
            bch.iter(|| run_kernel(nd.clone(), vec![a.clone(), b.clone()], 1).unwrap())
        });
    }
    g.finish();
}

fn bench_matmul_lstm(c: &mut Criterion) {
    matmul_group(c, "matmul_lstm", &LSTM_PRODUCTS, 100);
}

/// The two convolutions of the MNIST CNN at batch 50: [50,28,28,1]*[5,5,1,32] and
/// [50,14,14,32]*[5,5,32,64], both SAME, stride 1.
const CONVS: [(&str, [usize; 4], [usize; 4]); 2] =
    [("conv1", [50, 28, 28, 1], [5, 5, 1, 32]), ("conv2", [50, 14, 14, 32], [5, 5, 32, 64])];

/// Forward, input gradient and filter gradient of each convolution (SAME, stride 1).
/// A convolution to time: its name, input and filter dims.
type Conv = (&'static str, [usize; 4], [usize; 4]);

fn conv_group(c: &mut Criterion, group: &str, convs: &[Conv]) {
    let mut g = c.benchmark_group(group);
    g.sample_size(20);
    for &(name, xs, fs) in convs {
        let (x, f) = (data(&xs, 3), data(&fs, 4));
        let dy = data(&[xs[0], xs[1], xs[2], fs[3]], 5);
        let fwd = conv_node("Conv2D", DataType::Float, &[1, 1, 1, 1], "SAME");
        g.bench_function(format!("{name}_forward"), |b| {
            b.iter(|| run_kernel(fwd.clone(), vec![x.clone(), f.clone()], 1).unwrap())
        });
        let bi = conv_node("Conv2DBackpropInput", DataType::Float, &[1, 1, 1, 1], "SAME");
        g.bench_function(format!("{name}_backprop_input"), |b| {
            b.iter(|| run_kernel(bi.clone(), vec![sizes(&xs), f.clone(), dy.clone()], 1).unwrap())
        });
        let bf = conv_node("Conv2DBackpropFilter", DataType::Float, &[1, 1, 1, 1], "SAME");
        g.bench_function(format!("{name}_backprop_filter"), |b| {
            b.iter(|| run_kernel(bf.clone(), vec![x.clone(), sizes(&fs), dy.clone()], 1).unwrap())
        });
    }
    g.finish();
}

/// The convolutions of the models: ResNet50's 3×3 layers of its four stages at 128×128,
/// batch 8 (SAME, stride 1), and MobileNetV2's 1×1 expansions and projections at 160×160,
/// batch 16 (long products with small filters).
const MODEL_CONVS: [(&str, &[Conv]); 2] = [
    (
        "conv2d_resnet",
        &[
            ("s2", [8, 32, 32, 64], [3, 3, 64, 64]),
            ("s3", [8, 16, 16, 128], [3, 3, 128, 128]),
            ("s4", [8, 8, 8, 256], [3, 3, 256, 256]),
            ("s5", [8, 4, 4, 512], [3, 3, 512, 512]),
            ("s3_1x1_512_to_128", [8, 16, 16, 512], [1, 1, 512, 128]),
            ("s4_1x1_1024_to_256", [8, 8, 8, 1024], [1, 1, 1024, 256]),
            ("s4_1x1_256_to_1024", [8, 8, 8, 256], [1, 1, 256, 1024]),
            ("s5_1x1_2048_to_512", [8, 4, 4, 2048], [1, 1, 2048, 512]),
            ("s5_1x1_512_to_2048", [8, 4, 4, 512], [1, 1, 512, 2048]),
        ],
    ),
    (
        "conv2d_mnv2",
        &[
            ("80x80x16_to_96", [16, 80, 80, 16], [1, 1, 16, 96]),
            ("40x40x144_to_24", [16, 40, 40, 144], [1, 1, 144, 24]),
            ("20x20x192_to_32", [16, 20, 20, 192], [1, 1, 192, 32]),
            ("5x5x960_to_160", [16, 5, 5, 960], [1, 1, 960, 160]),
        ],
    ),
];

fn bench_conv(c: &mut Criterion) {
    conv_group(c, "conv2d", &CONVS);
    for (group, convs) in MODEL_CONVS {
        conv_group(c, group, convs);
    }
}

/// MobileNetV2's stride-2 depthwise input gradients at 160×160, batch 16 (VALID after a
/// ZeroPadding2D).
fn bench_depthwise_strided(c: &mut Criterion) {
    let mut g = c.benchmark_group("depthwise_mnv2");
    g.sample_size(10);
    for (name, xs) in [("81x81x96", [16, 81, 81, 96]), ("41x41x144", [16, 41, 41, 144])] {
        let f = data(&[3, 3, xs[3], 1], 4);
        let dy = data(&[xs[0], (xs[1] - 3) / 2 + 1, (xs[2] - 3) / 2 + 1, xs[3]], 5);
        let nd = node(
            "DepthwiseConv2dNativeBackpropInput",
            &[
                ("T", attr::ty(DataType::Float)),
                ("strides", attr::list_int(&[1, 2, 2, 1])),
                ("padding", attr::string("VALID")),
            ],
        );
        g.bench_function(format!("{name}_backprop_input_s2"), |b| {
            b.iter(|| run_kernel(nd.clone(), vec![sizes(&xs), f.clone(), dy.clone()], 1).unwrap())
        });
        let x = data(&xs, 6);
        let mut fwd = nd.clone();
        fwd.op = "DepthwiseConv2dNative".into();
        g.bench_function(format!("{name}_forward_s2"), |b| {
            b.iter(|| run_kernel(fwd.clone(), vec![x.clone(), f.clone()], 1).unwrap())
        });
    }
    // Stride-1 forward layers, from MobileNetV2's widest to its narrowest maps.
    for xs in [[16, 40, 40, 144], [16, 10, 10, 576], [16, 5, 5, 960]] {
        let (x, f) = (data(&xs, 6), data(&[3, 3, xs[3], 1], 7));
        let nd = node(
            "DepthwiseConv2dNative",
            &[
                ("T", attr::ty(DataType::Float)),
                ("strides", attr::list_int(&[1, 1, 1, 1])),
                ("padding", attr::string("SAME")),
            ],
        );
        g.bench_function(format!("{}x{}x{}_forward", xs[1], xs[2], xs[3]), |b| {
            b.iter(|| run_kernel(nd.clone(), vec![x.clone(), f.clone()], 1).unwrap())
        });
        let mut nf = nd.clone();
        nf.op = "DepthwiseConv2dNativeBackpropFilter".into();
        let fsz = Tensor::vec(vec![3i32, 3, xs[3] as i32, 1]);
        g.bench_function(format!("{}x{}x{}_backprop_filter", xs[1], xs[2], xs[3]), |b| {
            b.iter(|| run_kernel(nf.clone(), vec![x.clone(), fsz.clone(), x.clone()], 1).unwrap())
        });
    }
    // Pointwise projections to few channels, and expansions from few.
    for (xs, oc) in [([16, 40, 40, 144], 24), ([16, 80, 80, 96], 24), ([16, 40, 40, 24], 144)] {
        let (x, f) = (data(&xs, 12), data(&[1, 1, xs[3], oc], 13));
        let nd = conv_node("Conv2D", DataType::Float, &[1, 1, 1, 1], "SAME");
        g.bench_function(format!("conv1x1_{}x{}x{}_to_{oc}", xs[1], xs[2], xs[3]), |b| {
            b.iter(|| run_kernel(nd.clone(), vec![x.clone(), f.clone()], 1).unwrap())
        });
    }
    // Training-mode batch norm and its gradient.
    for xs in [[16, 40, 40, 144], [16, 80, 80, 96]] {
        let (x, dy) = (data(&xs, 8), data(&xs, 9));
        let c = xs[3];
        let (scale, offset) = (data(&[c], 10), data(&[c], 11));
        let empty = Tensor::vec(Vec::<f32>::new());
        let bn = |op: &str| {
            node(
                op,
                &[
                    ("T", attr::ty(DataType::Float)),
                    ("U", attr::ty(DataType::Float)),
                    ("epsilon", attr::float(0.001)),
                    ("is_training", attr::bool(true)),
                    ("data_format", attr::string("NHWC")),
                ],
            )
        };
        let fwd = bn("FusedBatchNormV3");
        let ins = vec![x.clone(), scale.clone(), offset.clone(), empty.clone(), empty.clone()];
        let out = run_kernel(fwd.clone(), ins.clone(), 6).unwrap();
        g.bench_function(format!("batch_norm_{}x{}x{}", xs[1], xs[2], c), |b| {
            b.iter(|| run_kernel(fwd.clone(), ins.clone(), 6).unwrap())
        });
        let grad = bn("FusedBatchNormGradV3");
        let gins = vec![dy.clone(), x.clone(), scale.clone(), out[3].clone(), out[4].clone(), out[5].clone()];
        g.bench_function(format!("batch_norm_grad_{}x{}x{}", xs[1], xs[2], c), |b| {
            b.iter(|| run_kernel(grad.clone(), gins.clone(), 5).unwrap())
        });
    }
    g.finish();
}

fn bench_pool(c: &mut Criterion) {
    let mut g = c.benchmark_group("pool");
    let x = data(&[50, 28, 28, 32], 6);
    let y = run_kernel(pool_node("MaxPool", DataType::Float, 2, 2, "SAME"), vec![x.clone()], 1).unwrap().remove(0);
    let gy = data(&[50, 14, 14, 32], 7);
    g.bench_function("max_pool_50x28x28x32", |b| {
        b.iter(|| run_kernel(pool_node("MaxPool", DataType::Float, 2, 2, "SAME"), vec![x.clone()], 1).unwrap())
    });
    g.bench_function("max_pool_grad_50x28x28x32", |b| {
        b.iter(|| {
            run_kernel(
                pool_node("MaxPoolGrad", DataType::Float, 2, 2, "SAME"),
                vec![x.clone(), y.clone(), gy.clone()],
                1,
            )
            .unwrap()
        })
    });
    g.finish();
}

/// MobileNetV2's batch norm and ReLU6 on a 40×40×144 activation at batch 16, unfused
/// (`FusedBatchNormV3`, `Relu6`, `Relu6Grad`, `FusedBatchNormGradV3`) and fused as the
/// remapper builds them (`_FusedBatchNormEx`, `_FusedBatchNormGradEx`).
fn bench_batch_norm(c: &mut Criterion) {
    let mut g = c.benchmark_group("batch_norm_mnv2");
    g.sample_size(20);
    let dims = [16, 40, 40, 144];
    let (x, gy) = (data(&dims, 1), data(&dims, 2));
    let (scale, offset, empty) = (data(&[144], 3), data(&[144], 4), Tensor::new(vec![0], Vec::<f32>::new()).unwrap());
    let bn = |op: &str, act: Option<&str>| {
        let mut attrs =
            vec![("T", attr::ty(DataType::Float)), ("U", attr::ty(DataType::Float)), ("epsilon", attr::float(0.001))];
        if let Some(a) = act {
            attrs.push(("activation_mode", attr::string(a)));
        }
        node(op, &attrs)
    };
    let fwd = run_kernel(
        bn("FusedBatchNormV3", None),
        vec![x.clone(), scale.clone(), offset.clone(), empty.clone(), empty.clone()],
        6,
    )
    .unwrap();
    let (y, saved) = (fwd[0].clone(), [fwd[3].clone(), fwd[4].clone(), fwd[5].clone()]);
    let fwd_inputs = vec![x.clone(), scale.clone(), offset.clone(), empty.clone(), empty];
    for (name, op, act) in
        [("forward", "FusedBatchNormV3", None), ("forward_relu6_fused", "_FusedBatchNormEx", Some("Relu6"))]
    {
        let nd = bn(op, act);
        g.bench_function(name, |b| b.iter(|| run_kernel(nd.clone(), fwd_inputs.clone(), 6).unwrap()));
    }
    let relu6 = node("Relu6", &[("T", attr::ty(DataType::Float))]);
    g.bench_function("relu6", |b| b.iter(|| run_kernel(relu6.clone(), vec![y.clone()], 1).unwrap()));
    let relu6_grad = node("Relu6Grad", &[("T", attr::ty(DataType::Float))]);
    g.bench_function("relu6_grad", |b| {
        b.iter(|| run_kernel(relu6_grad.clone(), vec![gy.clone(), y.clone()], 1).unwrap())
    });
    let grad_inputs = vec![gy.clone(), x.clone(), scale.clone(), saved[0].clone(), saved[1].clone(), saved[2].clone()];
    let nd = bn("FusedBatchNormGradV3", None);
    g.bench_function("grad", |b| b.iter(|| run_kernel(nd.clone(), grad_inputs.clone(), 5).unwrap()));
    let mut ex_inputs = grad_inputs.clone();
    ex_inputs.extend([offset, y]);
    let nd = bn("_FusedBatchNormGradEx", Some("Relu6"));
    g.bench_function("grad_relu6_fused", |b| b.iter(|| run_kernel(nd.clone(), ex_inputs.clone(), 5).unwrap()));
    // As the remapper builds it when `y` is the forward's own activation: recomputed from `x`.
    let mut nd = nd;
    nd.attr.insert("_y_from_x".into(), attr::bool(true));
    g.bench_function("grad_relu6_fused_y_from_x", |b| b.iter(|| run_kernel(nd.clone(), ex_inputs.clone(), 5).unwrap()));
    g.finish();
}

/// Products with a narrow result (MobileNetV2's 1×1 projections and expansion input
/// gradients at batch 16) as `(m, k, n)`.
const NARROW_PRODUCTS: [(usize, usize, usize); 4] =
    [(102400, 96, 16), (25600, 144, 24), (6400, 192, 32), (1600, 384, 64)];

fn bench_matmul_narrow(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul_narrow");
    g.sample_size(20);
    let nd = node(
        "MatMul",
        &[("T", attr::ty(DataType::Float)), ("transpose_a", attr::bool(false)), ("transpose_b", attr::bool(false))],
    );
    for (m, k, n) in NARROW_PRODUCTS {
        let (a, b) = (data(&[m, k], 1), data(&[k, n], 2));
        g.bench_function(format!("{m}x{k}x{n}"), |bch| {
            bch.iter(|| run_kernel(nd.clone(), vec![a.clone(), b.clone()], 1).unwrap())
        });
    }
    g.finish();
}

/// The products of ResNet50's 3×3 convolutions at 8×8×256 (batch 8) done by im2col: the
/// forward `patches · W`, the input gradient's `dy · Wᵀ` and the filter gradient's
/// `patchesᵀ · dy`; then the input gradients `dy · Wᵀ` of its 1×1 layers at 4×4 (2048 ↔ 512)
/// and 8×8 (1024 ↔ 256); as `(m, k, n, transpose_a, transpose_b)`.
const RESNET_PRODUCTS: [(usize, usize, usize, bool, bool); 7] = [
    (512, 2304, 256, false, false),
    (512, 256, 2304, false, true),
    (2304, 512, 256, true, false),
    (128, 512, 2048, false, true),
    (128, 2048, 512, false, true),
    (512, 256, 1024, false, true),
    (512, 1024, 256, false, true),
];

fn bench_matmul_resnet(c: &mut Criterion) {
    matmul_group(c, "matmul_resnet", &RESNET_PRODUCTS, 20);
}

criterion_group!(
    benches,
    bench_matmul,
    bench_matmul_resnet,
    bench_matmul_lstm,
    bench_matmul_narrow,
    bench_conv,
    bench_depthwise_strided,
    bench_pool,
    bench_batch_norm
);
criterion_main!(benches);
