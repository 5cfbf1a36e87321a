//! `ImageProjectiveTransformV2` / `V3`: each output pixel `(x, y)` samples the input at
//! `((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)` with `k = c0 x + c1 y + 1`, after
//! mapping out-of-image coordinates by `fill_mode` (REFLECT, WRAP, CONSTANT, NEAREST),
//! with NEAREST or BILINEAR interpolation; pixels read outside the image are `fill_value`.

use ferroflow_core::half::{bf16, f16};
use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};

use super::common::{check_type, dtype_attr, for_rows, image_dims, zeros};
use crate::dispatch::dispatch;
use crate::{OpContext, OpKernel};

/// Pixel types: read as f32 for bilinear sums, written back with C++'s `T(float)`.
pub(crate) trait Pixel: TensorType + Copy + Default + Send + Sync {
    fn to_f32(self) -> f32;
    fn from_f32(v: f32) -> Self;
}
macro_rules! pixel_as {
    ($($t:ty),*) => {$(impl Pixel for $t {
        #[inline(always)] fn to_f32(self) -> f32 { self as f32 }
        #[inline(always)] fn from_f32(v: f32) -> Self { v as $t }
    })*};
}
pixel_as!(u8, i32, i64, f64);
impl Pixel for f32 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        v
    }
}
impl Pixel for f16 {
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
}
impl Pixel for bf16 {
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    fn from_f32(v: f32) -> Self {
        bf16::from_f32(v)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fill {
    Reflect,
    Wrap,
    Constant,
    Nearest,
}

/// Maps a coordinate into `[0, len - 1]` the way `fill_mode` extends the image.
#[inline(always)]
fn map(c: f32, len: usize, mode: Fill) -> f32 {
    if c.is_nan() {
        return c;
    }
    let lenf = len as f32;
    let last = lenf - 1.0;
    let v = match mode {
        Fill::Constant => return c,
        Fill::Nearest => c,
        Fill::Reflect => {
            if c < 0.0 {
                if len <= 1 {
                    0.0
                } else {
                    let sz2 = 2.0 * lenf;
                    let c = sz2 * ((-c / sz2) as i64) as f32 + c;
                    if c < -lenf {
                        c + sz2
                    } else {
                        -c - 1.0
                    }
                }
            } else if c > last {
                if len <= 1 {
                    0.0
                } else {
                    let sz2 = 2.0 * lenf;
                    let c = c - sz2 * ((c / sz2) as i64) as f32;
                    if c >= lenf {
                        sz2 - c - 1.0
                    } else {
                        c
                    }
                }
            } else {
                c
            }
        }
        Fill::Wrap => {
            if c < 0.0 {
                if len <= 1 {
                    0.0
                } else {
                    let sz = last;
                    c + lenf * ((-c / sz).trunc() + 1.0)
                }
            } else if c > last {
                if len <= 1 {
                    0.0
                } else {
                    c - lenf * ((c / last) as i64) as f32
                }
            } else {
                c
            }
        }
    };
    v.max(0.0).min(last)
}

struct Transform {
    bilinear: bool,
    fill: Fill,
    dtype: DataType,
    v3: bool,
}

impl Transform {
    #[allow(clippy::too_many_arguments)]
    fn run<T: Pixel>(
        &self,
        ctx: &OpContext,
        img: &Tensor,
        tr: &[f32],
        per_image: bool,
        oh: usize,
        ow: usize,
        fill: f32,
    ) -> Result<Tensor, Status> {
        let [n, ih, iw, c] = image_dims(ctx, img, "images")?;
        let x = img.as_slice::<T>()?;
        let dims = [n, oh, ow, c];
        let mut out = zeros::<T>(&dims, T::DTYPE)?;
        let fv = T::from_f32(fill);
        let (bilinear, mode) = (self.bilinear, self.fill);
        let read = |b: usize, y: i64, xx: i64, k: usize| -> T {
            if y >= 0 && (y as usize) < ih && xx >= 0 && (xx as usize) < iw {
                x[((b * ih + y as usize) * iw + xx as usize) * c + k]
            } else {
                fv
            }
        };
        for_rows(&mut out, ow * c, |r, row| {
            let (b, oy) = (r / oh, r % oh);
            let t = if per_image { &tr[b * 8..b * 8 + 8] } else { &tr[..8] };
            for (ox, px) in row.chunks_exact_mut(c).enumerate() {
                let (xf, yf) = (ox as f32, oy as f32);
                let proj = t[6] * xf + t[7] * yf + 1.0;
                if proj == 0.0 {
                    px.iter_mut().for_each(|v| *v = fv);
                    continue;
                }
                let in_x = map((t[0] * xf + t[1] * yf + t[2]) / proj, iw, mode);
                let in_y = map((t[3] * xf + t[4] * yf + t[5]) / proj, ih, mode);
                // NaN coordinates read nothing (TensorFlow leaves them undefined).
                if in_x.is_nan() || in_y.is_nan() {
                    px.iter_mut().for_each(|v| *v = fv);
                    continue;
                }
                if !bilinear {
                    let (ny, nx) = (in_y.round() as i64, in_x.round() as i64);
                    for (k, v) in px.iter_mut().enumerate() {
                        *v = read(b, ny, nx, k);
                    }
                    continue;
                }
                let (y0, x0) = (in_y.floor(), in_x.floor());
                let (y1, x1) = (y0 + 1.0, x0 + 1.0);
                let (iy0, ix0, iy1, ix1) = (y0 as i64, x0 as i64, y1 as i64, x1 as i64);
                for (k, v) in px.iter_mut().enumerate() {
                    let top = (x1 - in_x) * read(b, iy0, ix0, k).to_f32() + (in_x - x0) * read(b, iy0, ix1, k).to_f32();
                    let bot = (x1 - in_x) * read(b, iy1, ix0, k).to_f32() + (in_x - x0) * read(b, iy1, ix1, k).to_f32();
                    *v = T::from_f32((y1 - in_y) * top + (in_y - y0) * bot);
                }
            }
        });
        Tensor::new(dims.to_vec(), out)
    }
}

impl OpKernel for Transform {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let img = ctx.input(0)?;
        check_type(ctx, &img, "images", "dtype", self.dtype)?;
        let [n, ..] = image_dims(ctx, &img, "Input images")?;
        let tr = ctx.input(1)?;
        let d = tr.dims();
        if d.len() != 2 || (d[0] != n && d[0] != 1) || d[1] != 8 {
            return Err(
                ctx.error(format!("Input transform should be num_images x 8 or 1 x 8, got shape {}", tr.shape()))
            );
        }
        let per_image = d[0] != 1;
        let trv =
            tr.as_slice::<f32>().map_err(|_| ctx.error(format!("transforms must be float, got {}", tr.dtype())))?;
        let s = ctx.input(2)?;
        if s.rank() != 1 || s.num_elements() != 2 {
            return Err(ctx.error(format!("output shape must be 1-dimensional with two elements, got {}", s.shape())));
        }
        let sv = s.as_slice::<i32>().map_err(|_| ctx.error("output_shape must be int32"))?;
        if sv[0] <= 0 || sv[1] <= 0 {
            return Err(ctx.error(format!("output dimensions must be positive, got {sv:?}")));
        }
        let fill = if self.v3 {
            let f = ctx.input(3)?;
            if f.rank() != 0 {
                return Err(ctx.error(format!("fill_value must be a scalar, got shape {}", f.shape())));
            }
            f.scalar_value::<f32>().map_err(|_| ctx.error("fill_value must be float"))?
        } else {
            0.0
        };
        let (oh, ow) = (sv[0] as usize, sv[1] as usize);
        let t = dispatch!(self.dtype, ctx, [u8, i32, i64, f16, bf16, f32, f64], |T| {
            self.run::<T>(ctx, &img, trv, per_image, oh, ow, fill)
        })?;
        ctx.set_output(0, t)
    }
}

fn factory(node: &NodeDef, v3: bool) -> Result<Box<dyn OpKernel>, Status> {
    use DataType::*;
    let dtype = dtype_attr(node, "dtype", |d| matches!(d, UInt8 | Int32 | Int64 | Half | BFloat16 | Float | Double))?;
    let bilinear = match node.attr_string("interpolation")?.as_str() {
        "NEAREST" => false,
        "BILINEAR" => true,
        m => return Err(node.node_error(format!("Invalid interpolation {m}: must be NEAREST or BILINEAR"))),
    };
    let fill = match node.attr_string("fill_mode")?.as_str() {
        "REFLECT" => Fill::Reflect,
        "WRAP" => Fill::Wrap,
        "CONSTANT" => Fill::Constant,
        "NEAREST" => Fill::Nearest,
        m => return Err(node.node_error(format!("Invalid fill_mode {m}: must be REFLECT, WRAP, CONSTANT or NEAREST"))),
    };
    Ok(Box::new(Transform { bilinear, fill, dtype, v3 }))
}

pub(crate) fn v2_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    factory(node, false)
}

pub(crate) fn v3_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    factory(node, true)
}
