//! `DecodeGif` (the `gif` crate): every frame drawn over the previous one (frame 0 over
//! black), transparent pixels keeping what is below, as TensorFlow composes them
//! (disposal methods are ignored, like TensorFlow).

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{check_tensor_alloc, DataType, Status, Tensor};

use super::codec::contents;
use crate::OpKernel;

/// The RGB frames `[frames, height, width, 3]` (flat) and their dims.
pub(crate) fn decode_gif(bytes: &[u8], err: &dyn Fn(String) -> Status) -> Result<(Vec<u8>, [usize; 3]), Status> {
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::Indexed);
    let mut dec = opts.read_info(bytes).map_err(|e| err(format!("Failed to decode gif: {e}")))?;
    let (w, h) = (usize::from(dec.width()), usize::from(dec.height()));
    let global = dec.global_palette().map(<[u8]>::to_vec);
    let frame_len = h * w * 3;
    let mut out: Vec<u8> = Vec::new();
    let mut n = 0usize;
    while let Some(f) = dec.read_next_frame().map_err(|e| err(format!("Failed to decode gif: {e}")))? {
        check_tensor_alloc(&[n + 1, h, w, 3], DataType::UInt8)?;
        out.try_reserve(frame_len).map_err(|_| {
            Status::resource_exhausted(format!(
                "OOM when allocating tensor with shape[{},{h},{w},3] and type uint8: the allocator refused",
                n + 1
            ))
        })?;
        if n == 0 {
            out.resize(frame_len, 0);
        } else {
            out.extend_from_within((n - 1) * frame_len..n * frame_len);
        }
        let dst = &mut out[n * frame_len..];
        let palette = f.palette.as_deref().or(global.as_deref()).ok_or_else(|| err("missing color map".to_string()))?;
        let (fl, ft, fw, fh) = (usize::from(f.left), usize::from(f.top), usize::from(f.width), usize::from(f.height));
        for y in ft..(ft + fh).min(h) {
            for x in fl..(fl + fw).min(w) {
                let Some(&idx) = f.buffer.get((y - ft) * fw + (x - fl)) else {
                    return Err(err("Failed to decode gif: truncated frame".to_string()));
                };
                if Some(idx) == f.transparent {
                    continue;
                }
                let p = usize::from(idx) * 3;
                let c = palette.get(p..p + 3).ok_or_else(|| {
                    err(format!("found color index {idx} outside of color map range {}", palette.len() / 3))
                })?;
                dst[(y * w + x) * 3..][..3].copy_from_slice(c);
            }
        }
        n += 1;
    }
    if n == 0 {
        return Err(err("Failed to decode gif: no frames".to_string()));
    }
    Ok((out, [n, h, w]))
}

op_kernel! {
    struct DecodeGif;
    fn compute(&self, ctx) {
        let bytes = contents(ctx)?;
        let (v, [n, h, w]) = decode_gif(&bytes, &|m| ctx.error(m))?;
        ctx.set_output(0, Tensor::new(vec![n, h, w, 3], v)?)
    }
}

pub(crate) fn decode_gif_factory(_: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(DecodeGif))
}
