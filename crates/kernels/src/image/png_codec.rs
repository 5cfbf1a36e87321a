//! `DecodePng` and `EncodePng` (the `png` crate), with libpng's conversions as TensorFlow
//! configures them: palettes and `tRNS` expanded, gray below 8 bits widened, 16 → 8 bits by
//! the high byte, 8 → 16 bits ×257, RGB → gray with libpng's fixed-point 0.299/0.587
//! weights, alpha added opaque or stripped.

use std::io::Cursor;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{check_tensor_alloc, DataType, NodeAttrs, Status, Tensor, TensorType};

use super::codec::{contents, set_string, Pixels};
use crate::array::util::collect_vec;
use crate::{OpContext, OpKernel};

/// libpng's fixed-point RGB → gray weights (out of 32768) for 0.299 and 0.587.
const GRAY_R: u32 = 9797;
const GRAY_G: u32 = 19234;
const GRAY_B: u32 = 32768 - GRAY_R - GRAY_G;

/// Decodes a PNG to `channels` (0: as stored) at its own depth: 8-bit samples in
/// `Pixels::U8`, 16-bit ones in `Pixels::U16`; `err` makes the node's errors.
pub(crate) fn decode_png(bytes: &[u8], channels: usize, err: &dyn Fn(String) -> Status) -> Result<Pixels, Status> {
    let mut dec = png::Decoder::new(Cursor::new(bytes));
    dec.set_transformations(png::Transformations::EXPAND);
    dec.ignore_checksums(false);
    let header = dec.read_header_info().map_err(|e| err(format!("Invalid PNG header: {e}")))?;
    let (w, h) = (header.width as usize, header.height as usize);
    // The decoder's own buffers are bounded by the memory budget (at 16-bit RGBA).
    check_tensor_alloc(&[h, w, 8], DataType::UInt8)?;
    dec.set_limits(png::Limits { bytes: h.saturating_mul(w).saturating_mul(8).saturating_add(1 << 20) });
    let mut reader = dec.read_info().map_err(|e| err(format!("Invalid PNG data: {e}")))?;
    let size = reader.output_buffer_size().ok_or_else(|| err("PNG image too large".to_string()))?;
    let mut buf = ferroflow_core::alloc::zeroed::<u8>(&[size])?;
    let info = reader.next_frame(&mut buf).map_err(|e| err(format!("Invalid PNG data: {e}")))?;
    buf.truncate(info.buffer_size());
    let (color, depth) = reader.output_color_type();
    let src_c = color.samples();
    let want = if channels == 0 { src_c } else { channels };
    let p = match depth {
        png::BitDepth::Sixteen => {
            let v = collect_vec(&[h, w, src_c], buf.chunks_exact(2).map(|b| u16::from_be_bytes([b[0], b[1]])))?;
            drop(buf);
            Pixels::U16(
                convert(
                    v,
                    [h, w, src_c],
                    want,
                    |r, g, b| ((GRAY_R * r + GRAY_G * g + GRAY_B * b + 16384) >> 15) as u16,
                    65535,
                )?,
                [h, w, want],
            )
        }
        _ => Pixels::U8(
            convert(buf, [h, w, src_c], want, |r, g, b| ((GRAY_R * r + GRAY_G * g + GRAY_B * b) >> 15) as u8, 255)?,
            [h, w, want],
        ),
    };
    Ok(p)
}

/// Converts interleaved samples of an `[h, w, from]` image from `from` to `to` channels
/// (1: gray, 2: gray+alpha, 3: RGB, 4: RGBA).
fn convert<T: TensorType + Copy + Into<u32> + PartialEq>(
    v: Vec<T>,
    [h, w, from]: [usize; 3],
    to: usize,
    gray: impl Fn(u32, u32, u32) -> T,
    opaque: T,
) -> Result<Vec<T>, Status> {
    if from == to {
        return Ok(v);
    }
    let mut out = ferroflow_core::alloc::with_capacity(&[h, w, to])?;
    for px in v.chunks_exact(from) {
        let (color, alpha): (&[T], Option<T>) = match from {
            1 => (&px[..1], None),
            2 => (&px[..1], Some(px[1])),
            3 => (&px[..3], None),
            _ => (&px[..3], Some(px[3])),
        };
        let is_rgb = color.len() == 3;
        let y = if is_rgb {
            if color[0] == color[1] && color[0] == color[2] {
                color[0]
            } else {
                gray(color[0].into(), color[1].into(), color[2].into())
            }
        } else {
            color[0]
        };
        match to {
            1 => out.push(y),
            2 => out.extend([y, alpha.unwrap_or(opaque)]),
            3 if is_rgb => out.extend_from_slice(color),
            3 => out.extend([y, y, y]),
            _ if is_rgb => out.extend([color[0], color[1], color[2], alpha.unwrap_or(opaque)]),
            _ => out.extend([y, y, y, alpha.unwrap_or(opaque)]),
        }
    }
    Ok(out)
}

/// Parses the `channels` attr of the decoders (0, 1, 3 or 4).
pub(crate) fn channels_attr(node: &NodeDef) -> Result<usize, Status> {
    match node.attr_int("channels")? {
        c @ (0 | 1 | 3 | 4) => Ok(c as usize),
        c => Err(node.node_error(format!("`channels` must be 0, 1, 3 or 4 but got {c}"))),
    }
}

op_kernel! {
    struct DecodePng { channels: usize, dtype: DataType }
    fn compute(&self, ctx) {
        let bytes = contents(ctx)?;
        let p = decode_png(&bytes, self.channels, &|m| ctx.error(m))?;
        ctx.set_output(0, p.into_tensor(self.dtype)?)
    }
}

pub(crate) fn decode_png_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = node.attr_type("dtype")?;
    if !matches!(dtype, DataType::UInt8 | DataType::UInt16) {
        return Err(node.node_error(format!("dtype must be uint8 or uint16, got {dtype}")));
    }
    Ok(Box::new(DecodePng { channels: channels_attr(node)?, dtype }))
}

struct EncodePng {
    compression: i64,
}

/// Encodes interleaved samples (`channels` of 1-4, big-endian when 16-bit) as a PNG;
/// `compression` is zlib's level (-1 = default).
pub(crate) fn png_bytes(
    data: &[u8],
    w: usize,
    h: usize,
    channels: usize,
    depth: png::BitDepth,
    compression: i64,
) -> Result<Vec<u8>, String> {
    let color = match channels {
        1 => png::ColorType::Grayscale,
        2 => png::ColorType::GrayscaleAlpha,
        3 => png::ColorType::Rgb,
        _ => png::ColorType::Rgba,
    };
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w as u32, h as u32);
        enc.set_color(color);
        enc.set_depth(depth);
        enc.set_compression(match compression {
            0 => png::Compression::NoCompression,
            1..=2 => png::Compression::Fast,
            -1 | 3..=6 => png::Compression::Balanced,
            _ => png::Compression::High,
        });
        let map = |e: png::EncodingError| format!("PNG encoding failed: {e}");
        let mut wr = enc.write_header().map_err(map)?;
        wr.write_image_data(data).map_err(map)?;
        wr.finish().map_err(map)?;
    }
    Ok(out)
}

impl OpKernel for EncodePng {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        // TensorFlow 2.21 encodes a batch too ([..., h, w, c] gives one string per image).
        let img = ctx.input(0)?;
        let dims = img.dims();
        let Some(batch_rank) = dims.len().checked_sub(3) else {
            return Err(ctx.error(format!("image must be at least 3-dimensional, got shape {}", img.shape())));
        };
        let (batch, &[h, w, c]) = dims.split_at(batch_rank) else {
            return Err(ctx.error(format!("image must be at least 3-dimensional, got shape {}", img.shape())));
        };
        if !(1..=4).contains(&c) {
            return Err(ctx.error(format!("image must have 1, 2, 3, or 4 channels, got {c}")));
        }
        let too_big = |d: usize| u32::try_from(d).ok().filter(|&d| d < (1 << 31)).is_none();
        if too_big(h) || too_big(w) || w.saturating_mul(c).saturating_mul(2) >= (1 << 31) {
            return Err(ctx.error(format!("image {} is too large to encode as PNG", img.shape())));
        }
        let (data, depth) = match img.dtype() {
            DataType::UInt8 => (img.as_slice::<u8>()?.to_vec(), png::BitDepth::Eight),
            DataType::UInt16 => {
                (img.as_slice::<u16>()?.iter().flat_map(|v| v.to_be_bytes()).collect(), png::BitDepth::Sixteen)
            }
            d => return Err(ctx.error(format!("image must be uint8 or uint16, got {d}"))),
        };
        if batch.is_empty() {
            let out = png_bytes(&data, w, h, c, depth, self.compression).map_err(|e| ctx.error(e))?;
            return set_string(ctx, out);
        }
        let per = h * w * c * if depth == png::BitDepth::Sixteen { 2 } else { 1 };
        let n: usize = batch.iter().product();
        let mut outs = Vec::with_capacity(n);
        for i in 0..n {
            let one = data.get(i * per..(i + 1) * per).unwrap_or(&[]);
            outs.push(png_bytes(one, w, h, c, depth, self.compression).map_err(|e| ctx.error(e))?);
        }
        ctx.set_output(0, Tensor::new(batch.to_vec(), outs)?)
    }
}

pub(crate) fn encode_png_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let compression = node.attr_int("compression")?;
    if !(-1..=9).contains(&compression) {
        return Err(node.node_error(format!("compression should be in [-1,9], got {compression}")));
    }
    let t = node.attr_type("T")?;
    if !matches!(t, DataType::UInt8 | DataType::UInt16) {
        return Err(node.node_error(format!("T must be uint8 or uint16, got {t}")));
    }
    Ok(Box::new(EncodePng { compression }))
}
