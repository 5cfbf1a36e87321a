//! `ImageSummary` and `AudioSummary[V2]` (`tf.compat.v1.summary.image` / `audio`): up to
//! `max_images` / `max_outputs` entries of the batch, tagged `tag/image/i` (`tag/image` when
//! at most one is asked for), as PNG or 16-bit WAV. Float images are mapped to uint8 as
//! TensorFlow does: with a negative value, scaled by 127 / max |v| around 128, else by
//! 255 / max (no scaling below 1e-6), computed in the image's own type and truncated;
//! pixels with a non-finite channel become `bad_color`.

use ferroflow_core::proto::{summary, NodeDef};
use ferroflow_core::{half::f16, DataType, NodeAttrs, Status, Tensor};

use super::{output, tagged, utf8};
use crate::{KernelRegistry, OpContext, OpKernel};

/// The one tag of a media summary (a scalar string at input `i`).
pub(super) fn base_tag(ctx: &OpContext, i: usize) -> Result<String, Status> {
    let t = ctx.input(i)?;
    let v = t.as_slice::<Vec<u8>>().map_err(|_| ctx.error("tag must be a string"))?;
    match v {
        [s] if t.num_elements() == 1 => utf8(ctx, s, "tag"),
        _ => Err(ctx.error("Tags must be a scalar")),
    }
}

fn entry_tag(base: &str, kind: &str, max: i64, i: usize) -> String {
    if max > 1 {
        format!("{base}/{kind}/{i}")
    } else {
        format!("{base}/{kind}")
    }
}

/// A float sample type of an image summary, with its arithmetic.
trait Sample: Copy {
    fn f32(self) -> f32;
    fn of(x: f32) -> Self;
    fn mul_add(self, scale: Self, offset: Self) -> Self;
}

impl Sample for f32 {
    fn f32(self) -> f32 {
        self
    }
    fn of(x: f32) -> f32 {
        x
    }
    fn mul_add(self, s: f32, o: f32) -> f32 {
        self * s + o
    }
}

impl Sample for f64 {
    fn f32(self) -> f32 {
        self as f32
    }
    fn of(x: f32) -> f64 {
        x as f64
    }
    fn mul_add(self, s: f64, o: f64) -> f64 {
        self * s + o
    }
}

impl Sample for f16 {
    fn f32(self) -> f32 {
        self.to_f32()
    }
    fn of(x: f32) -> f16 {
        f16::from_f32(x)
    }
    fn mul_add(self, s: f16, o: f16) -> f16 {
        // Each half operation rounds to half, as Eigen's does.
        f16::from_f32(f16::from_f32(self.to_f32() * s.to_f32()).to_f32() + o.to_f32())
    }
}

/// One float image (`hw` pixels of `depth` channels) as uint8.
fn normalize<T: Sample>(v: &[T], depth: usize, bad: &[u8]) -> Vec<u8> {
    let finite = |px: &[T]| px.iter().all(|x| x.f32().is_finite());
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for px in v.chunks(depth).filter(|p| finite(p)) {
        for x in px {
            lo = lo.min(x.f32());
            hi = hi.max(x.f32());
        }
    }
    let (scale, offset) = if lo < 0.0 {
        let m = lo.abs().max(hi.abs());
        (if m < 1e-6 { 0.0 } else { 127.0 / m }, 128.0)
    } else {
        (if hi < 1e-6 { 0.0 } else { 255.0 / hi }, 0.0)
    };
    let (scale, offset) = (T::of(scale), T::of(offset));
    let mut out = Vec::with_capacity(v.len());
    for px in v.chunks(depth) {
        if finite(px) {
            // C++'s float-to-uint8 conversion truncates (values here are in range).
            out.extend(px.iter().map(|x| x.mul_add(scale, offset).f32() as u8));
        } else {
            out.extend_from_slice(&bad[..depth]);
        }
    }
    out
}

op_kernel! {
    struct ImageSummary { max_images: i64, bad_color: Vec<u8> }
    fn compute(&self, ctx) {
        let tag = base_tag(ctx, 0)?;
        let t = ctx.input(1)?;
        let values = image_values(ctx, &tag, &t, self.max_images, &self.bad_color)?;
        output(ctx, values)
    }
}

/// The summary values of up to `max_images` images of the batch `t` (`ImageSummary`'s and
/// `WriteImageSummary`'s work), PNG-encoded.
pub(super) fn image_values(
    ctx: &OpContext,
    tag: &str,
    t: &Tensor,
    max_images: i64,
    bad_color: &[u8],
) -> Result<Vec<summary::Value>, Status> {
    let d = t.dims();
    if d.len() != 4 || !matches!(d[3], 1 | 3 | 4) {
        return Err(ctx.error(format!("Tensor must be 4-D with last dim 1, 3, or 4, not {}", t.shape())));
    }
    let (batch, h, w, depth) = (d[0], d[1], d[2], d[3]);
    if batch >= 1 << 31 || h >= 1 << 31 || w >= 1 << 31 || h * w >= 1 << 29 {
        return Err(ctx.error(format!("Tensor too large for summary {}", t.shape())));
    }
    if t.dtype() != DataType::UInt8 && bad_color.len() < depth {
        return Err(ctx.error(format!(
            "expected depth <= bad_color.size, got depth = {depth}, bad_color.size = {}",
            bad_color.len()
        )));
    }
    let per = h * w * depth;
    let n = (max_images.max(0) as usize).min(batch);
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        let range = i * per..(i + 1) * per;
        let pixels = match t.dtype() {
            DataType::UInt8 => t.as_slice::<u8>()?[range].to_vec(),
            DataType::Float => normalize(&t.as_slice::<f32>()?[range], depth, bad_color),
            DataType::Double => normalize(&t.as_slice::<f64>()?[range], depth, bad_color),
            DataType::Half => normalize(&t.as_slice::<f16>()?[range], depth, bad_color),
            dt => return Err(ctx.error(format!("T must be uint8, half, float or double, got {dt}"))),
        };
        let png = crate::image::png_codec::png_bytes(&pixels, w, h, depth, png::BitDepth::Eight, -1)
            .map_err(Status::internal)?;
        let image =
            summary::Image { height: h as i32, width: w as i32, colorspace: depth as i32, encoded_image_string: png };
        values.push(tagged(entry_tag(tag, "image", max_images, i), summary::value::Value::Image(image)));
    }
    Ok(values)
}

fn image_summary(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let max_images = n.attr_int("max_images")?;
    if max_images >= 1 << 31 {
        return Err(n.node_error("max_images must be < 2^31"));
    }
    let bad = n.attr_tensor("bad_color")?;
    if bad.dtype() != DataType::UInt8 {
        return Err(n.node_error(format!("bad_color must be uint8, got {}", bad.dtype())));
    }
    if bad.rank() != 1 {
        return Err(n.node_error(format!("bad_color must be a vector, got shape {}", bad.shape())));
    }
    Ok(Box::new(ImageSummary { max_images, bad_color: bad.as_slice::<u8>()?.to_vec() }))
}

struct AudioSummary {
    max_outputs: i64,
    /// `AudioSummary`'s attr; `AudioSummaryV2` takes it as input 2.
    sample_rate: Option<f32>,
}

/// The sample rate at input `i` (a float with one element).
pub(super) fn sample_rate_input(ctx: &OpContext, i: usize) -> Result<f32, Status> {
    let r = ctx.input(i)?;
    match r.as_slice::<f32>() {
        Ok([v]) => Ok(*v),
        _ => Err(ctx.error(format!(
            "sample_rate must be a float of rank-0 or with a single value, got a {} tensor of shape {}",
            r.dtype(),
            r.shape()
        ))),
    }
}

impl OpKernel for AudioSummary {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let tag = base_tag(ctx, 0)?;
        let t = ctx.input(1)?;
        let rate = match self.sample_rate {
            Some(r) => r,
            None => sample_rate_input(ctx, 2)?,
        };
        let values = audio_values(ctx, &tag, &t, rate, self.max_outputs)?;
        output(ctx, values)
    }
}

/// The summary values of up to `max_outputs` clips of the batch `t` (`AudioSummary[V2]`'s
/// and `WriteAudioSummary`'s work), as 16-bit WAV.
pub(super) fn audio_values(
    ctx: &OpContext,
    tag: &str,
    t: &Tensor,
    rate: f32,
    max_outputs: i64,
) -> Result<Vec<summary::Value>, Status> {
    if rate.is_nan() || rate <= 0.0 {
        return Err(ctx.error("sample_rate must be > 0"));
    }
    let d = t.dims();
    if !matches!(d.len(), 2 | 3) {
        return Err(ctx.error(format!("Tensor must be 3-D or 2-D, got: {}", t.shape())));
    }
    let (batch, frames) = (d[0], d[1]);
    let channels = if d.len() == 2 { 1 } else { d[2] };
    let samples = t.as_slice::<f32>().map_err(|_| ctx.error(format!("tensor must be float, got {}", t.dtype())))?;
    let mut whole = rate.round_ties_even() as i64;
    if whole == 0 {
        whole = 1;
    }
    let whole = i32::try_from(whole).map_err(|_| ctx.error(format!("sample_rate {rate} is too large")))?;
    let per = frames * channels;
    let n = (max_outputs.max(0) as usize).min(batch);
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        let wav = crate::audio::wav::encode(&samples[i * per..(i + 1) * per], whole, channels, frames)
            .map_err(|e| ctx.error(e.message))?;
        let audio = summary::Audio {
            sample_rate: rate,
            num_channels: channels as i64,
            length_frames: frames as i64,
            encoded_audio_string: wav,
            content_type: "audio/wav".into(),
        };
        values.push(tagged(entry_tag(tag, "audio", max_outputs, i), summary::value::Value::Audio(audio)));
    }
    Ok(values)
}

fn audio_summary(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let max_outputs = n.attr_int("max_outputs")?;
    if max_outputs <= 0 {
        return Err(n.node_error(format!("max_outputs must be > 0, got {max_outputs}")));
    }
    let sample_rate = if n.op == "AudioSummary" { Some(n.attr_float("sample_rate")?) } else { None };
    Ok(Box::new(AudioSummary { max_outputs, sample_rate }))
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("ImageSummary", image_summary);
    r.add("AudioSummaryV2", audio_summary);
    r.add("AudioSummary", audio_summary);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_images_map_as_tensorflow_does() {
        // All non-negative: scaled by 255 / max and truncated.
        assert_eq!(normalize(&[0.0f32, 0.5, 1.0], 1, &[255]), vec![0, 127, 255]);
        // With a negative value: 127 / max |v| around 128.
        assert_eq!(normalize(&[-2.0f32, 0.0, 1.0], 1, &[255]), vec![1, 128, 191]);
        // A non-finite channel makes the whole pixel bad_color.
        assert_eq!(normalize(&[1.0f64, f64::NAN, 0.5, 0.25], 2, &[7, 9, 0]), vec![7, 9, 255, 127]);
        // Nearly zero images stay black.
        assert_eq!(normalize(&[1e-7f32, 0.0], 1, &[0]), vec![0, 0]);
    }
}
