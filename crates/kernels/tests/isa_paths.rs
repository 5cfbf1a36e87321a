//! The kernels under every instruction-set path this CPU supports.
//!
//! The path is fixed once per process, so [`every_available_path_matches_portable`] runs
//! this test binary again once per path with `FERROFLOW_ISA` set, filtered to the ignored
//! [`child_kernel_results`]. Each child checks that the path it was asked for is the one
//! in use, runs the golden cases, and writes the outputs of the kernels with per-ISA code
//! (Conv2D and both of its gradients on their direct and im2col paths, MatMul) on seeded
//! random data to a file; the parent compares every path's outputs with the portable ones.

use std::fmt::Write as _;
use std::process::Command;

use ferroflow_core::{attr, DataType, Tensor};
use ferroflow_kernels::isa::{self, Isa};
use ferroflow_kernels::testutil::{conv_node, node, pool_node, run_kernel, temp_dir};

mod golden_check;

const OUT_ENV: &str = "FERROFLOW_ISA_PATHS_OUT";
const CHILD: &str = "child_kernel_results";

/// Seeded uniform values in [-1, 1) with full f64 mantissas (xorshift64*), so that fused
/// and unfused multiply-adds round differently in both precisions.
fn data(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            let r = s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
            r as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

fn tensor(dt: DataType, dims: &[usize], seed: u64) -> Tensor {
    let v = data(dims.iter().product(), seed);
    match dt {
        DataType::Float => Tensor::new(dims.to_vec(), v.into_iter().map(|x| x as f32).collect::<Vec<_>>()),
        _ => Tensor::new(dims.to_vec(), v),
    }
    .unwrap()
}

fn dims_tensor(d: &[usize]) -> Tensor {
    Tensor::vec(d.iter().map(|&v| v as i32).collect::<Vec<_>>())
}

fn run1(nd: ferroflow_core::proto::NodeDef, inputs: Vec<Tensor>) -> Vec<f64> {
    run_kernel(nd, inputs, 1).unwrap().remove(0).to_f64_vec().unwrap()
}

/// (name, outputs) of every kernel with per-ISA code, on fixed inputs.
fn kernel_results() -> Vec<(String, Vec<f64>)> {
    let mut out = Vec::new();
    // (n, h, w, c, k, oc, stride, padding): MNIST's first layer (direct paths: c ≤ 4 and
    // oc a multiple of 8), a strided 3-channel one, and the CNN's second layer (im2col).
    let convs =
        [(4, 28, 28, 1, 5, 32, 1, "SAME"), (2, 13, 11, 3, 3, 16, 2, "VALID"), (2, 14, 14, 32, 5, 64, 1, "SAME")];
    for dt in [DataType::Float, DataType::Double] {
        for (i, &(n, h, w, c, k, oc, s, p)) in convs.iter().enumerate() {
            let seed = 10 * i as u64;
            let (x, f) = (tensor(dt, &[n, h, w, c], seed + 1), tensor(dt, &[k, k, c, oc], seed + 2));
            let y = run_kernel(conv_node("Conv2D", dt, &[1, s as i64, s as i64, 1], p), vec![x.clone(), f.clone()], 1)
                .unwrap()
                .remove(0);
            let dy = tensor(dt, y.dims(), seed + 3);
            let tag = format!("{dt}/{n}x{h}x{w}x{c}/{k}x{k}x{oc}/s{s}/{p}");
            let dw = run1(
                conv_node("Conv2DBackpropFilter", dt, &[1, s as i64, s as i64, 1], p),
                vec![x, dims_tensor(&[k, k, c, oc]), dy.clone()],
            );
            let dx = run1(
                conv_node("Conv2DBackpropInput", dt, &[1, s as i64, s as i64, 1], p),
                vec![dims_tensor(&[n, h, w, c]), f, dy],
            );
            out.push((format!("Conv2D {tag}"), y.to_f64_vec().unwrap()));
            out.push((format!("Conv2DBackpropFilter {tag}"), dw));
            out.push((format!("Conv2DBackpropInput {tag}"), dx));
        }
    }
    // Max pooling and its gradient (compiled per path), disjoint and overlapping windows.
    for (k, s, p) in [(2, 2, "SAME"), (3, 2, "VALID")] {
        let pool = |op: &str| pool_node(op, DataType::Float, k, s, p);
        let x = tensor(DataType::Float, &[2, 28, 28, 32], 40 + k as u64);
        let y = run_kernel(pool("MaxPool"), vec![x.clone()], 1).unwrap().remove(0);
        let g = tensor(DataType::Float, y.dims(), 50 + k as u64);
        let dx = run1(pool("MaxPoolGrad"), vec![x, y.clone(), g]);
        out.push((format!("MaxPool {k}x{k}/s{s}/{p}"), y.to_f64_vec().unwrap()));
        out.push((format!("MaxPoolGrad {k}x{k}/s{s}/{p}"), dx));
    }
    // The MLP's products, forward and both transposed backprop forms, and a product with a
    // large transposed right operand (computed transposed, as the CNN's dense input gradient).
    for (m, k, n, ta, tb) in [
        (100, 784, 256, false, false),
        (784, 100, 256, true, false),
        (100, 256, 784, false, true),
        (20, 1024, 600, false, true),
    ] {
        let a = tensor(DataType::Float, &if ta { [k, m] } else { [m, k] }, m as u64);
        let b = tensor(DataType::Float, &if tb { [n, k] } else { [k, n] }, n as u64);
        let nd = node(
            "MatMul",
            &[("T", attr::ty(DataType::Float)), ("transpose_a", attr::bool(ta)), ("transpose_b", attr::bool(tb))],
        );
        out.push((format!("MatMul {m}x{k}x{n} ta={ta} tb={tb}"), run1(nd, vec![a, b])));
    }
    out
}

/// The child: asserts the forced path is in use, runs the golden cases, writes
/// `path\n` then one `name\tv v v …` line per kernel output to `$FERROFLOW_ISA_PATHS_OUT`.
#[test]
#[ignore = "run by every_available_path_matches_portable with FERROFLOW_ISA set"]
fn child_kernel_results() {
    let out = std::env::var(OUT_ENV).expect("FERROFLOW_ISA_PATHS_OUT");
    let asked = Isa::parse(&std::env::var(isa::ENV).expect("FERROFLOW_ISA")).expect("a known path");
    assert_eq!(isa::current(), asked, "FERROFLOW_ISA={asked} was not honoured");
    golden_check::check_all().unwrap_or_else(|e| panic!("on the {asked} path: {e}"));
    let mut s = format!("{}\n", isa::name());
    for (name, v) in kernel_results() {
        // `{}` prints the shortest string that parses back to the same f64.
        write!(s, "{name}\t").unwrap();
        s.push_str(&v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" "));
        s.push('\n');
    }
    std::fs::write(out, s).unwrap();
}

/// One child run under `path`: (the path it reported, its kernel outputs).
fn run_child(path: Isa, dir: &std::path::Path) -> (String, Vec<(String, Vec<f64>)>) {
    let file = dir.join(path.name());
    let status = Command::new(std::env::current_exe().unwrap())
        .args([CHILD, "--exact", "--ignored", "--test-threads=1"])
        .env(isa::ENV, path.name())
        .env(OUT_ENV, &file)
        .status()
        .unwrap();
    assert!(status.success(), "the kernel checks failed under FERROFLOW_ISA={path}");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines = text.lines();
    let reported = lines.next().unwrap().to_string();
    let results = lines
        .map(|l| {
            let (name, vals) = l.split_once('\t').unwrap();
            (name.to_string(), vals.split(' ').map(|v| v.parse().unwrap()).collect())
        })
        .collect();
    (reported, results)
}

#[test]
fn every_available_path_matches_portable() {
    let dir = temp_dir("isa-paths");
    let paths = Isa::available();
    assert_eq!(paths[0], Isa::Portable);
    let runs: Vec<_> = paths.iter().map(|&p| (p, run_child(p, &dir))).collect();
    let (_, (_, portable)) = &runs[0];
    assert_eq!(portable.len(), 26);
    for (path, (reported, results)) in &runs {
        assert_eq!(reported, path.name(), "the child ran on another path than the one forced");
        assert_eq!(results.len(), portable.len());
        for ((name, got), (_, want)) in results.iter().zip(portable) {
            assert_eq!(got.len(), want.len(), "{name}");
            assert!(got.iter().all(|v| v.is_finite()), "{name} on {path}: non-finite output");
            // Fused and unfused multiply-adds differ in the last bits of each term; the
            // sums have at most a few thousand terms of magnitude ≤ 1.
            let f32_case = name.contains("float32") || name.starts_with("MatMul");
            let tol = if f32_case { 1e-5 } else { 1e-12 };
            let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                assert!((g - w).abs() <= tol * scale, "{name}[{i}] on {path}: {g} vs portable {w}");
            }
        }
        // The portable path really is different code: on the FMA paths the direct
        // convolutions fuse their multiply-adds, so some outputs differ in their last bits.
        if path.has_avx2_fma() {
            for key in [
                "Conv2D float32/4x28x28x1/5x5x32/s1/SAME",
                "Conv2D float64/4x28x28x1/5x5x32/s1/SAME",
                "Conv2DBackpropFilter float32/4x28x28x1/5x5x32/s1/SAME",
            ] {
                let [a, b] = [results, portable].map(|r| &r.iter().find(|(n, _)| n == key).expect(key).1);
                assert!(a != b, "{key}: the {path} and portable outputs are bit-identical");
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
