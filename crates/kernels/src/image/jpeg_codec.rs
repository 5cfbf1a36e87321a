//! `DecodeJpeg` and `DecodeAndCropJpeg` (the `zune-jpeg` crate; the crop is taken from the
//! decoded image, so it equals decode-then-crop), `EncodeJpeg` and
//! `EncodeJpegVariableQuality` (the `jpeg-encoder` crate; the latter with `EncodeJpeg`'s
//! defaults and the quality from its scalar input) and `ExtractJpegShape`. Decoding is not bit-identical to libjpeg-turbo (different IDCT and
//! colour conversion): samples differ by at most 5 levels on the test images
//! (`tests/image_codecs.rs`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{check_tensor_alloc, DataType, NodeAttrs, Status, Tensor};
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

use super::codec::{contents, image_to_encode, set_string, Pixels};
use crate::array::util::collect_vec;
use crate::{OpContext, OpKernel};

/// Largest JPEG side (the format stores 16-bit sizes).
const MAX_SIDE: usize = 65535;

/// Height, width and component count from the JPEG headers.
pub(crate) fn jpeg_shape(bytes: &[u8], err: &dyn Fn(String) -> Status) -> Result<[usize; 3], Status> {
    let opts = DecoderOptions::default().set_max_width(MAX_SIDE).set_max_height(MAX_SIDE);
    let mut d = JpegDecoder::new_with_options(bytes, opts);
    d.decode_headers().map_err(|e| err(format!("Invalid JPEG data or crop window: {e:?}")))?;
    let info = d.info().ok_or_else(|| err("Invalid JPEG data: no frame header".to_string()))?;
    Ok([usize::from(info.height), usize::from(info.width), usize::from(info.components)])
}

/// Decodes a JPEG to 1 or 3 channels (`channels` 0: as stored, 1 for gray JPEGs, else 3).
pub(crate) fn decode_jpeg(bytes: &[u8], channels: usize, err: &dyn Fn(String) -> Status) -> Result<Pixels, Status> {
    let [h, w, comps] = jpeg_shape(bytes, err)?;
    let want = match channels {
        0 if comps == 1 => 1,
        0 => 3,
        c => c,
    };
    check_tensor_alloc(&[h, w, want.max(comps)], DataType::UInt8)?;
    // Gray JPEGs decode to one channel; three are copies of it.
    let space = if want == 1 || comps == 1 { ColorSpace::Luma } else { ColorSpace::RGB };
    let opts =
        DecoderOptions::default().set_max_width(MAX_SIDE).set_max_height(MAX_SIDE).jpeg_set_out_colorspace(space);
    let mut d = JpegDecoder::new_with_options(bytes, opts);
    let mut v = d.decode().map_err(|e| err(format!("Invalid JPEG data or crop window: {e:?}")))?;
    if want == 3 && comps == 1 && v.len() == h * w {
        v = collect_vec(&[h, w, 3], v.iter().flat_map(|&g| [g, g, g]))?;
    }
    if v.len() != h * w * want {
        return Err(err(format!("JPEG decoder gave {} samples for a {h}x{w}x{want} image", v.len())));
    }
    Ok(Pixels::U8(v, [h, w, want]))
}

struct DecodeJpeg {
    channels: usize,
    /// `DecodeAndCropJpeg`: input 1 is the `[y, x, height, width]` window.
    crop: bool,
}

/// The `[y, x, height, width]` crop window of input 1, checked against an `h` x `w` image.
fn crop_window(ctx: &OpContext, h: usize, w: usize) -> Result<[usize; 4], Status> {
    let t = ctx.input(1)?;
    if t.dtype() != DataType::Int32 {
        return Err(ctx.error(format!("crop_window must be int32, got {}", t.dtype())));
    }
    let v = t.as_slice::<i32>()?;
    if v.len() != 4 {
        return Err(ctx.error(format!("crop_size must have four elements {}", t.shape())));
    }
    let [y, x, ch, cw] = [v[0] as i64, v[1] as i64, v[2] as i64, v[3] as i64];
    if y < 0 || x < 0 || ch <= 0 || cw <= 0 || y + ch > h as i64 || x + cw > w as i64 {
        return Err(ctx.error(format!(
            "jpeg::Uncompress failed. Invalid JPEG data or crop window: window {v:?} is not inside the {h}x{w} image"
        )));
    }
    Ok([y as usize, x as usize, ch as usize, cw as usize])
}

impl OpKernel for DecodeJpeg {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let bytes = contents(ctx)?;
        if self.crop {
            let [h, w, _] = jpeg_shape(&bytes, &|m| ctx.error(m))?;
            let [y, x, ch, cw] = crop_window(ctx, h, w)?;
            let Pixels::U8(v, [_, _, c]) = decode_jpeg(&bytes, self.channels, &|m| ctx.error(m))? else {
                return Err(ctx.error("JPEG decoder gave 16-bit samples"));
            };
            let rows = (y..y + ch).flat_map(|r| v[(r * w + x) * c..(r * w + x + cw) * c].iter().copied());
            let out = collect_vec(&[ch, cw, c], rows)?;
            return ctx.set_output(0, Pixels::U8(out, [ch, cw, c]).into_tensor(DataType::UInt8)?);
        }
        let p = decode_jpeg(&bytes, self.channels, &|m| ctx.error(m))?;
        ctx.set_output(0, p.into_tensor(DataType::UInt8)?)
    }
}

pub(crate) fn decode_and_crop_jpeg_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let channels = decode_jpeg_channels(node)?;
    Ok(Box::new(DecodeJpeg { channels, crop: true }))
}

pub(crate) fn decode_jpeg_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let channels = decode_jpeg_channels(node)?;
    Ok(Box::new(DecodeJpeg { channels, crop: false }))
}

/// The `channels` of a JPEG decoder node (0, 1 or 3), its `ratio` checked (1 only).
fn decode_jpeg_channels(node: &NodeDef) -> Result<usize, Status> {
    let channels = match node.attr_int("channels")? {
        c @ (0 | 1 | 3) => c as usize,
        c => return Err(node.node_error(format!("channels must be 0, 1, or 3, got {c}"))),
    };
    match node.attr_int("ratio")? {
        1 => {}
        r @ (2 | 4 | 8) => {
            return Err(Status::unimplemented(format!(
                "node '{}' (op {}): ratio {r} (downscaled JPEG decoding) is not supported by ferroflow yet",
                node.name, node.op
            ))
            .with_node(&node.name))
        }
        r => return Err(node.node_error(format!("ratio must be 1, 2, 4, or 8, got {r}"))),
    }
    Ok(channels)
}

op_kernel! {
    struct ExtractJpegShape { out: DataType }
    fn compute(&self, ctx) {
        let bytes = contents(ctx)?;
        let s = jpeg_shape(&bytes, &|m| ctx.error(m))?;
        let t = match self.out {
            DataType::Int64 => Tensor::vec(s.iter().map(|&d| d as i64).collect::<Vec<_>>()),
            _ => Tensor::vec(s.iter().map(|&d| d as i32).collect::<Vec<_>>()),
        };
        ctx.set_output(0, t)
    }
}

pub(crate) fn extract_jpeg_shape_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let out = node.attr_type("output_type")?;
    if !matches!(out, DataType::Int32 | DataType::Int64) {
        return Err(node.node_error(format!("output_type must be int32 or int64, got {out}")));
    }
    Ok(Box::new(ExtractJpegShape { out }))
}

struct EncodeJpeg {
    format: String,
    quality: u8,
    progressive: bool,
    optimize: bool,
    chroma_downsampling: bool,
    density: jpeg_encoder::Density,
    xmp: Vec<u8>,
    /// `EncodeJpegVariableQuality`: the quality is input 1 (a scalar int32 in [0, 100]).
    variable_quality: bool,
}

/// The scalar quality input of `EncodeJpegVariableQuality`.
fn quality_input(ctx: &OpContext) -> Result<u8, Status> {
    let t = ctx.input(1)?;
    if t.rank() != 0 || t.dtype() != DataType::Int32 {
        return Err(ctx.error(format!("quality must be scalar int32: {} {}", t.dtype(), t.shape())));
    }
    let q = t.as_slice::<i32>()?[0];
    if !(0..=100).contains(&q) {
        return Err(ctx.error(format!("quality must be in [0,100], got {q}")));
    }
    Ok(q.max(1) as u8)
}

impl OpKernel for EncodeJpeg {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (img, [h, w, c]) = image_to_encode(ctx)?;
        if h > MAX_SIDE || w > MAX_SIDE {
            return Err(ctx.error(format!("image too large to encode as JPEG: {}", img.shape())));
        }
        let color = match (self.format.as_str(), c) {
            ("", 1) | ("grayscale", 1) => jpeg_encoder::ColorType::Luma,
            ("", 3) | ("rgb", 3) => jpeg_encoder::ColorType::Rgb,
            (f, c) => {
                let want = match f {
                    "grayscale" => "1",
                    "rgb" => "3",
                    _ => "1 or 3",
                };
                return Err(ctx.error(format!("image must have {want} channels for format '{f}', got {c}")));
            }
        };
        let data = img.as_slice::<u8>().map_err(|_| ctx.error(format!("image must be uint8, got {}", img.dtype())))?;
        if h == 0 || w == 0 {
            return Err(
                ctx.error(format!("image must have non-zero height and width to encode as JPEG, got {}", img.shape()))
            );
        }
        let quality = if self.variable_quality { quality_input(ctx)? } else { self.quality };
        let mut out = Vec::new();
        let mut enc = jpeg_encoder::Encoder::new(&mut out, quality);
        enc.set_progressive(self.progressive);
        enc.set_optimized_huffman_tables(self.optimize);
        enc.set_density(self.density);
        enc.set_sampling_factor(if self.chroma_downsampling {
            jpeg_encoder::SamplingFactor::F_2_2
        } else {
            jpeg_encoder::SamplingFactor::F_1_1
        });
        let map = |e: jpeg_encoder::EncodingError| ctx.error(format!("JPEG encoding failed: {e}"));
        if !self.xmp.is_empty() {
            let mut seg = b"http://ns.adobe.com/xap/1.0/\0".to_vec();
            seg.extend_from_slice(&self.xmp);
            enc.add_app_segment(1, &seg).map_err(map)?;
        }
        enc.encode(data, w as u16, h as u16, color).map_err(map)?;
        set_string(ctx, out)
    }
}

pub(crate) fn encode_jpeg_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let format = node.attr_string("format")?;
    if !matches!(format.as_str(), "" | "grayscale" | "rgb") {
        return Err(node.node_error(format!("format must be '', 'grayscale' or 'rgb', got '{format}'")));
    }
    let quality = node.attr_int("quality")?;
    if !(0..=100).contains(&quality) {
        return Err(node.node_error(format!("quality must be in [0,100], got {quality}")));
    }
    let dens = |n: &str| -> Result<u16, Status> {
        let v = node.attr_int(n)?;
        u16::try_from(v).map_err(|_| node.node_error(format!("{n} must be in [0, 65535], got {v}")))
    };
    let (x, y) = (dens("x_density")?, dens("y_density")?);
    let density = match node.attr_string("density_unit")?.as_str() {
        "in" => jpeg_encoder::Density::Inch { x, y },
        "cm" => jpeg_encoder::Density::Centimeter { x, y },
        u => return Err(node.node_error(format!("density_unit must be 'in' or 'cm', got '{u}'"))),
    };
    Ok(Box::new(EncodeJpeg {
        format,
        quality: quality.max(1) as u8,
        progressive: node.attr_bool("progressive")?,
        optimize: node.attr_bool("optimize_size")?,
        chroma_downsampling: node.attr_bool("chroma_downsampling")?,
        density,
        xmp: node.attr_string("xmp_metadata")?.into_bytes(),
        variable_quality: false,
    }))
}

/// `EncodeJpegVariableQuality`: `EncodeJpeg`'s defaults (format from the channels, 4:2:0
/// chroma, 300 dpi, baseline, standard tables).
pub(crate) fn encode_jpeg_variable_quality_factory(_: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(EncodeJpeg {
        format: String::new(),
        quality: 95,
        progressive: false,
        optimize: false,
        chroma_downsampling: true,
        density: jpeg_encoder::Density::Inch { x: 300, y: 300 },
        xmp: Vec::new(),
        variable_quality: true,
    }))
}
