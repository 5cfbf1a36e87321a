//! Convolution fixtures several test files share: input data, the shapes of the 2-D
//! tests, those of the direct kernels, and a loop convolution as the reference.

use ferroflow_kernels::nn::common::Padding;
use ferroflow_kernels::nn::im2col::ConvGeom;

pub fn data(n: usize, seed: usize) -> Vec<f64> {
    (0..n).map(|i| (((i * 31 + seed * 17) % 23) as f64 - 11.0) / 8.0).collect()
}

/// A convolution's shape: (n, h, w, c, kh, kw, oc, stride, padding).
pub type Case = (usize, usize, usize, usize, usize, usize, usize, i64, &'static str);

/// Shapes the forward and the gradient tests share: strides, both paddings, 1×1 filters.
pub const CASES: [Case; 6] = [
    (2, 7, 6, 3, 3, 3, 4, 1, "SAME"),
    (2, 7, 6, 3, 3, 2, 4, 2, "SAME"),
    (1, 8, 8, 2, 5, 5, 3, 1, "VALID"),
    (3, 9, 5, 2, 2, 3, 5, 3, "VALID"),
    (2, 4, 4, 3, 1, 1, 2, 1, "SAME"),
    (2, 5, 5, 3, 1, 1, 2, 2, "VALID"),
];

/// Convolution shapes the direct kernels' tests share: (image size, input channels, kernel
/// size, output channels, stride, padding), covering every block width and both paddings.
pub const DIRECT_CASES: [(usize, usize, usize, usize, usize, Padding); 4] = [
    (28, 1, 5, 32, 1, Padding::Same),
    (9, 3, 3, 24, 2, Padding::Same),
    (8, 2, 3, 8, 1, Padding::Valid),
    (7, 4, 2, 56, 3, Padding::Valid),
];

/// Direct (loop) convolution used as the reference in tests.
pub fn conv_reference(g: &ConvGeom, x: &[f64], f: &[f64]) -> Vec<f64> {
    grouped_conv_reference(g, 1, x, f)
}

/// The grouped convolution by its definition (loops over groups, no gathering); `g` is
/// one group's geometry.
pub fn grouped_conv_reference(g: &ConvGeom, groups: usize, x: &[f64], f: &[f64]) -> Vec<f64> {
    let (c, oc) = (g.c * groups, g.oc * groups);
    let mut out = vec![0.0; g.rows() * oc];
    for b in 0..g.n {
        for oy in 0..g.y.output {
            for ox in 0..g.x.output {
                for ky in 0..g.y.size {
                    for kx in 0..g.x.size {
                        let iy = (oy * g.y.stride + ky) as isize - g.y.pad as isize;
                        let ix = (ox * g.x.stride + kx) as isize - g.x.pad as isize;
                        if iy < 0 || ix < 0 || iy >= g.y.input as isize || ix >= g.x.input as isize {
                            continue;
                        }
                        let px = (b * g.y.input + iy as usize) * g.x.input + ix as usize;
                        for o in 0..oc {
                            let grp = o / g.oc;
                            for ci in 0..g.c {
                                out[((b * g.y.output + oy) * g.x.output + ox) * oc + o] +=
                                    x[px * c + grp * g.c + ci] * f[((ky * g.x.size + kx) * g.c + ci) * oc + o];
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// Runs the kernel of `n` twice on `inputs` (one kernel, one resource manager), as two steps
/// of a session would: a stateful kernel's second run continues from its first.
pub fn run_twice(n: &ferroflow_core::proto::NodeDef, inputs: &[ferroflow_core::Tensor]) -> [ferroflow_core::Tensor; 2] {
    use std::sync::Arc;
    let k = ferroflow_kernels::create_kernel(n).unwrap();
    let step = ferroflow_kernels::testutil::test_step(Arc::new(ferroflow_kernels::ResourceMgr::new()));
    let run = || {
        let values = inputs.iter().cloned().map(ferroflow_kernels::Value::Tensor).collect();
        let mut ctx = ferroflow_kernels::OpContext::new(Arc::new(n.clone()), values, 1, step.clone());
        k.compute(&mut ctx).unwrap();
        ctx.take_outputs().unwrap().remove(0).tensor().unwrap()
    };
    [run(), run()]
}
