//! `ExtractGlimpse` and `ExtractGlimpseV2` (`tf.image.extract_glimpse`): a `size` window of
//! each image at `offsets` (y, x; normalized to [0, 1] or [-1, 1] when centered, or pixels),
//! the origin truncated to a pixel as TensorFlow's Eigen `ExtractGlimpses` truncates it.
//! Parts of the window outside the image are zeros (`noise = "zero"`) or noise: uniform
//! between the image's min and max, or a per-channel Gaussian of the image's mean and
//! deviation clamped to its range. TensorFlow draws that noise from an unseeded generator, so
//! only its distribution is TensorFlow's. V1 places uncentered coordinates at the window's
//! centre, V2 at its corner.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{check_tensor_alloc, DataType, NodeAttrs, Status, Tensor};

use crate::random::guarded::random_u64;
use crate::random::philox::{box_muller_f32, u32_to_f32, Philox, SingleSample};
use crate::{KernelRegistry, OpContext, OpKernel};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Noise {
    Uniform,
    Gaussian,
    Zero,
}

struct Glimpse {
    v1: bool,
    normalized: bool,
    centered: bool,
    noise: Noise,
}

fn make(n: &NodeDef, v1: bool) -> Result<Box<dyn OpKernel>, Status> {
    let uniform_noise = n.attr_bool("uniform_noise")?;
    let noise = n.attr_string("noise")?;
    if uniform_noise && !noise.is_empty() && noise != "uniform" {
        return Err(n.node_error("The uniform_noise and noise could not be specified at the same time"));
    }
    let noise = match noise.as_str() {
        "" if uniform_noise => Noise::Uniform,
        "" => Noise::Gaussian,
        "uniform" => Noise::Uniform,
        "gaussian" => Noise::Gaussian,
        "zero" => Noise::Zero,
        other => return Err(n.node_error(format!("The noise could only be uniform, gaussian, or zero, got{other}"))),
    };
    Ok(Box::new(Glimpse { v1, normalized: n.attr_bool("normalized")?, centered: n.attr_bool("centered")?, noise }))
}

/// One axis of a window: where it starts in the image (possibly negative) and what part of
/// it the image covers.
struct Span {
    /// The first image index copied.
    from: i64,
    /// How many indices are copied.
    len: i64,
    /// Where in the window the copy starts.
    at: i64,
    /// Whether the image covers the window only in part (TensorFlow's test, which also counts
    /// a window ending exactly at the image's edge).
    partial: bool,
    /// The covered length before clamping to the image (0: nothing to copy).
    glimpse: i64,
}

fn span(offset: i64, win: i64, input: i64) -> Span {
    let (mut from, mut len, mut at, mut partial, mut glimpse) = (offset, win, 0, false, win);
    if offset < 0 {
        from = 0;
        glimpse = win.saturating_add(offset).max(0);
        len = glimpse;
        at = win - glimpse;
        partial = true;
    } else if offset.saturating_add(win) >= input {
        glimpse = (input - offset).max(0);
        len = glimpse;
        partial = true;
    }
    Span { from, len: len.min(input), at, partial, glimpse }
}

impl Glimpse {
    /// The window's top-left corner in (fractional) pixels, as TensorFlow computes it in f32.
    fn origin(&self, offset: f32, input: i64, win: i64) -> f32 {
        let (input, win) = (input as f32, win as f32);
        let mut p = offset;
        if self.v1 {
            if self.normalized {
                p *= input;
            }
            if self.centered {
                p /= 2.0;
                p += input / 2.0;
            }
            p -= win / 2.0;
        } else if self.normalized {
            p *= input;
            if self.centered {
                p /= 2.0;
                p += input / 2.0;
                p -= win / 2.0;
            }
        } else if self.centered {
            p += input / 2.0;
        }
        p
    }

    /// Fills one window `out` ([win_h, win_w, depth]) with noise from `image` ([h, w, depth]).
    fn noise(&self, image: &[f32], depth: usize, out: &mut [f32], gen: &mut Philox) {
        let mut rnd = SingleSample::new(gen);
        match self.noise {
            Noise::Zero => out.fill(0.0),
            Noise::Uniform => {
                let lo = image.iter().copied().fold(f32::INFINITY, f32::min);
                let hi = image.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let (lo, range) = if image.is_empty() { (0.0, 0.0) } else { (lo, hi - lo) };
                for o in out.iter_mut() {
                    *o = lo + u32_to_f32(rnd.next_u32()) * range;
                }
            }
            Noise::Gaussian => {
                for c in 0..depth {
                    let ch: Vec<f32> = image.iter().skip(c).step_by(depth.max(1)).copied().collect();
                    let n = ch.len().max(1) as f32;
                    let mean = ch.iter().sum::<f32>() / n;
                    let sigma = (ch.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n).sqrt();
                    let lo = ch.iter().copied().fold(f32::INFINITY, f32::min);
                    let hi = ch.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    for o in out.iter_mut().skip(c).step_by(depth.max(1)) {
                        let (z, _) = box_muller_f32(rnd.next_u32(), rnd.next_u32());
                        *o = (mean + z * sigma).min(hi).max(lo);
                    }
                }
            }
        }
    }
}

impl OpKernel for Glimpse {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        if x.rank() != 4 {
            return Err(
                ctx.error(format!("input must be 4-dimensional (batch_size, height, width, depth){}", x.shape()))
            );
        }
        let size = ctx.input(1)?;
        if size.rank() != 1 || size.dims()[0] != 2 || size.dtype() != DataType::Int32 {
            return Err(ctx.error(format!("input must be a vector of size 2 (height, width){}", size.shape())));
        }
        let s = size.as_slice::<i32>()?;
        let (win_h, win_w) = (s[0] as i64, s[1] as i64);
        if let Some(bad) = [win_h, win_w].into_iter().find(|&v| v < 0) {
            return Err(ctx.error(format!("Expected a non-negative size, got {bad}")));
        }
        let offsets = ctx.input(2)?;
        let [batch, h, w, depth] = [x.dims()[0], x.dims()[1], x.dims()[2], x.dims()[3]];
        if offsets.rank() != 2 {
            return Err(ctx.error(format!("input must be a matrix{}", offsets.shape())));
        }
        if offsets.dims()[0] != batch {
            return Err(ctx.error(format!("first dimension should be batch{}", offsets.shape())));
        }
        if offsets.dims()[1] != 2 {
            return Err(ctx.error(format!("second dimension should be of size 2 (y,x){}", offsets.shape())));
        }
        let out_dims = [batch, win_h as usize, win_w as usize, depth];
        check_tensor_alloc(&out_dims, DataType::Float).map_err(|e| ctx.error_with(e))?;
        let mut out = vec![0f32; out_dims.iter().product()];
        let (xs, offs) = (x.as_slice::<f32>()?, offsets.as_slice::<f32>()?);
        let window = win_h as usize * win_w as usize * depth;
        let image_len = h * w * depth;
        let mut gen = Philox::new(random_u64(), random_u64());
        for (i, (dst, o)) in out.chunks_exact_mut(window.max(1)).zip(offs.chunks_exact(2)).enumerate() {
            let image = &xs[i * image_len..(i + 1) * image_len];
            let oy = self.origin(o[0], h as i64, win_h) as i64;
            let ox = self.origin(o[1], w as i64, win_w) as i64;
            let (sy, sx) = (span(oy, win_h, h as i64), span(ox, win_w, w as i64));
            if sy.partial || sx.partial {
                self.noise(image, depth, dst, &mut gen);
                if sy.glimpse == 0 || sx.glimpse == 0 {
                    continue;
                }
            }
            let row = sx.len.max(0) as usize * depth;
            for r in 0..sy.len.max(0) {
                let src = (((sy.from + r) * w as i64 + sx.from) as usize) * depth;
                let to = (((sy.at + r) * win_w + sx.at) as usize) * depth;
                dst[to..to + row].copy_from_slice(&image[src..src + row]);
            }
        }
        ctx.set_output(0, Tensor::new(out_dims.to_vec(), out)?)
    }
}

/// Registers the kernels.
pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ExtractGlimpse", |n| make(n, true));
    r.add("ExtractGlimpseV2", |n| make(n, false));
}

#[cfg(test)]
#[path = "glimpse_tests.rs"]
mod tests;
