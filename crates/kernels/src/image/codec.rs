//! Shared pieces of the image codec kernels: the scalar `contents` input, the scalar
//! string output, and decoded pixels converted to the requested dtype the way
//! TensorFlow does (8 → 16 bits ×257, 16 → 8 bits by the high byte, float in [0, 1]).

use ferroflow_core::{check_tensor_alloc, DataType, Status, Storage, Tensor};

use crate::array::util::collect_vec;
use crate::OpContext;

/// The image to encode (input 0), which must be 3-D, and its `[height, width, channels]`.
pub(crate) fn image_to_encode(ctx: &OpContext) -> Result<(Tensor, [usize; 3]), Status> {
    let img = ctx.input(0)?;
    let &[h, w, c] = img.dims() else {
        return Err(ctx.error(format!("image must be 3-dimensional, got shape {}", img.shape())));
    };
    Ok((img, [h, w, c]))
}

/// The bytes of the scalar string input 0.
pub(crate) fn contents(ctx: &OpContext) -> Result<Vec<u8>, Status> {
    let t = ctx.input(0)?;
    if t.rank() != 0 {
        return Err(ctx.error(format!("contents must be scalar, got shape {}", t.shape())));
    }
    match t.storage() {
        Storage::Str(v) => Ok(v[0].clone()),
        _ => Err(ctx.error(format!("contents must be a string, got {}", t.dtype()))),
    }
}

/// [`contents`] of a decoder that refuses empty input (TensorFlow's "Input is empty.").
pub(crate) fn nonempty_contents(ctx: &OpContext) -> Result<Vec<u8>, Status> {
    let bytes = contents(ctx)?;
    if bytes.is_empty() {
        return Err(ctx.error("Input is empty."));
    }
    Ok(bytes)
}

/// Sets output 0 to a scalar string.
pub(crate) fn set_string(ctx: &mut OpContext, bytes: Vec<u8>) -> Result<(), Status> {
    ctx.set_output(0, Tensor::scalar(bytes))
}

/// Decoded samples at their own depth, with the output dims.
pub(crate) enum Pixels {
    U8(Vec<u8>, [usize; 3]),
    U16(Vec<u16>, [usize; 3]),
}

impl Pixels {
    /// Adds a leading frame dimension of 1 (DecodeImage's GIF layout).
    pub(crate) fn dims(&self) -> [usize; 3] {
        match self {
            Pixels::U8(_, d) | Pixels::U16(_, d) => *d,
        }
    }

    /// The samples as a tensor of `dtype` (uint8, uint16 or float32) shaped `dims`.
    pub(crate) fn into_tensor_shaped(self, dtype: DataType, dims: Vec<usize>) -> Result<Tensor, Status> {
        check_tensor_alloc(&dims, dtype)?;
        match (self, dtype) {
            (Pixels::U8(v, _), DataType::UInt8) => Tensor::new(dims, v),
            (Pixels::U8(v, _), DataType::UInt16) => {
                let out = collect_vec(&dims, v.into_iter().map(|x| u16::from(x) * 257))?;
                Tensor::new(dims, out)
            }
            (Pixels::U8(v, _), DataType::Float) => {
                let out = collect_vec(&dims, v.into_iter().map(|x| f32::from(x) / 255.0))?;
                Tensor::new(dims, out)
            }
            (Pixels::U16(v, _), DataType::UInt16) => Tensor::new(dims, v),
            (Pixels::U16(v, _), DataType::UInt8) => {
                let out = collect_vec(&dims, v.into_iter().map(|x| (x >> 8) as u8))?;
                Tensor::new(dims, out)
            }
            (Pixels::U16(v, _), DataType::Float) => {
                let out = collect_vec(&dims, v.into_iter().map(|x| f32::from(x) / 65535.0))?;
                Tensor::new(dims, out)
            }
            (_, d) => Err(Status::invalid_argument(format!("images cannot be decoded to {d}"))),
        }
    }

    /// The samples as a `[height, width, channels]` tensor of `dtype`.
    pub(crate) fn into_tensor(self, dtype: DataType) -> Result<Tensor, Status> {
        let d = self.dims().to_vec();
        self.into_tensor_shaped(dtype, d)
    }
}

/// 8-bit samples as `dtype` the way TensorFlow's JPEG, GIF and BMP decoders convert them:
/// uint16 by ×256 (`(65535 + 1) / (255 + 1)`), float32 by × `float(1 / 255)`.
pub(crate) fn eight_bit_tensor(v: Vec<u8>, dims: Vec<usize>, dtype: DataType) -> Result<Tensor, Status> {
    check_tensor_alloc(&dims, dtype)?;
    match dtype {
        DataType::UInt8 => Tensor::new(dims, v),
        DataType::UInt16 => {
            let out = collect_vec(&dims, v.into_iter().map(|x| u16::from(x) * 256))?;
            Tensor::new(dims, out)
        }
        DataType::Float => {
            let scale = (1.0f64 / 255.0) as f32;
            let out = collect_vec(&dims, v.into_iter().map(|x| f32::from(x) * scale))?;
            Tensor::new(dims, out)
        }
        d => Err(Status::invalid_argument(format!("images cannot be decoded to {d}"))),
    }
}
