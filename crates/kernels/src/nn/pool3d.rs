//! `MaxPool3D`, `AvgPool3D` and their gradients `MaxPool3DGrad`, `AvgPool3DGrad`,
//! `MaxPool3DGradGrad` (NDHWC), with TensorFlow's CPU semantics: windows cover only input
//! cells (SAME padding is neither a candidate maximum nor counted in an average);
//! `MaxPool3DGrad` gives a window's gradient to *every* cell equal to the window's maximum
//! (TensorFlow's 3-D kernel compares values, unlike the 2-D one, which picks the first);
//! `MaxPool3DGradGrad` takes, per window, the first such cell in plane, row, column order.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::common::float_type;
use super::common::{dims_str, unsupported_type, Window};
use super::pool::par_units;
use super::volume::{out_dims, shape5, Attrs3};
use crate::real::Real;
use crate::{OpContext, OpKernel};

/// Sizes of one pooling: batch, channels and the three windows.
#[derive(Clone, Copy, Debug)]
struct Geom {
    n: usize,
    c: usize,
    w: [Window; 3],
}

impl Geom {
    fn in_image(&self) -> usize {
        self.w[0].input * self.w[1].input * self.w[2].input * self.c
    }
    fn out_image(&self) -> usize {
        self.w[0].output * self.w[1].output * self.w[2].output * self.c
    }
    fn out_dims(&self) -> [usize; 5] {
        [self.n, self.w[0].output, self.w[1].output, self.w[2].output, self.c]
    }

    /// Calls `f(out_cell, in_cells)` for each output cell of one image, with the offsets
    /// (in units of `c`) of the input cells its window covers, in plane, row, column order.
    fn windows(&self, mut f: impl FnMut(usize, &mut dyn Iterator<Item = usize>)) {
        let [wd, wy, wx] = self.w;
        let mut o = 0;
        for od in 0..wd.output {
            let (d0, d1) = wd.range(od);
            for oy in 0..wy.output {
                let (y0, y1) = wy.range(oy);
                for ox in 0..wx.output {
                    let (x0, x1) = wx.range(ox);
                    let mut cells = (d0..d1).flat_map(move |d| {
                        (y0..y1).flat_map(move |y| (x0..x1).map(move |x| (d * wy.input + y) * wx.input + x))
                    });
                    f(o, &mut cells);
                    o += 1;
                }
            }
        }
    }
}

/// Which of the five ops a [`Pool3`] kernel is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Max,
    Avg,
    MaxGrad,
    AvgGrad,
    MaxGradGrad,
}

struct Pool3 {
    attrs: Attrs3,
    dtype: DataType,
    kind: Kind,
}

fn factory(node: &NodeDef, kind: Kind) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = float_type(node)?;
    if kind == Kind::MaxGrad && node.has_attr("TInput") && node.attr_type("TInput")? != dtype {
        return Err(unsupported_type(node, node.attr_type("TInput")?));
    }
    Ok(Box::new(Pool3 { attrs: Attrs3::parse(node, true)?, dtype, kind }))
}

/// Registers the kernels.
pub(crate) fn register(r: &mut crate::KernelRegistry) {
    r.add("MaxPool3D", |n| factory(n, Kind::Max));
    r.add("AvgPool3D", |n| factory(n, Kind::Avg));
    r.add("MaxPool3DGrad", |n| factory(n, Kind::MaxGrad));
    r.add("AvgPool3DGrad", |n| factory(n, Kind::AvgGrad));
    r.add("MaxPool3DGradGrad", |n| factory(n, Kind::MaxGradGrad));
}

/// The forward pools: `pool(acc, cells, xi)` for each output cell, with `acc` the cell's
/// channels in `out` and `cells` the offsets (in units of `c`) its window covers in `xi`, the
/// image of `x`.
fn pool_forward<T: Real>(
    g: &Geom,
    x: &[T],
    out: &mut [T],
    pool: impl Fn(&mut [T], &mut dyn Iterator<Item = usize>, &[T]) + Sync + Send,
) {
    let c = g.c;
    par_units(out, g.out_image(), out.len() * g.w.iter().map(|w| w.size).product::<usize>(), |b, oi| {
        let xi = &x[b * g.in_image()..(b + 1) * g.in_image()];
        g.windows(|o, cells| pool(&mut oi[o * c..(o + 1) * c], cells, xi));
    });
}

fn max_pool<T: Real>(g: &Geom, x: &[T], out: &mut [T]) {
    let c = g.c;
    pool_forward(g, x, out, |acc, cells, xi| {
        let mut first = true;
        for cell in cells {
            let v = &xi[cell * c..(cell + 1) * c];
            if first {
                acc.copy_from_slice(v);
                first = false;
            } else {
                for (a, &v) in acc.iter_mut().zip(v) {
                    if v > *a {
                        *a = v;
                    }
                }
            }
        }
    });
}

fn avg_pool<T: Real>(g: &Geom, x: &[T], out: &mut [T]) {
    let c = g.c;
    pool_forward(g, x, out, |acc, cells, xi| {
        let mut count = 0usize;
        for cell in cells {
            count += 1;
            acc.iter_mut().zip(&xi[cell * c..(cell + 1) * c]).for_each(|(a, &v)| *a += v);
        }
        let k = T::from_usize(count.max(1));
        acc.iter_mut().for_each(|a| *a = *a / k);
    });
}

/// `dx` (shaped like `x`): each window's gradient to every cell equal to its maximum.
fn max_pool_grad<T: Real>(g: &Geom, x: &[T], y: &[T], dy: &[T], dx: &mut [T]) {
    let c = g.c;
    par_units(dx, g.in_image(), dy.len() * g.w.iter().map(|w| w.size).product::<usize>(), |b, dxi| {
        let xi = &x[b * g.in_image()..(b + 1) * g.in_image()];
        let (yi, dyi) = (&y[b * g.out_image()..], &dy[b * g.out_image()..]);
        g.windows(|o, cells| {
            for cell in cells {
                for ch in 0..c {
                    if xi[cell * c + ch] == yi[o * c + ch] {
                        dxi[cell * c + ch] += dyi[o * c + ch];
                    }
                }
            }
        });
    });
}

/// `dx`: each window's gradient spread evenly over the cells it covers.
fn avg_pool_grad<T: Real>(g: &Geom, dy: &[T], dx: &mut [T]) {
    let c = g.c;
    par_units(dx, g.in_image(), dy.len() * g.w.iter().map(|w| w.size).product::<usize>(), |b, dxi| {
        let dyi = &dy[b * g.out_image()..(b + 1) * g.out_image()];
        let mut list = Vec::new();
        g.windows(|o, cells| {
            list.clear();
            list.extend(cells);
            let k = T::from_usize(list.len().max(1));
            for &cell in &list {
                for ch in 0..c {
                    dxi[cell * c + ch] += dyi[o * c + ch] / k;
                }
            }
        });
    });
}

/// `out` (shaped like `y`): per window and channel, `gg` at the first cell equal to the
/// window's maximum.
fn max_pool_grad_grad<T: Real>(g: &Geom, x: &[T], y: &[T], gg: &[T], out: &mut [T]) {
    let c = g.c;
    par_units(out, g.out_image(), out.len() * g.w.iter().map(|w| w.size).product::<usize>(), |b, oi| {
        let (xi, ggi) = (&x[b * g.in_image()..], &gg[b * g.in_image()..]);
        let yi = &y[b * g.out_image()..];
        let mut list = Vec::new();
        g.windows(|o, cells| {
            list.clear();
            list.extend(cells);
            for ch in 0..c {
                let want = yi[o * c + ch];
                if let Some(&cell) = list.iter().find(|&&cell| xi[cell * c + ch] == want) {
                    oi[o * c + ch] = ggi[cell * c + ch];
                }
            }
        });
    });
}

impl Pool3 {
    fn geom(&self, ctx: &OpContext, label: &str, input: &[usize]) -> Result<Geom, Status> {
        let w = self.attrs.windows(ctx.node(), label, input, self.attrs.ksize)?;
        Ok(Geom { n: input[0], c: input[4], w })
    }

    fn check(ctx: &OpContext, what: &str, got: &[usize], want: &[usize]) -> Result<(), Status> {
        if got != want {
            return Err(ctx.error(format!("{what} must have shape {}, got {}", dims_str(want), dims_str(got))));
        }
        Ok(())
    }

    fn run<T: Real>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        match self.kind {
            Kind::Max | Kind::Avg => {
                let x = ctx.input(0)?;
                let g = self.geom(ctx, "", x.dims())?;
                let dims = out_dims(ctx, g.n, &g.w, g.c, self.dtype)?;
                let mut out = ferroflow_core::alloc::zeroed::<T>(&dims)?;
                if self.kind == Kind::Max {
                    max_pool(&g, x.as_slice::<T>()?, &mut out);
                } else {
                    avg_pool(&g, x.as_slice::<T>()?, &mut out);
                }
                ctx.set_output(0, Tensor::new(dims, out)?)
            }
            Kind::AvgGrad => {
                let (sz, dy) = (ctx.input(0)?, ctx.input(1)?);
                let shape = shape5(ctx, &sz, "", "orig_input_shape")?;
                let g = self.geom(ctx, "", &shape)?;
                Self::check(ctx, "grad", dy.dims(), &g.out_dims())?;
                let mut dx = ferroflow_core::alloc::zeroed::<T>(&shape)?;
                avg_pool_grad(&g, dy.as_slice::<T>()?, &mut dx);
                ctx.set_output(0, Tensor::new(shape, dx)?)
            }
            Kind::MaxGrad | Kind::MaxGradGrad => {
                let (x, y, grad) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
                let g = self.geom(ctx, "", x.dims())?;
                Self::check(ctx, "orig_output", y.dims(), &g.out_dims())?;
                let (xs, ys, gs) = (x.as_slice::<T>()?, y.as_slice::<T>()?, grad.as_slice::<T>()?);
                if self.kind == Kind::MaxGrad {
                    Self::check(ctx, "grad", grad.dims(), &g.out_dims())?;
                    let mut dx = ferroflow_core::alloc::zeroed::<T>(x.dims())?;
                    max_pool_grad(&g, xs, ys, gs, &mut dx);
                    ctx.set_output(0, Tensor::new(x.dims().to_vec(), dx)?)
                } else {
                    Self::check(ctx, "grad", grad.dims(), x.dims())?;
                    let mut out = ferroflow_core::alloc::zeroed::<T>(y.dims())?;
                    max_pool_grad_grad(&g, xs, ys, gs, &mut out);
                    ctx.set_output(0, Tensor::new(y.dims().to_vec(), out)?)
                }
            }
        }
    }
}

impl OpKernel for Pool3 {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let inputs: &[(usize, &str)] = match self.kind {
            Kind::Max | Kind::Avg => &[(0, "input")],
            Kind::AvgGrad => &[(1, "grad")],
            Kind::MaxGrad | Kind::MaxGradGrad => &[(0, "orig_input"), (1, "orig_output"), (2, "grad")],
        };
        super::common::check_inputs(ctx, self.dtype, inputs)?;
        crate::dispatch::dispatch!(self.dtype, ctx, [f32, f64], |T| self.run::<T>(ctx))
    }
}
