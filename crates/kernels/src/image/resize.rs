//! `ResizeBilinear`, `ResizeBilinearGrad`, `ResizeNearestNeighbor` and
//! `ResizeNearestNeighborGrad` (NHWC), with TensorFlow's `align_corners` and
//! `half_pixel_centers` coordinate rules, computed in f32 like TensorFlow.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};

use super::common::{
    check_type, dtype_attr, float_tensor, for_rows, image_dims, is_real, resize_images, resize_input, resize_scale,
    resize_to_float, size_input, source, zeros, ResizeAttrs,
};
use crate::array::util::scratch_vec;
use crate::dispatch::dispatch;
use crate::{OpContext, OpKernel};

/// One output coordinate's two source indices and the weight of the upper one.
#[derive(Clone, Copy, Debug)]
struct Lerp {
    lower: usize,
    upper: usize,
    lerp: f32,
}

/// The interpolation of each of `out` positions (a size input may ask for billions of an
/// empty batch: the weights come from the fallible path).
fn lerps(out: usize, inp: usize, scale: f32, half_pixel: bool) -> Result<Vec<Lerp>, Status> {
    let last = inp as i64 - 1;
    let mut v = scratch_vec(out, "interpolation weights")?;
    v.extend((0..out).map(|i| {
        let s = source(i, scale, half_pixel);
        let f = s.floor();
        Lerp {
            lower: (f as i64).clamp(0, last) as usize,
            upper: (s.ceil() as i64).clamp(0, last) as usize,
            lerp: s - f,
        }
    }));
    Ok(v)
}

op_kernel! {
    /// `ResizeBilinear`: float output for every real input type.
    struct ResizeBilinear { attrs: ResizeAttrs }
    fn compute(&self, ctx) {
        let (img, d) = resize_images(ctx)?;
        let [_, ih, iw, c] = d;
        resize_to_float(ctx, &img, d, self.attrs.align_corners, |x, (oh, ow), (hs, ws), out| {
            let hp = self.attrs.half_pixel_centers;
            let (ys, xs) = (lerps(oh, ih, hs, hp)?, lerps(ow, iw, ws, hp)?);
            for_rows(out, ow * c, |r, row| {
                let (b, y) = (r / oh, r % oh);
                let Lerp { lower, upper, lerp: yl } = ys[y];
                let img_b = &x[b * ih * iw * c..(b + 1) * ih * iw * c];
                let top = &img_b[lower * iw * c..(lower + 1) * iw * c];
                let bot = &img_b[upper * iw * c..(upper + 1) * iw * c];
                for (o, l) in row.chunks_exact_mut(c).zip(&xs) {
                    let (tl, tr) = (&top[l.lower * c..l.lower * c + c], &top[l.upper * c..l.upper * c + c]);
                    let (bl, br) = (&bot[l.lower * c..l.lower * c + c], &bot[l.upper * c..l.upper * c + c]);
                    for k in 0..c {
                        let t = tl[k] + (tr[k] - tl[k]) * l.lerp;
                        let bo = bl[k] + (br[k] - bl[k]) * l.lerp;
                        o[k] = t + (bo - t) * yl;
                    }
                }
            });
            Ok(())
        })
    }
}

/// The f32 gradient `grads` [batch, resized_h, resized_w, channels] and the output dims
/// [batch, orig_h, orig_w, channels] of a resize gradient.
fn grad_dims(ctx: &OpContext, grads: &Tensor, orig: &Tensor) -> Result<([usize; 4], [usize; 4]), Status> {
    let g = image_dims(ctx, grads, "input_grad")?;
    if grads.dtype() != DataType::Float {
        return Err(ctx.error(format!("input_grad must be of type float, got {}", grads.dtype())));
    }
    if g[1] == 0 || g[2] == 0 {
        return Err(ctx.error(format!("resized dimensions must be positive, got shape {}", grads.shape())));
    }
    let o = image_dims(ctx, orig, "original_image")?;
    if o[1] == 0 || o[2] == 0 {
        return Err(ctx.error(format!("original dimensions must be positive, got shape {}", orig.shape())));
    }
    if o[1] > i32::MAX as usize || o[2] > i32::MAX as usize {
        return Err(ctx.error("original sizes must be between 0 and max int32"));
    }
    if o[0] != g[0] || o[3] != g[3] {
        return Err(ctx.error(format!(
            "input_grad {} and original_image {} must have the same batch size and channels",
            grads.shape(),
            orig.shape()
        )));
    }
    Ok((g, [g[0], o[1], o[2], g[3]]))
}

/// Accumulator types of the resize gradients (f32 products added in the output type).
pub(crate) trait Acc: ferroflow_core::TensorType + Copy + Default + Send + Sync + std::ops::AddAssign {
    fn of(x: f32) -> Self;
}
impl Acc for f32 {
    #[inline(always)]
    fn of(x: f32) -> f32 {
        x
    }
}
impl Acc for f64 {
    #[inline(always)]
    fn of(x: f32) -> f64 {
        f64::from(x)
    }
}

/// Runs `f` on each batch's output image (in parallel over the batch).
pub(crate) fn per_image<A: Send>(out: &mut [A], image_len: usize, f: impl Fn(usize, &mut [A]) + Sync) {
    use rayon::prelude::*;
    if image_len == 0 {
        return;
    }
    out.par_chunks_mut(image_len).enumerate().for_each(|(b, o)| f(b, o));
}

/// `ResizeBilinearGrad`: spreads each gradient over the four pixels it interpolated.
struct ResizeBilinearGrad {
    attrs: ResizeAttrs,
    dtype: DataType,
}

impl ResizeBilinearGrad {
    fn run<A: Acc>(&self, grads: &[f32], g: [usize; 4], o: [usize; 4]) -> Result<Vec<A>, Status> {
        let [_, rh, rw, c] = g;
        let [_, oh, ow, _] = o;
        let mut out = zeros::<A>(&o, self.dtype)?;
        let (hs, ws) = (resize_scale(oh, rh, self.attrs.align_corners), resize_scale(ow, rw, self.attrs.align_corners));
        let hp = self.attrs.half_pixel_centers;
        let (ys, xs) = (lerps(rh, oh, hs, hp)?, lerps(rw, ow, ws, hp)?);
        per_image(&mut out, oh * ow * c, |b, img| {
            for (y, yl) in ys.iter().enumerate() {
                let (iy, y_l) = (1.0 - yl.lerp, yl.lerp);
                for (x, xl) in xs.iter().enumerate() {
                    let (ix, x_l) = (1.0 - xl.lerp, xl.lerp);
                    let src = &grads[((b * rh + y) * rw + x) * c..][..c];
                    let corners = [
                        (yl.lower, xl.lower, iy, ix),
                        (yl.lower, xl.upper, iy, x_l),
                        (yl.upper, xl.lower, y_l, ix),
                        (yl.upper, xl.upper, y_l, x_l),
                    ];
                    for (py, px, wy, wx) in corners {
                        let dst = &mut img[(py * ow + px) * c..][..c];
                        for (d, &s) in dst.iter_mut().zip(src) {
                            *d += A::of(s * wy * wx);
                        }
                    }
                }
            }
        });
        Ok(out)
    }
}

impl OpKernel for ResizeBilinearGrad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (grads, orig) = (ctx.input(0)?, ctx.input(1)?);
        let (g, o) = grad_dims(ctx, &grads, &orig)?;
        check_type(ctx, &orig, "original_image", "T", self.dtype)?;
        let gv = grads.as_slice::<f32>()?;
        let t = match self.dtype {
            DataType::Double => Tensor::new(o.to_vec(), self.run::<f64>(gv, g, o)?)?,
            d => float_tensor(o.to_vec(), self.run::<f32>(gv, g, o)?, d)?,
        };
        ctx.set_output(0, t)
    }
}

/// Nearest source index of output index `i` (TensorFlow's nearest-neighbor rule: the
/// half-pixel coordinate is `(i + 0.5) * scale`, rounded half away from zero with
/// `align_corners`, else floored).
fn nearest(i: usize, scale: f32, attrs: ResizeAttrs, in_size: usize) -> usize {
    let s = if attrs.half_pixel_centers { (i as f32 + 0.5) * scale } else { i as f32 * scale };
    let v = if attrs.align_corners { s.round() } else { s.floor() };
    (v as i64).clamp(0, in_size as i64 - 1) as usize
}

/// `ResizeNearestNeighbor`: output of the input's type.
struct ResizeNearest {
    attrs: ResizeAttrs,
    dtype: DataType,
}

fn gather_nearest<T: ferroflow_core::TensorType + Copy + Default + Send + Sync>(
    img: &Tensor,
    dims: [usize; 4],
    ih: usize,
    iw: usize,
    ys: &[usize],
    xs: &[usize],
) -> Result<Tensor, Status> {
    let [_, oh, ow, c] = dims;
    let x = img.as_slice::<T>()?;
    let mut out = zeros::<T>(&dims, T::DTYPE)?;
    for_rows(&mut out, ow * c, |r, row| {
        let (b, y) = (r / oh, r % oh);
        let src_row = &x[(b * ih + ys[y]) * iw * c..][..iw * c];
        if c == 1 {
            for (o, &sx) in row.iter_mut().zip(xs) {
                *o = src_row[sx];
            }
        } else {
            for (o, &sx) in row.chunks_exact_mut(c).zip(xs) {
                o.copy_from_slice(&src_row[sx * c..sx * c + c]);
            }
        }
    });
    Tensor::new(dims.to_vec(), out)
}

impl OpKernel for ResizeNearest {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let img = ctx.input(0)?;
        check_type(ctx, &img, "images", "T", self.dtype)?;
        let [n, ih, iw, c] = resize_input(ctx, &img)?;
        let (oh, ow) = size_input(ctx, 1, "size")?;
        ferroflow_core::check_tensor_alloc(&[n, oh, ow, c], self.dtype)?;
        if n * oh * ow * c == 0 {
            return ctx.set_output(0, Tensor::zeros(self.dtype, vec![n, oh, ow, c])?);
        }
        let (hs, ws) = (resize_scale(ih, oh, self.attrs.align_corners), resize_scale(iw, ow, self.attrs.align_corners));
        let (mut ys, mut xs) = (scratch_vec(oh, "source rows")?, scratch_vec(ow, "source columns")?);
        ys.extend((0..oh).map(|y| nearest(y, hs, self.attrs, ih)));
        xs.extend((0..ow).map(|x| nearest(x, ws, self.attrs, iw)));
        let dims = [n, oh, ow, c];
        use ferroflow_core::half::{bf16, f16};
        let t = dispatch!(self.dtype, ctx, [f32, f64, i32, i64, u8, i8, i16, u16, f16, bf16], |T| {
            gather_nearest::<T>(&img, dims, ih, iw, &ys, &xs)
        })?;
        ctx.set_output(0, t)
    }
}

/// Element types `ResizeNearestNeighborGrad` sums (integers wrap like TensorFlow's).
trait Sum: ferroflow_core::TensorType + Copy + Default + Send + Sync {
    fn add(self, o: Self) -> Self;
}
macro_rules! sum_float {
    ($($t:ty),*) => {$(impl Sum for $t { #[inline(always)] fn add(self, o: Self) -> Self { self + o } })*};
}
macro_rules! sum_int {
    ($($t:ty),*) => {$(impl Sum for $t { #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) } })*};
}
sum_float!(f32, f64);
sum_int!(i32, u8, i8);

/// `ResizeNearestNeighborGrad`: sums each gradient into the pixel it was copied from.
struct ResizeNearestGrad {
    attrs: ResizeAttrs,
    dtype: DataType,
}

impl ResizeNearestGrad {
    fn run<T: Sum>(&self, g: &Tensor, gd: [usize; 4], oh: usize, ow: usize) -> Result<Tensor, Status> {
        let [n, ih, iw, c] = gd;
        let dims = [n, oh, ow, c];
        let mut out = zeros::<T>(&dims, T::DTYPE)?;
        if out.is_empty() {
            return Tensor::new(dims.to_vec(), out);
        }
        let gv = g.as_slice::<T>()?;
        let (hs, ws) = (resize_scale(oh, ih, self.attrs.align_corners), resize_scale(ow, iw, self.attrs.align_corners));
        let ys: Vec<usize> = (0..ih).map(|y| nearest(y, hs, self.attrs, oh)).collect();
        let xs: Vec<usize> = (0..iw).map(|x| nearest(x, ws, self.attrs, ow)).collect();
        per_image(&mut out, oh * ow * c, |b, img| {
            for (y, &oy) in ys.iter().enumerate() {
                for (x, &ox) in xs.iter().enumerate() {
                    let src = &gv[((b * ih + y) * iw + x) * c..][..c];
                    let dst = &mut img[(oy * ow + ox) * c..][..c];
                    for (d, &s) in dst.iter_mut().zip(src) {
                        *d = d.add(s);
                    }
                }
            }
        });
        Tensor::new(dims.to_vec(), out)
    }
}

impl OpKernel for ResizeNearestGrad {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let g = ctx.input(0)?;
        check_type(ctx, &g, "grads", "T", self.dtype)?;
        let gd = image_dims(ctx, &g, "input")?;
        let s = ctx.input(1)?;
        if s.rank() != 1 || s.num_elements() != 2 {
            return Err(ctx.error(format!("shape_t must be 1-dimensional with two elements, got shape {}", s.shape())));
        }
        let v = s.as_slice::<i32>().map_err(|_| ctx.error(format!("size must be int32, got {}", s.dtype())))?;
        if v[0] < 0 || v[1] < 0 {
            return Err(ctx.error(format!("size must be non-negative, got {v:?}")));
        }
        let (oh, ow) = (v[0] as usize, v[1] as usize);
        let t = dispatch!(self.dtype, ctx, [f32, f64, i32, u8, i8], |T| self.run::<T>(&g, gd, oh, ow))?;
        ctx.set_output(0, t)
    }
}

pub(crate) fn bilinear_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    dtype_attr(node, "T", is_real)?;
    Ok(Box::new(ResizeBilinear { attrs: ResizeAttrs::parse(node)? }))
}

pub(crate) fn bilinear_grad_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    use DataType::*;
    let dtype = dtype_attr(node, "T", |d| matches!(d, Float | Double | Half | BFloat16))?;
    Ok(Box::new(ResizeBilinearGrad { attrs: ResizeAttrs::parse(node)?, dtype }))
}

pub(crate) fn nearest_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = dtype_attr(node, "T", is_real)?;
    Ok(Box::new(ResizeNearest { attrs: ResizeAttrs::parse(node)?, dtype }))
}

pub(crate) fn nearest_grad_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    use DataType::*;
    let dtype = dtype_attr(node, "T", |d| matches!(d, Float | Double | Int32 | UInt8 | Int8))?;
    Ok(Box::new(ResizeNearestGrad { attrs: ResizeAttrs::parse(node)?, dtype }))
}
