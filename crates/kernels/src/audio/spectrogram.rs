//! `AudioSpectrogram`: for each channel of `[samples, channels]` audio, the FFT magnitudes
//! (or squared magnitudes) of windows of `window_size` samples, `stride` apart, each
//! multiplied by a periodic Hann window and zero-padded to the next power of two, as
//! TensorFlow's `Spectrogram` computes them (in double precision, rounded to float; the
//! square root, when asked for, in float). The output is `[channels, frames, fft / 2 + 1]`
//! with `frames = 1 + (samples - window_size) / stride` (0 for short audio).

use std::sync::Arc;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor};
use rayon::prelude::*;
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};

use super::attr_i32;
use crate::{KernelRegistry, OpContext, OpKernel};

/// Outputs with more values than this are computed in parallel.
const PAR_VALUES: usize = 1 << 14;

/// TensorFlow's periodic Hann window of `n` samples.
pub(crate) fn periodic_hann(n: usize) -> Vec<f64> {
    let pi = 1f64.atan() * 4.0;
    (0..n).map(|i| 0.5 - 0.5 * ((2.0 * pi * i as f64) / n as f64).cos()).collect()
}

/// The smallest power of two at least `n` (TensorFlow's `NextPowerOfTwo`).
pub(crate) fn fft_length(window: u64) -> u64 {
    window.max(1).next_power_of_two()
}

/// Frames of `samples` samples: windows of `window` samples that fit, `stride` apart.
pub(crate) fn frame_count(samples: u64, window: u64, stride: u64) -> u64 {
    if samples < window {
        0
    } else {
        1 + (samples - window) / stride.max(1)
    }
}

/// Squared magnitudes of the non-negative frequencies of one windowed frame.
struct FramePlan {
    window: Vec<f64>,
    fft: Arc<dyn Fft<f64>>,
    bins: usize,
    squared: bool,
}

impl FramePlan {
    /// Writes the spectrum of the window of samples `signal` into `row` (`bins` values).
    fn run(&self, signal: &[f32], row: &mut [f32], buf: &mut Vec<Complex<f64>>, scratch: &mut Vec<Complex<f64>>) {
        let n = self.fft.len();
        buf.clear();
        buf.extend(signal.iter().zip(&self.window).map(|(&x, &w)| Complex::new(f64::from(x) * w, 0.0)));
        buf.resize(n, Complex::new(0.0, 0.0));
        scratch.resize(self.fft.get_inplace_scratch_len(), Complex::new(0.0, 0.0));
        self.fft.process_with_scratch(buf, scratch);
        for (o, c) in row.iter_mut().zip(buf.iter().take(self.bins)) {
            let power = (c.re * c.re + c.im * c.im) as f32;
            *o = if self.squared { power } else { power.sqrt() };
        }
    }
}

/// `AudioSpectrogram`.
struct AudioSpectrogram {
    window: i32,
    stride: i32,
    squared: bool,
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(AudioSpectrogram {
        window: attr_i32(n, "window_size")?,
        stride: attr_i32(n, "stride")?,
        squared: n.attr_bool("magnitude_squared")?,
    }))
}

impl OpKernel for AudioSpectrogram {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let x = ctx.input(0)?;
        let &[samples, channels] = x.dims() else {
            return Err(ctx.error(format!("input must be 2-dimensional{}", x.shape())));
        };
        if self.window < 2 || self.stride < 1 {
            return Err(ctx.error(format!(
                "Spectrogram initialization failed for window size {} and stride {}",
                self.window, self.stride
            )));
        }
        let (window, stride) = (self.window as usize, self.stride as usize);
        let fft_len = fft_length(window as u64) as usize;
        let bins = fft_len / 2 + 1;
        let frames = frame_count(samples as u64, window as u64, stride as u64) as usize;
        let dims = [channels, frames, bins];
        let mut out = ferroflow_core::alloc::zeroed::<f32>(&dims).map_err(|e| ctx.error_with(e))?;
        if out.is_empty() {
            return ctx.set_output(0, Tensor::new(dims.to_vec(), out)?);
        }
        let audio = x.as_slice::<f32>().map_err(|e| ctx.error_with(e))?;
        // One channel's samples, contiguous.
        let columns: Vec<Vec<f32>> =
            (0..channels).map(|c| audio.iter().skip(c).step_by(channels).copied().collect()).collect();
        let plan = FramePlan {
            window: periodic_hann(window),
            fft: FftPlanner::new().plan_fft_forward(fft_len),
            bins,
            squared: self.squared,
        };
        let row = |(k, row): (usize, &mut [f32]), bufs: &mut (Vec<Complex<f64>>, Vec<Complex<f64>>)| {
            let (c, f) = (k / frames, k % frames);
            let start = f * stride;
            let signal = columns.get(c).and_then(|s| s.get(start..start + window)).unwrap_or_default();
            plan.run(signal, row, &mut bufs.0, &mut bufs.1);
        };
        if out.len() > PAR_VALUES {
            out.par_chunks_mut(bins).enumerate().for_each_init(|| (Vec::new(), Vec::new()), |b, r| row(r, b));
        } else {
            let mut bufs = (Vec::new(), Vec::new());
            out.chunks_mut(bins).enumerate().for_each(|r| row(r, &mut bufs));
        }
        ctx.set_output(0, Tensor::new(dims.to_vec(), out)?)
    }

    fn is_expensive(&self) -> bool {
        true
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("AudioSpectrogram", make);
}
