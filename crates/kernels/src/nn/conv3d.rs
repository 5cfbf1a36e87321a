//! `Conv3D`, `Conv3DBackpropInputV2` and `Conv3DBackpropFilterV2` (NDHWC input, DHWIO
//! filter). A 3-D convolution is a sum of 2-D ones: output plane `od` is the sum over filter
//! planes `kd` of the 2-D convolution of input plane `od·stride + kd - pad` with filter
//! plane `kd`, for the whole batch at once. So every plane pair runs the 2-D kernels (im2col
//! and gemm, Winograd, the direct kernels), after the depth axis is moved in front of the
//! batch so that a plane of every image is one contiguous 2-D batch.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::common::float_type;
use super::common::{dims_str, Window};
use super::conv::ConvScalar;
use super::conv_backprop::{conv2d_backprop_filter, conv2d_backprop_input};
use super::conv_direct::DirectScalar;
use super::im2col::ConvGeom;
use super::volume::{batch_major, depth_major, out_dims, shape5, tap, Attrs3};
use crate::{OpContext, OpKernel};

/// One plane's 2-D geometry and the depth window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geom3 {
    pub plane: ConvGeom,
    pub d: Window,
}

impl Geom3 {
    fn in_plane(&self) -> usize {
        self.plane.n * self.plane.image_len()
    }
    fn out_plane(&self) -> usize {
        self.plane.rows() * self.plane.oc
    }
    fn filter_plane(&self) -> usize {
        self.plane.k() * self.plane.oc
    }
    /// (batch, one image's input plane, one image's output plane, a filter plane) sizes.
    fn sizes(&self) -> (usize, usize, usize, usize) {
        (self.plane.n, self.plane.image_len(), self.plane.rows_per_image() * self.plane.oc, self.filter_plane())
    }
    /// The filter planes `kd` that output plane `od` reads, each with its input plane.
    fn taps(&self, od: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.d.size).filter_map(move |kd| tap(&self.d, od, kd).map(|id| (kd, id)))
    }
}

/// Calls `f(dy plane, kd, id)` for every output plane of the depth-major gradient `dyt`
/// and each filter plane `kd` it reads, with that tap's input plane `id`.
fn each_grad_tap<T>(
    g: &Geom3,
    dyt: &[T],
    mut f: impl FnMut(&[T], usize, usize) -> Result<(), Status>,
) -> Result<(), Status> {
    for od in 0..g.d.output {
        let dyp = &dyt[od * g.out_plane()..(od + 1) * g.out_plane()];
        for (kd, id) in g.taps(od) {
            f(dyp, kd, id)?;
        }
    }
    Ok(())
}

/// `dst += part`, element by element.
fn add_into<T: Copy + std::ops::AddAssign>(dst: &mut [T], part: &[T]) {
    dst.iter_mut().zip(part).for_each(|(d, &p)| *d += p);
}

/// Checks input and filter dims and computes the geometry.
fn geom(a: &Attrs3, node: &NodeDef, label: &str, input: &[usize], filter: &[usize]) -> Result<Geom3, Status> {
    if filter.len() != 5 {
        return Err(node.node_error(format!("{label}filter must be 5-dimensional: {}", dims_str(filter))));
    }
    let [d, y, x] = a.windows(node, label, input, [filter[0], filter[1], filter[2]])?;
    if input[4] != filter[3] {
        return Err(
            node.node_error(format!("{label}input depth must be equal to filter depth: {} vs {}", input[4], filter[3]))
        );
    }
    Ok(Geom3 { plane: ConvGeom { n: input[0], c: input[4], oc: filter[4], y, x }, d })
}

/// The forward convolution (`[n, od, oh, ow, oc]`).
pub(crate) fn conv3d_forward<T: ConvScalar + DirectScalar>(g: &Geom3, x: &[T], f: &[T]) -> Result<Vec<T>, Status> {
    let (n, isz, osz, fsz) = g.sizes();
    let xt = depth_major(x, n, g.d.input, isz)?;
    let mut ot = ferroflow_core::alloc::zeroed::<T>(&[g.d.output, g.out_plane()])?;
    let mut part = ferroflow_core::alloc::zeroed::<T>(&[g.out_plane()])?;
    for (od, oplane) in ot.chunks_exact_mut(g.out_plane().max(1)).enumerate() {
        for (kd, id) in g.taps(od) {
            part.fill(T::ZERO);
            T::conv(&g.plane, &xt[id * g.in_plane()..(id + 1) * g.in_plane()], &f[kd * fsz..(kd + 1) * fsz], &mut part);
            add_into(oplane, &part);
        }
    }
    batch_major(ot, n, g.d.output, osz)
}

/// The input gradient (`[n, d, h, w, c]`).
pub(crate) fn conv3d_backprop_input<T: ConvScalar + DirectScalar>(
    g: &Geom3,
    f: &[T],
    dy: &[T],
) -> Result<Vec<T>, Status> {
    let (n, isz, osz, fsz) = g.sizes();
    let dyt = depth_major(dy, n, g.d.output, osz)?;
    let mut dxt = ferroflow_core::alloc::zeroed::<T>(&[g.d.input, g.in_plane()])?;
    let mut part = ferroflow_core::alloc::zeroed::<T>(&[g.in_plane()])?;
    each_grad_tap(g, &dyt, |dyp, kd, id| {
        let fp = &f[kd * fsz..(kd + 1) * fsz];
        part.fill(T::ZERO);
        if !T::backprop_input_winograd(&g.plane, fp, dyp, &mut part) {
            conv2d_backprop_input(&g.plane, fp, dyp, &mut part);
        }
        add_into(&mut dxt[id * g.in_plane()..(id + 1) * g.in_plane()], &part);
        Ok(())
    })?;
    batch_major(dxt, n, g.d.input, isz)
}

/// The filter gradient (`[kd, kh, kw, c, oc]`).
pub(crate) fn conv3d_backprop_filter<T: ConvScalar + DirectScalar>(
    g: &Geom3,
    x: &[T],
    dy: &[T],
) -> Result<Vec<T>, Status> {
    let (n, isz, osz, fsz) = g.sizes();
    let xt = depth_major(x, n, g.d.input, isz)?;
    let dyt = depth_major(dy, n, g.d.output, osz)?;
    let mut df = ferroflow_core::alloc::zeroed::<T>(&[g.d.size, fsz])?;
    each_grad_tap(g, &dyt, |dyp, kd, id| {
        let part = conv2d_backprop_filter(&g.plane, &xt[id * g.in_plane()..(id + 1) * g.in_plane()], dyp)?;
        add_into(&mut df[kd * fsz..(kd + 1) * fsz], &part);
        Ok(())
    })?;
    Ok(df)
}

/// Checks that `dy` has the shape the forward convolution gives.
fn check_out_backprop(ctx: &OpContext, label: &str, g: &Geom3, dy: &[usize]) -> Result<(), Status> {
    let want = [g.plane.n, g.d.output, g.plane.y.output, g.plane.x.output, g.plane.oc];
    if dy != want {
        return Err(ctx.error(format!(
            "{label}out_backprop has shape {} but the convolution's output has shape {}",
            dims_str(dy),
            dims_str(&want)
        )));
    }
    Ok(())
}

/// `Conv3D`, `Conv3DBackpropInputV2` or `Conv3DBackpropFilterV2` (told apart by `kind`).
struct Conv3 {
    attrs: Attrs3,
    dtype: DataType,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Forward,
    Input,
    Filter,
}

fn factory(node: &NodeDef, kind: Kind) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Conv3 { attrs: Attrs3::parse(node, false)?, dtype: float_type(node)?, kind }))
}

/// Registers the kernels.
pub(crate) fn register(r: &mut crate::KernelRegistry) {
    r.add("Conv3D", |n| factory(n, Kind::Forward));
    r.add("Conv3DBackpropInputV2", |n| factory(n, Kind::Input));
    r.add("Conv3DBackpropFilterV2", |n| factory(n, Kind::Filter));
}

impl Conv3 {
    fn run<T: ConvScalar + DirectScalar>(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let node = ctx.node().clone();
        match self.kind {
            Kind::Forward => {
                let (x, f) = (ctx.input(0)?, ctx.input(1)?);
                let g = geom(&self.attrs, &node, "", x.dims(), f.dims())?;
                let [d, y, xw] = [g.d, g.plane.y, g.plane.x];
                let dims = out_dims(ctx, g.plane.n, &[d, y, xw], g.plane.oc, self.dtype)?;
                let out = conv3d_forward(&g, x.as_slice::<T>()?, f.as_slice::<T>()?)?;
                ctx.set_output(0, Tensor::new(dims, out)?)
            }
            Kind::Input => {
                const L: &str = "Conv3DBackpropInputOp: ";
                let (sz, f, dy) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
                let shape = shape5(ctx, &sz, L, "input_sizes")?;
                let g = geom(&self.attrs, &node, L, &shape, f.dims())?;
                check_out_backprop(ctx, L, &g, dy.dims())?;
                let dx = conv3d_backprop_input(&g, f.as_slice::<T>()?, dy.as_slice::<T>()?)?;
                ctx.set_output(0, Tensor::new(shape, dx)?)
            }
            Kind::Filter => {
                const L: &str = "Conv3DBackpropFilterOp: ";
                let (x, sz, dy) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
                let shape = shape5(ctx, &sz, L, "filter_sizes")?;
                let g = geom(&self.attrs, &node, L, x.dims(), &shape)?;
                check_out_backprop(ctx, L, &g, dy.dims())?;
                let df = conv3d_backprop_filter(&g, x.as_slice::<T>()?, dy.as_slice::<T>()?)?;
                ctx.set_output(0, Tensor::new(shape, df)?)
            }
        }
    }
}

impl OpKernel for Conv3 {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let inputs: &[(usize, &str)] = match self.kind {
            Kind::Forward => &[(0, "input"), (1, "filter")],
            Kind::Input => &[(1, "filter"), (2, "out_backprop")],
            Kind::Filter => &[(0, "input"), (2, "out_backprop")],
        };
        super::common::check_inputs(ctx, self.dtype, inputs)?;
        crate::dispatch::dispatch!(self.dtype, ctx, [f32, f64], |T| self.run::<T>(ctx))
    }
}
