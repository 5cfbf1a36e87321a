//! `DecodeImage`: sniffs the format (PNG, JPEG, GIF, BMP) and decodes it; GIFs are
//! `[frames, height, width, 3]` with `expand_animations`, else like the other formats
//! `[height, width, channels]`. `dtype` uint8, uint16 or float32 (in [0, 1]); 8-bit JPEG,
//! GIF and BMP samples convert as TensorFlow's decoder does (×256, × `float(1 / 255)`).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status};

use super::bmp::{decode_bmp, UNKNOWN_FORMAT};
use super::codec::{eight_bit_tensor, nonempty_contents, Pixels};
use super::jpeg_codec::decode_jpeg;
use super::png_codec::{channels_attr, decode_png};
use crate::OpKernel;

op_kernel! {
    struct DecodeImage { channels: usize, dtype: DataType, expand_animations: bool }
    fn compute(&self, ctx) {
        let bytes = nonempty_contents(ctx)?;
        let err = |m: String| ctx.error(m);
        let t = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            decode_png(&bytes, self.channels, &err)?.into_tensor(self.dtype)?
        } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
            if self.channels == 4 {
                return Err(ctx.error("JPEG does not support 4 channels"));
            }
            match decode_jpeg(&bytes, self.channels, &err)? {
                Pixels::U8(v, d) => eight_bit_tensor(v, d.to_vec(), self.dtype)?,
                p => p.into_tensor(self.dtype)?,
            }
        } else if bytes.starts_with(b"GIF8") {
            if self.channels != 0 && self.channels != 3 {
                return Err(ctx.error(format!("channels must be 0 or 3 for GIF, got {}", self.channels)));
            }
            let (mut frames, [n, h, w]) = super::gif_codec::decode_gif(&bytes, &err)?;
            if self.expand_animations {
                eight_bit_tensor(frames, vec![n, h, w, 3], self.dtype)?
            } else {
                frames.truncate(h * w * 3);
                eight_bit_tensor(frames, vec![h, w, 3], self.dtype)?
            }
        } else if bytes.starts_with(b"BM") {
            let (v, dims) = decode_bmp(&bytes, self.channels, &err)?;
            eight_bit_tensor(v, dims.to_vec(), self.dtype)?
        } else {
            return Err(ctx.error(UNKNOWN_FORMAT));
        };
        ctx.set_output(0, t)
    }
}

pub(crate) fn decode_image_factory(node: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let dtype = node.attr_type("dtype")?;
    if !matches!(dtype, DataType::UInt8 | DataType::UInt16 | DataType::Float) {
        return Err(node.node_error(format!("dtype must be uint8, uint16 or float32, got {dtype}")));
    }
    Ok(Box::new(DecodeImage {
        channels: channels_attr(node)?,
        dtype,
        expand_animations: node.attr_bool("expand_animations")?,
    }))
}
