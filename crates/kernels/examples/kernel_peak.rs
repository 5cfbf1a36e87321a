//! How close the products and convolutions of the MNIST models come to this machine's gemm
//! peak (issue #20's yardstick: MatMul >= 80 %, Conv2D >= 60 %).
//!
//! The peak is the best rate of a large square f32 product (2048 x 2048 x 2048) on all
//! threads through the same `MatMul` kernel; every other row is one kernel on one shape of
//! the MLP (batch 100) or the Deep MNIST CNN (batch 100, the demo's), forward and the
//! transposed products and convolution gradients of backprop, timed as its best of
//! several runs. Prints the CPU, the ISA path and one row per shape.
//!
//! `cargo run --release -p ferroflow-kernels --example kernel_peak [-- --reps 20] [--batch 100]
//! [--only conv2]` (`--only` keeps the peak and the groups of rows whose name holds the
//! word: one product, one layer's convolutions ("Conv2D conv2"), one layer's pools
//! ("MaxPool conv2"))

use std::time::Instant;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{attr, DataType, Tensor};
use ferroflow_kernels::testutil::{conv_node, node, run_kernel, seeded_f32};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn data(dims: &[usize], seed: u64) -> Tensor {
    seeded_f32(dims, seed)
}

fn matmul(ta: bool, tb: bool) -> NodeDef {
    node(
        "MatMul",
        &[("T", attr::ty(DataType::Float)), ("transpose_a", attr::bool(ta)), ("transpose_b", attr::bool(tb))],
    )
}

/// Best seconds of `reps` runs (after one warm-up).
fn best(reps: usize, nd: &NodeDef, inputs: &[Tensor]) -> f64 {
    best_of(reps, nd, inputs, 1)
}

/// [`best`] for a kernel with `outputs` outputs.
fn best_of(reps: usize, nd: &NodeDef, inputs: &[Tensor], outputs: usize) -> f64 {
    run_kernel(nd.clone(), inputs.to_vec(), outputs).unwrap();
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            run_kernel(nd.clone(), inputs.to_vec(), outputs).unwrap();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn sizes(d: &[usize]) -> Tensor {
    Tensor::vec(d.iter().map(|&v| v as i32).collect::<Vec<_>>())
}

fn main() {
    let flag = |name: &str, default: usize| {
        std::env::args().skip_while(|a| a != name).nth(1).and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    // --batch sets the convolutions' and pools' batch (the products keep the models' shapes).
    let (reps, n) = (flag("--reps", 20), flag("--batch", 100));
    let only = std::env::args().skip_while(|a| a != "--only").nth(1).unwrap_or_default();
    let want = |name: &str| name.contains(only.as_str());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    println!("CPU: {cpu}; ISA path: {}; threads: {}", ferroflow_kernels::isa::current(), rayon::current_num_threads());

    let big = 2048;
    let (a, b) = (data(&[big, big], 1), data(&[big, big], 2));
    let t = best(reps.min(5), &matmul(false, false), &[a, b]);
    let peak = 2.0 * (big * big * big) as f64 / t / 1e9;
    println!("{:<44} {:>9} {:>8}", "kernel and shape", "GFLOP/s", "of peak");
    println!("{:<44} {:>9.1} {:>7.0}%", format!("MatMul {big}x{big}x{big} (the peak)"), peak, 100.0);

    let row = |name: String, flops: f64, secs: f64| {
        let g = flops / secs / 1e9;
        println!("{name:<44} {g:>9.1} {:>7.0}%", 100.0 * g / peak);
    };
    // (m, k, n, transpose_a, transpose_b, what): forward products and those of backprop.
    let products: [(usize, usize, usize, bool, bool, &str); 7] = [
        (100, 784, 256, false, false, "MLP hidden fwd"),
        (784, 100, 256, true, false, "MLP hidden dW = x^T dy"),
        (100, 256, 10, false, false, "MLP output fwd"),
        (100, 10, 256, false, true, "MLP output dx = dy W^T"),
        (100, 3136, 1024, false, false, "CNN fc1 fwd"),
        (3136, 100, 1024, true, false, "CNN fc1 dW = x^T dy"),
        (100, 1024, 3136, false, true, "CNN fc1 dx = dy W^T"),
    ];
    for (m, k, n, ta, tb, what) in
        products.into_iter().filter(|p| want(&format!("MatMul {}x{}x{} {}", p.0, p.1, p.2, p.5)))
    {
        let a = if ta { data(&[k, m], 3) } else { data(&[m, k], 3) };
        let b = if tb { data(&[n, k], 4) } else { data(&[k, n], 4) };
        let secs = best(reps, &matmul(ta, tb), &[a, b]);
        row(format!("MatMul {m}x{k}x{n} {what}"), 2.0 * (m * k * n) as f64, secs);
    }
    let convs = [("conv1", [n, 28, 28, 1], [5, 5, 1, 32]), ("conv2", [n, 14, 14, 32], [5, 5, 32, 64])];
    for (name, xs, fs) in convs.into_iter().filter(|c| want(&format!("Conv2D {}", c.0))) {
        let (x, f) = (data(&xs, 5), data(&fs, 6));
        let dy = data(&[xs[0], xs[1], xs[2], fs[3]], 7);
        let flops = 2.0 * (xs[0] * xs[1] * xs[2] * fs[0] * fs[1] * fs[2] * fs[3]) as f64;
        row(
            format!("Conv2D {name} fwd"),
            flops,
            best(reps, &conv_node("Conv2D", DataType::Float, &[1, 1, 1, 1], "SAME"), &[x.clone(), f.clone()]),
        );
        if name != "conv1" {
            // The first layer's input gradient is never needed (its input is the data).
            let secs = best(
                reps,
                &conv_node("Conv2DBackpropInput", DataType::Float, &[1, 1, 1, 1], "SAME"),
                &[sizes(&xs), f.clone(), dy.clone()],
            );
            row(format!("Conv2D {name} backprop input"), flops, secs);
        }
        let secs = best(
            reps,
            &conv_node("Conv2DBackpropFilter", DataType::Float, &[1, 1, 1, 1], "SAME"),
            &[x, sizes(&fs), dy],
        );
        row(format!("Conv2D {name} backprop filter"), flops, secs);
    }
    // Pooling moves memory rather than multiplying: its rows give GB/s read and written.
    println!("{:<44} {:>9} {:>8}", "pooling (2x2, stride 2, SAME)", "GB/s", "ms");
    use ferroflow_kernels::testutil::pool_node;
    for (name, xs) in [("conv1", [n, 28, 28, 32]), ("conv2", [n, 14, 14, 64])]
        .into_iter()
        .filter(|p| want(&format!("MaxPool {}", p.0)))
    {
        let x = data(&xs, 8);
        let fwd = pool_node("MaxPool", DataType::Float, 2, 2, "SAME");
        let y = run_kernel(fwd.clone(), vec![x.clone()], 1).unwrap().remove(0);
        let gy = data(y.dims(), 9);
        let (nx, ny) = (x.num_elements() as f64, y.num_elements() as f64);
        let mem_row = |what: &str, bytes: f64, secs: f64| {
            println!("{:<44} {:>9.1} {:>8.3}", format!("{what} {name}"), bytes / secs / 1e9, secs * 1e3);
        };
        mem_row("MaxPool", 4.0 * (nx + ny), best(reps, &fwd, std::slice::from_ref(&x)));
        let grad = pool_node("MaxPoolGrad", DataType::Float, 2, 2, "SAME");
        mem_row("MaxPoolGrad", 4.0 * (2.0 * nx + 2.0 * ny), best(reps, &grad, &[x.clone(), y, gy.clone()]));
        // The remapper's indexed pair: the gradient reads one byte per pooled element
        // instead of the pooled input and output.
        let fwd = pool_node("_MaxPoolWithIndex", DataType::Float, 2, 2, "SAME");
        let index = run_kernel(fwd.clone(), vec![x.clone()], 2).unwrap().remove(1);
        mem_row("_MaxPoolWithIndex", 4.0 * (nx + ny) + ny, best_of(reps, &fwd, std::slice::from_ref(&x), 2));
        let mut grad = pool_node("_MaxPoolGradWithIndex", DataType::Float, 2, 2, "SAME");
        grad.attr.insert("relu".into(), ferroflow_core::attr::bool(true));
        mem_row("_MaxPoolGradWithIndex relu", 4.0 * (nx + ny) + ny, best(reps, &grad, &[x, index, gy]));
    }
}
