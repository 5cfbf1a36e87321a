//! Audio ops (TensorFlow's definitions, shape functions and builders): `DecodeWav` and
//! `EncodeWav` (16-bit PCM WAV files ↔ `[samples, channels]` float audio), and the
//! speech front end `AudioSpectrogram` (`[channels, frames, fft / 2 + 1]`) and `Mfcc`
//! (`[channels, frames, dct_coefficient_count]`).

use ferroflow_core::{attr, NodeAttrs, Status};

use crate::op_def::op;
use crate::ops::array::want_rank;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, Status>;

/// An `int` attr TensorFlow's shape function reads as an `int32`.
fn attr_i32(c: &ShapeCtx, name: &str) -> Result<Option<i64>, Status> {
    let Ok(v) = c.node.attr_int(name) else { return Ok(None) };
    if i32::try_from(v).is_err() {
        return Err(c.error(format!("Attr {name} has value {v} out of range for an int32")));
    }
    Ok(Some(v))
}

/// A dim from a `desired_*` attr: -1 unknown, below that an error.
fn desired_dim(c: &ShapeCtx, name: &str, what: &str) -> Result<i64, Status> {
    match attr_i32(c, name)? {
        Some(v) if v < -1 => Err(c.error(format!("{what} must be non-negative, got {v}"))),
        Some(v) => Ok(v),
        None => Ok(-1),
    }
}

fn decode_wav_shape(c: &ShapeCtx) -> R {
    want_rank(c, 0, 0)?;
    let channels = desired_dim(c, "desired_channels", "channels")?;
    let samples = desired_dim(c, "desired_samples", "samples")?;
    Ok(vec![Some(vec![samples, channels]), Some(vec![])])
}

fn encode_wav_shape(c: &ShapeCtx) -> R {
    want_rank(c, 0, 2)?;
    want_rank(c, 1, 0)?;
    Ok(vec![Some(vec![])])
}

/// `[channels, frames, 1 + next_power_of_two(window_size) / 2]` of `[samples, channels]`.
fn spectrogram_shape(c: &ShapeCtx) -> R {
    want_rank(c, 0, 2)?;
    let window = attr_i32(c, "window_size")?.unwrap_or(-1);
    let stride = attr_i32(c, "stride")?.unwrap_or(-1);
    if window <= 1 {
        return Err(c.error(format!("window size must be > 1, got {window}")));
    }
    if stride <= 0 {
        return Err(c.error(format!("stride must be strictly positive, got {stride}")));
    }
    let d = c.input(0).unwrap_or_else(|| vec![-1, -1]);
    let (samples, channels) = (d.first().copied().unwrap_or(-1), d.get(1).copied().unwrap_or(-1));
    let frames = match samples {
        s if s < 0 => -1,
        s if s < window => 0,
        s => 1 + (s - window) / stride,
    };
    let bins = 1 + (window as u64).next_power_of_two() as i64 / 2;
    Ok(vec![Some(vec![channels, frames, bins])])
}

fn mfcc_shape(c: &ShapeCtx) -> R {
    want_rank(c, 0, 3)?;
    want_rank(c, 1, 0)?;
    let k = attr_i32(c, "dct_coefficient_count")?.unwrap_or(-1).max(-1);
    let d = c.input(0).unwrap_or_else(|| vec![-1; 3]);
    let dim = |i: usize| d.get(i).copied().unwrap_or(-1);
    Ok(vec![Some(vec![dim(0), dim(1), k])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("DecodeWav")
            .input("contents: string")
            .output("audio: float")
            .output("sample_rate: int32")
            .attr("desired_channels: int = -1")
            .attr("desired_samples: int = -1")
            .shape_fn(decode_wav_shape)
            .build(),
    );
    r.add(
        op("EncodeWav")
            .input("audio: float")
            .input("sample_rate: int32")
            .output("contents: string")
            .shape_fn(encode_wav_shape)
            .build(),
    );
    r.add(
        op("AudioSpectrogram")
            .input("input: float")
            .output("spectrogram: float")
            .attr("window_size: int")
            .attr("stride: int")
            .attr("magnitude_squared: bool = false")
            .shape_fn(spectrogram_shape)
            .build(),
    );
    r.add(
        op("Mfcc")
            .input("spectrogram: float")
            .input("sample_rate: int32")
            .output("output: float")
            .attr("upper_frequency_limit: float = 4000")
            .attr("lower_frequency_limit: float = 20")
            .attr("filterbank_channel_count: int = 40")
            .attr("dct_coefficient_count: int = 13")
            .shape_fn(mfcc_shape)
            .build(),
    );
}

/// `DecodeWav`: the `[samples, channels]` float audio (samples / 32768) of a 16-bit PCM
/// WAV file and its sample rate; `desired_channels` / `desired_samples` (-1: the file's)
/// repeat the last channel or drop extra ones, and zero-pad or crop the samples.
pub fn decode_wav(s: &Scope, contents: Output, desired_channels: i64, desired_samples: i64) -> (Output, Output) {
    let o = s
        .op("DecodeWav")
        .input(contents)
        .attr("desired_channels", attr::int(desired_channels))
        .attr("desired_samples", attr::int(desired_samples))
        .build();
    (o.output(0), o.output(1))
}

/// `EncodeWav`: a 16-bit PCM WAV file of `[samples, channels]` float audio (clamped to
/// [-1, 1)) at the scalar int32 `sample_rate`.
pub fn encode_wav(s: &Scope, audio: Output, sample_rate: Output) -> Output {
    s.op("EncodeWav").input(audio).input(sample_rate).build().output(0)
}

/// `AudioSpectrogram`: Hann-windowed FFT magnitudes (squared with `magnitude_squared`) of
/// windows of `window_size` samples `stride` apart, `[channels, frames, bins]`.
pub fn audio_spectrogram(s: &Scope, input: Output, window_size: i64, stride: i64, magnitude_squared: bool) -> Output {
    let attrs = [
        ("window_size", attr::int(window_size)),
        ("stride", attr::int(stride)),
        ("magnitude_squared", attr::bool(magnitude_squared)),
    ];
    op_output(s, "AudioSpectrogram", [input], attrs)
}

/// The mel-filterbank and DCT settings of [`mfcc`] (TensorFlow's defaults by `default()`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MfccAttrs {
    pub upper_frequency_limit: f32,
    pub lower_frequency_limit: f32,
    pub filterbank_channel_count: i64,
    pub dct_coefficient_count: i64,
}

impl Default for MfccAttrs {
    fn default() -> MfccAttrs {
        MfccAttrs {
            upper_frequency_limit: 4000.0,
            lower_frequency_limit: 20.0,
            filterbank_channel_count: 40,
            dct_coefficient_count: 13,
        }
    }
}

/// `Mfcc`: the cepstral coefficients of each frame of a squared-magnitude spectrogram
/// `[channels, frames, bins]` of audio at the scalar int32 `sample_rate`.
pub fn mfcc(s: &Scope, spectrogram: Output, sample_rate: Output, a: MfccAttrs) -> Output {
    let attrs = [
        ("upper_frequency_limit", attr::float(a.upper_frequency_limit)),
        ("lower_frequency_limit", attr::float(a.lower_frequency_limit)),
        ("filterbank_channel_count", attr::int(a.filterbank_channel_count)),
        ("dct_coefficient_count", attr::int(a.dct_coefficient_count)),
    ];
    op_output(s, "Mfcc", [spectrogram, sample_rate], attrs)
}

#[cfg(test)]
mod tests {
    use ferroflow_core::DataType;

    use super::*;
    use crate::ops::test_util::ph;
    use crate::ops::{constant, placeholder};

    #[test]
    fn shapes_follow_tensorflow() {
        let s = Scope::new_root();
        let contents = placeholder(&s, DataType::String, Some(&[]));
        let (audio, rate) = decode_wav(&s, contents.clone(), 2, -1);
        assert_eq!(s.graph().shape_of(&audio), Some(vec![-1, 2]));
        assert_eq!(s.graph().shape_of(&rate), Some(vec![]));
        let spec = audio_spectrogram(&s, ph(&s, &[100, 3]), 5, 2, false);
        assert_eq!(s.graph().shape_of(&spec), Some(vec![3, 48, 5]));
        let short = audio_spectrogram(&s, ph(&s, &[10, 2]), 16, 1, true);
        assert_eq!(s.graph().shape_of(&short), Some(vec![2, 0, 9]));
        let unknown = audio_spectrogram(&s, ph(&s, &[-1, -1]), 17, 1, true);
        assert_eq!(s.graph().shape_of(&unknown), Some(vec![-1, -1, 17]));
        let sr = constant(&s, ferroflow_core::Tensor::scalar(16000i32));
        let a = MfccAttrs { dct_coefficient_count: 7, ..MfccAttrs::default() };
        assert_eq!(s.graph().shape_of(&mfcc(&s, spec, sr.clone(), a)), Some(vec![3, 48, 7]));
        let wav = encode_wav(&s, ph(&s, &[4, 2]), sr);
        assert_eq!(s.graph().shape_of(&wav), Some(vec![]));
        s.status().unwrap();
    }

    /// Builds a node whose shape function must fail.
    type Build = fn(&Scope);

    #[test]
    fn bad_attrs_and_ranks_are_errors() {
        let cases: [(&str, Build); 5] = [
            ("window size must be > 1, got 1", |s| {
                audio_spectrogram(s, ph(s, &[10, 2]), 1, 0, false);
            }),
            ("stride must be strictly positive, got 0", |s| {
                audio_spectrogram(s, ph(s, &[10, 2]), 4, 0, false);
            }),
            ("channels must be non-negative, got -2", |s| {
                decode_wav(s, placeholder(s, DataType::String, Some(&[])), -2, -1);
            }),
            ("Shape must be rank 0 but is rank 1", |s| {
                encode_wav(s, ph(s, &[4, 2]), placeholder(s, DataType::Int32, Some(&[1])));
            }),
            ("Shape must be rank 3 but is rank 2", |s| {
                mfcc(s, ph(s, &[4, 2]), placeholder(s, DataType::Int32, Some(&[])), MfccAttrs::default());
            }),
        ];
        crate::ops::test_util::assert_invalid_builds(cases);
    }
}
