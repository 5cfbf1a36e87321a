//! `Mfcc`: mel-frequency cepstral coefficients of each frame of a squared-magnitude
//! spectrogram `[channels, frames, bins]`, as TensorFlow's `Mfcc` computes them in double
//! precision: the square roots of the bins summed under `filterbank_channel_count`
//! triangular mel filters between the frequency limits (HTK-style, skipping DC), the log of
//! each (floored at 1e-12), then the first `dct_coefficient_count` coefficients of an
//! orthonormal-scaled DCT-II. Filters whose top edge lies above the spectrum's last bin
//! make TensorFlow skip the filterbank, giving zeros.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor};

use super::{attr_i32, sample_rate, trunc_to_i32};
use crate::{KernelRegistry, OpContext, OpKernel};

/// Mel-filterbank outputs below this are raised to it before the log.
const FILTERBANK_FLOOR: f64 = 1e-12;

/// The log of a filterbank output floored as TensorFlow floors it (NaN stays NaN).
fn floored_log(v: f64) -> f64 {
    if v < FILTERBANK_FLOOR {
        FILTERBANK_FLOOR.ln()
    } else {
        v.ln()
    }
}

fn freq_to_mel(freq: f64) -> f64 {
    1127.0 * (freq / 700.0).ln_1p()
}

/// TensorFlow's `MfccMelFilterbank`: each bin in `start..=end` adds `weight * sqrt(bin)`
/// to the channel on its right slope and the rest to the next channel.
#[derive(Debug)]
pub(crate) struct MelFilterbank {
    channels: usize,
    start: i32,
    end: i32,
    /// The channel whose falling slope each bin is on (-1: before the first; -2: unused).
    band: Vec<i32>,
    weights: Vec<f64>,
}

impl MelFilterbank {
    /// The filterbank of a spectrum of `bins` bins, or `None` where TensorFlow's
    /// `Initialize` fails (and for a NaN lower limit, on which TensorFlow reads out of
    /// bounds).
    pub(crate) fn new(bins: usize, sample_rate: f64, channels: i32, lower: f64, upper: f64) -> Option<MelFilterbank> {
        // NaN compares false, as in TensorFlow's checks; a NaN upper limit selects no bins.
        if channels < 1 || sample_rate <= 0.0 || bins < 2 || lower < 0.0 || upper <= lower || lower.is_nan() {
            return None;
        }
        let channels = channels as usize;
        let mel_low = freq_to_mel(lower);
        let spacing = (freq_to_mel(upper) - mel_low) / (channels + 1) as f64;
        let centers: Vec<f64> = (0..=channels).map(|i| mel_low + spacing * (i + 1) as f64).collect();
        let hz_per_bin = 0.5 * sample_rate / (bins - 1) as f64;
        let start = trunc_to_i32(1.5 + lower / hz_per_bin);
        let end = trunc_to_i32(upper / hz_per_bin);
        let used = |i: usize| i as i64 >= i64::from(start) && i as i64 <= i64::from(end);
        let mut band = Vec::with_capacity(bins);
        let mut channel = 0usize;
        for i in 0..bins {
            let mel = freq_to_mel(i as f64 * hz_per_bin);
            if !used(i) {
                band.push(-2);
                continue;
            }
            while channel < channels && centers.get(channel).is_some_and(|&c| c < mel) {
                channel += 1;
            }
            band.push(channel as i32 - 1);
        }
        let weights = band
            .iter()
            .enumerate()
            .map(|(i, &ch)| {
                if !used(i) {
                    return 0.0;
                }
                let mel = freq_to_mel(i as f64 * hz_per_bin);
                let center = |k: usize| centers.get(k).copied().unwrap_or(f64::NAN);
                if ch >= 0 {
                    let ch = ch as usize;
                    (center(ch + 1) - mel) / (center(ch + 1) - center(ch))
                } else {
                    (center(0) - mel) / (center(0) - mel_low)
                }
            })
            .collect();
        Some(MelFilterbank { channels, start, end, band, weights })
    }

    /// The filterbank's outputs for one frame of squared magnitudes; empty where
    /// TensorFlow's `Compute` refuses the frame (its last used bin is beyond it).
    pub(crate) fn compute(&self, frame: &[f64]) -> Vec<f64> {
        // `input.size() <= end_index_` with the `int` index widened to `size_t`.
        if self.end < 0 || frame.len() <= self.end as usize {
            return Vec::new();
        }
        let mut out = vec![0.0; self.channels];
        for i in self.start.max(0) as usize..=self.end as usize {
            let (Some(&x), Some(&w), Some(&ch)) = (frame.get(i), self.weights.get(i), self.band.get(i)) else {
                continue;
            };
            let magnitude = x.sqrt();
            let weighted = magnitude * w;
            if let Some(o) = usize::try_from(ch).ok().and_then(|c| out.get_mut(c)) {
                *o += weighted;
            }
            if let Some(o) = usize::try_from(ch + 1).ok().and_then(|c| out.get_mut(c)) {
                *o += magnitude - weighted;
            }
        }
        out
    }
}

/// TensorFlow's `MfccDct`: `coefficients` rows of `sqrt(2 / n) * cos(i * pi / n * (j +
/// 0.5))` over `n` inputs.
#[derive(Debug)]
pub(crate) struct Dct {
    inputs: usize,
    cosines: Vec<Vec<f64>>,
}

impl Dct {
    pub(crate) fn new(inputs: i32, coefficients: i32) -> Option<Dct> {
        if coefficients < 1 || inputs < 1 || coefficients > inputs {
            return None;
        }
        let n = inputs as usize;
        let norm = (2.0 / n as f64).sqrt();
        let arg = 1f64.atan() * 4.0 / n as f64;
        let cosines = (0..coefficients as usize)
            .map(|i| (0..n).map(|j| norm * (i as f64 * arg * (j as f64 + 0.5)).cos()).collect())
            .collect();
        Some(Dct { inputs: n, cosines })
    }

    /// The coefficients of `input` (its first `inputs` values; missing ones count as 0).
    pub(crate) fn compute(&self, input: &[f64]) -> Vec<f64> {
        let input = input.get(..self.inputs).unwrap_or(input);
        self.cosines.iter().map(|row| row.iter().zip(input).fold(0.0, |s, (c, x)| s + c * x)).collect()
    }
}

/// `Mfcc`.
struct Mfcc {
    upper: f32,
    lower: f32,
    filterbank_channels: i32,
    coefficients: i32,
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(Mfcc {
        upper: n.attr_float("upper_frequency_limit")?,
        lower: n.attr_float("lower_frequency_limit")?,
        filterbank_channels: attr_i32(n, "filterbank_channel_count")?,
        coefficients: attr_i32(n, "dct_coefficient_count")?,
    }))
}

impl OpKernel for Mfcc {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let spec = ctx.input(0)?;
        let &[channels, frames, bins] = spec.dims() else {
            return Err(ctx.error(format!("spectrogram must be 3-dimensional{}", spec.shape())));
        };
        let rate = sample_rate(ctx)?;
        let (fb, k) = (self.filterbank_channels, self.coefficients);
        if fb >= 1 && (1..=fb).contains(&k) {
            // The filter centres and the DCT's cosines: more than memory holds is this
            // task's RESOURCE_EXHAUSTED (TensorFlow's allocation would abort the process).
            ferroflow_core::check_tensor_alloc(&[k as usize + 1, fb as usize + 1], DataType::Double)
                .map_err(|e| ctx.error_with(e))?;
        }
        let bank = MelFilterbank::new(
            bins,
            f64::from(rate),
            self.filterbank_channels,
            f64::from(self.lower),
            f64::from(self.upper),
        );
        let dct = Dct::new(self.filterbank_channels, self.coefficients);
        let (Some(bank), Some(dct)) = (bank, dct) else {
            return Err(ctx.error(format!(
                "Mfcc initialization failed for channel count {bins}, sample rate {rate} and \
                 filterbank_channel_count {}",
                self.filterbank_channels
            )));
        };
        let k = self.coefficients as usize;
        let dims = [channels, frames, k];
        let mut out = ferroflow_core::alloc::zeroed::<f32>(&dims).map_err(|e| ctx.error_with(e))?;
        let input = spec.as_slice::<f32>().map_err(|e| ctx.error_with(e))?;
        let mut frame = Vec::with_capacity(bins);
        if bins > 0 {
            for (row, src) in out.chunks_exact_mut(k).zip(input.chunks_exact(bins)) {
                frame.clear();
                frame.extend(src.iter().map(|&x| f64::from(x)));
                let mel: Vec<f64> = bank.compute(&frame).into_iter().map(floored_log).collect();
                for (o, v) in row.iter_mut().zip(dct.compute(&mel)) {
                    *o = v as f32;
                }
            }
        }
        ctx.set_output(0, Tensor::new(dims.to_vec(), out)?)
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Mfcc", make);
}
