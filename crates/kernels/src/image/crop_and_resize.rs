//! `CropAndResize`, `CropAndResizeGradImage` and `CropAndResizeGradBoxes`: boxes
//! `[y1, x1, y2, x2]` in normalized coordinates, each cropped from image `box_ind[b]` and
//! resized (bilinear or nearest) to `crop_size`; samples outside the image take
//! `extrapolation_value` (forward) or pass no gradient.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::common::{as_f32, dtype_attr, image_dims, is_real, zeros};
use super::resize::{per_image, Acc};
use crate::{OpContext, OpKernel};

/// The boxes `[num_boxes, 4]` (float) and their image indices (int32, in `[0, batch)`).
fn boxes_input(ctx: &OpContext, bi: usize, batch: usize) -> Result<(Vec<[f32; 4]>, Vec<usize>), Status> {
    let boxes = ctx.input(bi)?;
    let ind = ctx.input(bi + 1)?;
    if boxes.rank() != 2 || boxes.dims()[1] != 4 {
        return Err(ctx.error(format!("boxes must be 2-D [num_boxes, 4], got shape {}", boxes.shape())));
    }
    let n = boxes.dims()[0];
    if ind.rank() != 1 || ind.dims()[0] != n {
        return Err(ctx.error(format!(
            "box_index has incompatible shape: expected [{n}] for boxes {}, got {}",
            boxes.shape(),
            ind.shape()
        )));
    }
    let b = boxes.as_slice::<f32>().map_err(|_| ctx.error(format!("boxes must be float, got {}", boxes.dtype())))?;
    let i = ind.as_slice::<i32>().map_err(|_| ctx.error(format!("box_index must be int32, got {}", ind.dtype())))?;
    let mut idx = Vec::with_capacity(n);
    for &v in i {
        if v < 0 || v as usize >= batch {
            return Err(ctx.error(format!("box_index has values outside [0, batch_size): {v} (batch_size {batch})")));
        }
        idx.push(v as usize);
    }
    Ok((b.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect(), idx))
}

/// A positive int32 `[height, width]` `crop_size`.
fn crop_size(ctx: &OpContext, i: usize) -> Result<(usize, usize), Status> {
    let t = ctx.input(i)?;
    if t.rank() != 1 || t.num_elements() != 2 {
        return Err(ctx.error(format!("crop_size must be 1-D with two elements, got shape {}", t.shape())));
    }
    let v = t.as_slice::<i32>().map_err(|_| ctx.error(format!("crop_size must be int32, got {}", t.dtype())))?;
    if v[0] <= 0 || v[1] <= 0 {
        return Err(ctx.error(format!("crop dimensions must be positive, got {v:?}")));
    }
    Ok((v[0] as usize, v[1] as usize))
}

/// Sampling positions of one box along one axis: `crop` coordinates in image pixels
/// (`None` outside the image), and the step between them.
fn axis(lo: f32, hi: f32, crop: usize, size: usize) -> (Vec<Option<f32>>, f32) {
    let last = (size - 1) as f32;
    let scale = if crop > 1 { (hi - lo) * last / (crop - 1) as f32 } else { 0.0 };
    let pos = (0..crop)
        .map(|i| {
            let p = if crop > 1 {
                lo * last + i as f32 * scale
            } else {
                (0.5 * (f64::from(lo) + f64::from(hi)) * f64::from(last)) as f32
            };
            (0.0..=last).contains(&p).then_some(p)
        })
        .collect();
    (pos, scale)
}

/// Floor, ceil and fraction of an in-image coordinate.
#[inline(always)]
fn split(p: f32) -> (usize, usize, f32) {
    let f = p.floor();
    (f as usize, p.ceil() as usize, p - f)
}

fn method(node: &NodeDef, allow_nearest: bool) -> Result<bool, Status> {
    match node.attr_string("method")?.as_str() {
        "bilinear" => Ok(false),
        "nearest" if allow_nearest => Ok(true),
        m => Err(node.node_error(format!(
            "method must be 'bilinear'{}, got '{m}'",
            if allow_nearest { " or 'nearest'" } else { "" }
        ))),
    }
}

op_kernel! {
    struct CropAndResize { nearest: bool, extrapolation: f32 }
    fn compute(&self, ctx) {
        let img = ctx.input(0)?;
        let [batch, ih, iw, c] = image_dims(ctx, &img, "input image")?;
        if ih == 0 || iw == 0 {
            return Err(ctx.error(format!("image dimensions must be positive, got shape {}", img.shape())));
        }
        let (boxes, ind) = boxes_input(ctx, 1, batch)?;
        let (ch, cw) = crop_size(ctx, 3)?;
        let dims = [boxes.len(), ch, cw, c];
        let mut out = zeros::<f32>(&dims, DataType::Float)?;
        let x = as_f32(ctx, &img)?;
        let (nearest, ext) = (self.nearest, self.extrapolation);
        per_image(&mut out, ch * cw * c, |b, crop| {
            let [y1, x1, y2, x2] = boxes[b];
            let src = &x[ind[b] * ih * iw * c..][..ih * iw * c];
            let (ys, _) = axis(y1, y2, ch, ih);
            let (xs, _) = axis(x1, x2, cw, iw);
            for (row, py) in crop.chunks_exact_mut(cw * c).zip(&ys) {
                let Some(py) = *py else {
                    row.iter_mut().for_each(|v| *v = ext);
                    continue;
                };
                let (ty, by, yl) = split(py);
                for (o, px) in row.chunks_exact_mut(c).zip(&xs) {
                    let Some(px) = *px else {
                        o.iter_mut().for_each(|v| *v = ext);
                        continue;
                    };
                    if nearest {
                        let (ny, nx) = (py.round() as usize, px.round() as usize);
                        o.copy_from_slice(&src[(ny * iw + nx) * c..][..c]);
                        continue;
                    }
                    let (lx, rx, xl) = split(px);
                    let (tl, tr) = (&src[(ty * iw + lx) * c..][..c], &src[(ty * iw + rx) * c..][..c]);
                    let (bl, br) = (&src[(by * iw + lx) * c..][..c], &src[(by * iw + rx) * c..][..c]);
                    for k in 0..c {
                        let top = tl[k] + (tr[k] - tl[k]) * xl;
                        let bot = bl[k] + (br[k] - bl[k]) * xl;
                        o[k] = top + (bot - top) * yl;
                    }
                }
            }
        });
        ctx.set_output(0, Tensor::new(dims.to_vec(), out)?)
    }
}

/// The float `grads` [num_boxes, crop_h, crop_w, depth].
fn grads_input(ctx: &OpContext) -> Result<(Tensor, [usize; 4]), Status> {
    let g = ctx.input(0)?;
    let d = image_dims(ctx, &g, "grads image")?;
    if g.dtype() != DataType::Float {
        return Err(ctx.error(format!("grads must be float, got {}", g.dtype())));
    }
    if d[1] == 0 || d[2] == 0 {
        return Err(ctx.error(format!("grads dimensions must be positive, got shape {}", g.shape())));
    }
    Ok((g, d))
}

struct CropAndResizeGradImage {
    nearest: bool,
    dtype: DataType,
}

impl CropAndResizeGradImage {
    fn run<A: Acc>(
        &self,
        g: &[f32],
        gd: [usize; 4],
        img: [usize; 4],
        bx: &[[f32; 4]],
        ind: &[usize],
    ) -> Result<Vec<A>, Status> {
        let [_, ch, cw, c] = gd;
        let [_, ih, iw, _] = img;
        let mut out = zeros::<A>(&img, self.dtype)?;
        // Boxes write into their own image: each image is summed by one task.
        per_image(&mut out, ih * iw * c, |im, dst| {
            for (b, [y1, x1, y2, x2]) in bx.iter().copied().enumerate() {
                if ind[b] != im {
                    continue;
                }
                let (ys, _) = axis(y1, y2, ch, ih);
                let (xs, _) = axis(x1, x2, cw, iw);
                for (y, py) in ys.iter().enumerate() {
                    let Some(py) = *py else { continue };
                    let (ty, by, yl) = split(py);
                    for (x, px) in xs.iter().enumerate() {
                        let Some(px) = *px else { continue };
                        let src = &g[((b * ch + y) * cw + x) * c..][..c];
                        if self.nearest {
                            let (ny, nx) = (py.round() as usize, px.round() as usize);
                            let d = &mut dst[(ny * iw + nx) * c..][..c];
                            d.iter_mut().zip(src).for_each(|(d, &s)| *d += A::of(s));
                            continue;
                        }
                        let (lx, rx, xl) = split(px);
                        for k in 0..c {
                            let (dtop, dbot) = ((1.0 - yl) * src[k], yl * src[k]);
                            dst[(ty * iw + lx) * c + k] += A::of((1.0 - xl) * dtop);
                            dst[(ty * iw + rx) * c + k] += A::of(xl * dtop);
                            dst[(by * iw + lx) * c + k] += A::of((1.0 - xl) * dbot);
                            dst[(by * iw + rx) * c + k] += A::of(xl * dbot);
                        }
                    }
                }
            }
        });
        Ok(out)
    }
}

impl OpKernel for CropAndResizeGradImage {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (g, gd) = grads_input(ctx)?;
        let s = ctx.input(3)?;
        if s.rank() != 1 || s.num_elements() != 4 {
            return Err(ctx.error(format!("image_size must be 1-D with 4 elements, got shape {}", s.shape())));
        }
        let v = s.as_slice::<i32>().map_err(|_| ctx.error(format!("image_size must be int32, got {}", s.dtype())))?;
        if v.iter().any(|&d| d <= 0) {
            return Err(ctx.error(format!("image dimensions must be positive, got {v:?}")));
        }
        let img = [v[0] as usize, v[1] as usize, v[2] as usize, v[3] as usize];
        if img[3] != gd[3] {
            return Err(ctx.error(format!("image_size {v:?} and grads {} are incompatible (depth)", g.shape())));
        }
        let (bx, ind) = boxes_input(ctx, 1, img[0])?;
        if bx.len() != gd[0] {
            return Err(ctx.error(format!("boxes has {} rows but grads has {} crops", bx.len(), gd[0])));
        }
        let gv = g.as_slice::<f32>()?;
        let t = match self.dtype {
            DataType::Double => Tensor::new(img.to_vec(), self.run::<f64>(gv, gd, img, &bx, &ind)?)?,
            d => super::common::float_tensor(img.to_vec(), self.run::<f32>(gv, gd, img, &bx, &ind)?, d)?,
        };
        ctx.set_output(0, t)
    }
}

op_kernel! {
    struct CropAndResizeGradBoxes;
    fn compute(&self, ctx) {
        let (g, gd) = grads_input(ctx)?;
        let img = ctx.input(1)?;
        let [batch, ih, iw, c] = image_dims(ctx, &img, "input image")?;
        if ih == 0 || iw == 0 {
            return Err(ctx.error(format!("image dimensions must be positive, got shape {}", img.shape())));
        }
        if c != gd[3] {
            return Err(ctx.error(format!("image {} and grads {} have different depths", img.shape(), g.shape())));
        }
        let (bx, ind) = boxes_input(ctx, 2, batch)?;
        if bx.len() != gd[0] {
            return Err(ctx.error(format!("boxes has {} rows but grads has {} crops", bx.len(), gd[0])));
        }
        let [_, ch, cw, _] = gd;
        let gv = g.as_slice::<f32>()?;
        let x = as_f32(ctx, &img)?;
        let mut out = zeros::<f32>(&[bx.len(), 4], DataType::Float)?;
        let (hl, wl) = ((ih - 1) as f32, (iw - 1) as f32);
        let hr = if ch > 1 { hl / (ch - 1) as f32 } else { 0.0 };
        let wr = if cw > 1 { wl / (cw - 1) as f32 } else { 0.0 };
        per_image(&mut out, 4, |b, db| {
            let [y1, x1, y2, x2] = bx[b];
            let src = &x[ind[b] * ih * iw * c..][..ih * iw * c];
            let (ys, _) = axis(y1, y2, ch, ih);
            let (xs, _) = axis(x1, x2, cw, iw);
            for (y, py) in ys.iter().enumerate() {
                let Some(py) = *py else { continue };
                let (ty, by, yl) = split(py);
                let (wy1, wy2) = if ch > 1 { (hl - y as f32 * hr, y as f32 * hr) } else { (0.5 * hl, 0.5 * hl) };
                for (xi, px) in xs.iter().enumerate() {
                    let Some(px) = *px else { continue };
                    let (lx, rx, xl) = split(px);
                    let (wx1, wx2) = if cw > 1 { (wl - xi as f32 * wr, xi as f32 * wr) } else { (0.5 * wl, 0.5 * wl) };
                    let gr = &gv[((b * ch + y) * cw + xi) * c..][..c];
                    for k in 0..c {
                        let tl = src[(ty * iw + lx) * c + k];
                        let tr = src[(ty * iw + rx) * c + k];
                        let bl = src[(by * iw + lx) * c + k];
                        let br = src[(by * iw + rx) * c + k];
                        let gy = ((1.0 - xl) * (bl - tl) + xl * (br - tr)) * gr[k];
                        let gx = ((1.0 - yl) * (tr - tl) + yl * (br - bl)) * gr[k];
                        db[0] += gy * wy1;
                        db[2] += gy * wy2;
                        db[1] += gx * wx1;
                        db[3] += gx * wx2;
                    }
                }
            }
        });
        ctx.set_output(0, Tensor::new(vec![bx.len(), 4], out)?)
    }
}

pub(crate) fn crop_and_resize_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    dtype_attr(node, "T", |d| is_real(d) && d != DataType::BFloat16)?;
    let extrapolation = node.attr_float("extrapolation_value")?;
    Ok(Box::new(CropAndResize { nearest: method(node, true)?, extrapolation }))
}

pub(crate) fn grad_image_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    use DataType::*;
    let dtype = dtype_attr(node, "T", |d| matches!(d, Float | Double | Half))?;
    Ok(Box::new(CropAndResizeGradImage { nearest: method(node, true)?, dtype }))
}

pub(crate) fn grad_boxes_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    dtype_attr(node, "T", |d| is_real(d) && d != DataType::BFloat16)?;
    method(node, false)?;
    Ok(Box::new(CropAndResizeGradBoxes))
}
