//! Colour kernels on `[..., 3]` RGB images: `RGBToHSV`, `HSVToRGB`, `AdjustHue`,
//! `AdjustSaturation` (per pixel, TensorFlow's float formulas) and `AdjustContrastv2`
//! (per image and channel: `(x - mean) * factor + mean`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, Status, Tensor};

use super::common::{check_type, dtype_attr, float_tensor, for_rows};
use crate::real::Real;
use crate::{OpContext, OpKernel};

/// Checks the last dim is 3 (and, for the adjust ops, rank >= 3).
fn rgb_input(ctx: &OpContext, t: &Tensor, min_rank: usize) -> Result<(), Status> {
    if t.rank() < min_rank.max(1) {
        return Err(ctx.error(format!("input must be at least {}-D, got shape {}", min_rank.max(1), t.shape())));
    }
    let c = t.dims()[t.rank() - 1];
    if c != 3 {
        return Err(ctx.error(format!("input must have 3 channels but input only has {c} channels")));
    }
    Ok(())
}

/// RGB → HSV with TensorFlow's formulas (`h` in [0, 1)).
#[inline(always)]
fn rgb_to_hsv<T: Real>(r: T, g: T, b: T) -> [T; 3] {
    let v = if r > g { r } else { g };
    let v = if v > b { v } else { b };
    let mn = if r < g { r } else { g };
    let mn = if mn < b { mn } else { b };
    let range = v - mn;
    let s = if v > T::ZERO { range / v } else { T::ZERO };
    let norm = T::ONE / range * T::from_f64(1.0 / 6.0);
    let mut h = if r == v {
        norm * (g - b)
    } else if g == v {
        norm * (b - r) + T::from_f64(2.0 / 6.0)
    } else {
        norm * (r - g) + T::from_f64(4.0 / 6.0)
    };
    if range.partial_cmp(&T::ZERO) != Some(std::cmp::Ordering::Greater) {
        h = T::ZERO;
    }
    if h < T::ZERO {
        h += T::ONE;
    }
    [h, s, v]
}

#[inline(always)]
fn clamp01<T: Real>(x: T) -> T {
    let x = if x > T::ZERO { x } else { T::ZERO };
    if x < T::ONE {
        x
    } else {
        T::ONE
    }
}

/// HSV → RGB with TensorFlow's piecewise-linear formulas.
#[inline(always)]
fn hsv_to_rgb<T: Real>(h: T, s: T, v: T) -> [T; 3] {
    let dh = h * T::from_f64(6.0);
    let (two, three, four) = (T::from_f64(2.0), T::from_f64(3.0), T::from_f64(4.0));
    let dr = clamp01((dh - three).abs() - T::ONE);
    let dg = clamp01(-(dh - two).abs() + two);
    let db = clamp01(-(dh - four).abs() + two);
    let oms = T::ONE - s;
    [(oms + s * dr) * v, (oms + s * dg) * v, (oms + s * db) * v]
}

#[derive(Clone, Copy)]
enum Convert {
    ToHsv,
    ToRgb,
}

struct ColorConvert {
    dir: Convert,
    dtype: DataType,
}

fn convert_pixels<T: Real>(x: &[T], dir: Convert) -> Vec<T> {
    let mut out = x.to_vec();
    for_rows(&mut out, 3 * 1024, |_, chunk| {
        for p in chunk.chunks_exact_mut(3) {
            let r = match dir {
                Convert::ToHsv => rgb_to_hsv(p[0], p[1], p[2]),
                Convert::ToRgb => hsv_to_rgb(p[0], p[1], p[2]),
            };
            p.copy_from_slice(&r);
        }
    });
    out
}

impl OpKernel for ColorConvert {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        check_type(ctx, &x, "images", "T", self.dtype)?;
        rgb_input(ctx, &x, 1)?;
        let dims = x.dims().to_vec();
        let t = match self.dtype {
            DataType::Double => Tensor::new(dims, convert_pixels(x.as_slice::<f64>()?, self.dir))?,
            DataType::Float => Tensor::new(dims, convert_pixels(x.as_slice::<f32>()?, self.dir))?,
            d => {
                let v: Vec<f32> = x.to_f64_vec()?.into_iter().map(|v| v as f32).collect();
                float_tensor(dims, convert_pixels(&v, self.dir), d)?
            }
        };
        ctx.set_output(0, t)
    }
}

/// The float scalar second input of the adjust ops.
fn scalar_f32(ctx: &OpContext, i: usize, what: &str) -> Result<f32, Status> {
    let t = ctx.input(i)?;
    if t.rank() != 0 {
        return Err(ctx.error(format!("{what} must be scalar: {}", t.shape())));
    }
    t.scalar_value::<f32>().map_err(|_| ctx.error(format!("{what} must be float, got {}", t.dtype())))
}

/// The images of an adjust op as f32 (half images are converted).
fn images_f32(ctx: &OpContext, t: &Tensor, dtype: DataType) -> Result<Vec<f32>, Status> {
    check_type(ctx, t, "images", "T", dtype)?;
    match dtype {
        DataType::Float => Ok(t.as_slice::<f32>()?.to_vec()),
        _ => Ok(t.to_f64_vec()?.into_iter().map(|v| v as f32).collect()),
    }
}

#[derive(Clone, Copy)]
enum Adjust {
    Hue,
    Saturation,
}

/// TensorFlow's `AdjustSaturation` HSV → RGB (sector by sector).
#[inline(always)]
fn hsv_to_rgb_sectors(h: f32, s: f32, v: f32) -> [f32; 3] {
    let c = s * v;
    let m = v - c;
    let dh = h * 6.0;
    let cat = dh as i32;
    let mut f = dh;
    while f <= 0.0 {
        f += 2.0;
    }
    while f >= 2.0 {
        f -= 2.0;
    }
    let x = c * (1.0 - (f - 1.0).abs());
    let [r, g, b] = match cat {
        0 => [c, x, 0.0],
        1 => [x, c, 0.0],
        2 => [0.0, c, x],
        3 => [0.0, x, c],
        4 => [x, 0.0, c],
        5 => [c, 0.0, x],
        _ => [0.0, 0.0, 0.0],
    };
    [r + m, g + m, b + m]
}

/// TensorFlow's `AdjustSaturation` RGB → HSV (mixed float/double constants).
#[inline(always)]
fn rgb_to_hsv_saturation(r: f32, g: f32, b: f32) -> [f32; 3] {
    let v = r.max(g.max(b));
    let range = v - r.min(g.min(b));
    let s = if v > 0.0 { range / v } else { 0.0 };
    let norm = 1.0 / (6.0 * range);
    let mut h = if r == v {
        norm * (g - b)
    } else if g == v {
        (f64::from(norm * (b - r)) + 2.0 / 6.0) as f32
    } else {
        (f64::from(norm * (r - g)) + 4.0 / 6.0) as f32
    };
    if range <= 0.0 {
        h = 0.0;
    }
    if h < 0.0 {
        h += 1.0;
    }
    [h, s, v]
}

/// Hue in [0, 6) and the min/max of one pixel (TensorFlow's `AdjustHue` representation).
#[inline(always)]
fn rgb_to_hv_range(r: f32, g: f32, b: f32) -> (f32, f32, f32) {
    let (mx, mid, mn, cat) = if r < g {
        if b < r {
            (g, r, b, 1)
        } else if b > g {
            (b, g, r, 3)
        } else {
            (g, b, r, 2)
        }
    } else if b < g {
        (r, g, b, 0)
    } else if b > r {
        (b, r, g, 4)
    } else {
        (r, b, g, 5)
    };
    if mx == mn {
        return (0.0, mn, mx);
    }
    let ratio = (mid - mn) / (mx - mn);
    let h = cat as f32 + if cat & 1 == 0 { ratio } else { 1.0 - ratio };
    (h, mn, mx)
}

#[inline(always)]
fn hv_range_to_rgb(h: f32, mn: f32, mx: f32) -> [f32; 3] {
    let cat = h as i32;
    let mut ratio = h - cat as f32;
    if cat & 1 != 0 {
        ratio = 1.0 - ratio;
    }
    let mid = mn + ratio * (mx - mn);
    match cat {
        0 => [mx, mid, mn],
        1 => [mid, mx, mn],
        2 => [mn, mx, mid],
        3 => [mn, mid, mx],
        4 => [mid, mn, mx],
        _ => [mx, mn, mid],
    }
}

op_kernel! {
    struct AdjustHsv { kind: Adjust, dtype: DataType }
    fn compute(&self, ctx) {
        let x = ctx.input(0)?;
        rgb_input(ctx, &x, 3)?;
        let (what, kind) = match self.kind {
            Adjust::Hue => ("delta", self.kind),
            Adjust::Saturation => ("scale", self.kind),
        };
        let k = scalar_f32(ctx, 1, what)?;
        let mut v = images_f32(ctx, &x, self.dtype)?;
        for_rows(&mut v, 3 * 1024, |_, chunk| {
            for p in chunk.chunks_exact_mut(3) {
                let r = match kind {
                    Adjust::Hue => {
                        let (mut h, mn, mx) = rgb_to_hv_range(p[0], p[1], p[2]);
                        h += k * 6.0;
                        // Bounded loops: a huge or non-finite delta cannot spin forever.
                        if !h.is_finite() || h.abs() > 1e6 {
                            h = h.rem_euclid(6.0);
                            if !h.is_finite() {
                                h = 0.0;
                            }
                        }
                        while h < 0.0 {
                            h += 6.0;
                        }
                        while h >= 6.0 {
                            h -= 6.0;
                        }
                        hv_range_to_rgb(h, mn, mx)
                    }
                    Adjust::Saturation => {
                        let [h, s, val] = rgb_to_hsv_saturation(p[0], p[1], p[2]);
                        // NaN scales give 0, as TensorFlow's min(1, max(0, s)).
                        let p = s * k;
                        let s = if p > 0.0 { p.min(1.0) } else { 0.0 };
                        hsv_to_rgb_sectors(h, s, val)
                    }
                };
                p.copy_from_slice(&r);
            }
        });
        ctx.set_output(0, float_tensor(x.dims().to_vec(), v, self.dtype)?)
    }
}

op_kernel! {
    /// `AdjustContrastv2`: per image and channel, `(x - mean) * factor + mean`.
    struct AdjustContrast { dtype: DataType }
    fn compute(&self, ctx) {
        let x = ctx.input(0)?;
        if x.rank() < 3 {
            return Err(ctx.error(format!("input must be at least 3-D, got shape {}", x.shape())));
        }
        let factor = scalar_f32(ctx, 1, "contrast_factor")?;
        let d = x.dims();
        let (h, w, c) = (d[d.len() - 3], d[d.len() - 2], d[d.len() - 1]);
        let mut v = images_f32(ctx, &x, self.dtype)?;
        let image = h * w * c;
        if image > 0 {
            for_rows(&mut v, image, |_, img| {
                let mut sums = vec![0.0f64; c];
                for px in img.chunks_exact(c) {
                    sums.iter_mut().zip(px).for_each(|(s, &p)| *s += f64::from(p));
                }
                let means: Vec<f32> = sums.iter().map(|&s| (s / (h * w) as f64) as f32).collect();
                for px in img.chunks_exact_mut(c) {
                    for (p, &m) in px.iter_mut().zip(&means) {
                        *p = (*p - m) * factor + m;
                    }
                }
            });
        }
        ctx.set_output(0, float_tensor(d.to_vec(), v, self.dtype)?)
    }
}

fn float_types(d: DataType) -> bool {
    matches!(d, DataType::Float | DataType::Double | DataType::Half | DataType::BFloat16)
}

pub(crate) fn rgb_to_hsv_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(ColorConvert { dir: Convert::ToHsv, dtype: dtype_attr(node, "T", float_types)? }))
}

pub(crate) fn hsv_to_rgb_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(ColorConvert { dir: Convert::ToRgb, dtype: dtype_attr(node, "T", float_types)? }))
}

fn float_or_half(d: DataType) -> bool {
    matches!(d, DataType::Float | DataType::Half)
}

pub(crate) fn adjust_hue_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(AdjustHsv { kind: Adjust::Hue, dtype: dtype_attr(node, "T", float_or_half)? }))
}

pub(crate) fn adjust_saturation_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(AdjustHsv { kind: Adjust::Saturation, dtype: dtype_attr(node, "T", float_or_half)? }))
}

pub(crate) fn adjust_contrast_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(AdjustContrast { dtype: dtype_attr(node, "T", float_or_half)? }))
}
