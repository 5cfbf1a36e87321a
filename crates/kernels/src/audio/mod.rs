//! Audio kernels of `tf.audio` and of the speech-commands front end, as TensorFlow's CPU
//! kernels compute them: `DecodeWav` / `EncodeWav` (16-bit PCM RIFF/WAVE files and float
//! samples in [-1, 1]), `AudioSpectrogram` (Hann-windowed FFT magnitudes of sliding
//! windows) and `Mfcc` (mel filterbank, log and DCT of a squared-magnitude spectrogram).

mod mfcc;
mod spectrogram;
pub(crate) mod wav;

#[cfg(test)]
mod tests;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use crate::{KernelRegistry, OpContext};

pub(crate) fn register(r: &mut KernelRegistry) {
    wav::register(r);
    spectrogram::register(r);
    mfcc::register(r);
}

/// An `int` attr that TensorFlow's kernel reads as an `int32`: outside that range it is
/// TensorFlow's InvalidArgument.
pub(crate) fn attr_i32(n: &NodeDef, name: &str) -> Result<i32, Status> {
    let v = n.attr_int(name)?;
    i32::try_from(v).map_err(|_| n.node_error(format!("Attr {name} has value {v} out of range for an int32")))
}

/// The `sample_rate` input (input 1) of `EncodeWav` and `Mfcc`: an int32 scalar, else
/// TensorFlow's InvalidArgument.
pub(crate) fn sample_rate(ctx: &OpContext) -> Result<i32, Status> {
    let rate = ctx.input(1)?;
    if rate.rank() != 0 {
        return Err(ctx.error(format!("Input sample_rate should be a scalar tensor, got {} instead.", rate.shape())));
    }
    rate.scalar_value::<i32>().map_err(|e| ctx.error_with(e))
}

/// What x86's `cvttsd2si` gives for a double converted to `int` in C++: the value truncated
/// toward zero, or `INT_MIN` for NaN and values out of range (TensorFlow's filterbank
/// indices are computed so; NaN or huge limits then select no bins).
pub(crate) fn trunc_to_i32(v: f64) -> i32 {
    if v.is_nan() || v >= 2_147_483_648.0 || v <= -2_147_483_649.0 {
        i32::MIN
    } else {
        v as i32
    }
}
