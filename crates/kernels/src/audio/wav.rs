//! `DecodeWav` and `EncodeWav`: 16-bit PCM RIFF/WAVE files, parsed and written as
//! TensorFlow's `wav_io` does. Decoding walks the chunks the way TensorFlow does (padding
//! chunks such as `JUNK` or `bext` before `fmt `, any chunk after it, exactly one `data`
//! chunk, no pad bytes after odd-sized chunks) with its `int` offsets and its errors;
//! samples become `s / 32768`. Encoding clamps `round(x * 32768)` (halves away from zero)
//! to int16, NaN giving 0.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{Status, Storage, Tensor};

use super::{attr_i32, sample_rate};
use crate::{KernelRegistry, OpContext, OpKernel};

/// Padding chunks TensorFlow skips between `WAVE` and `fmt `.
const SKIPPED_BEFORE_FMT: [&[u8; 4]; 8] = [b"JUNK", b"bext", b"iXML", b"qlty", b"mext", b"levl", b"link", b"axml"];

/// A decoded file: interleaved samples (`frames * channels` of them) and its header's
/// counts.
#[derive(Debug, PartialEq)]
pub(crate) struct Wav {
    pub samples: Vec<f32>,
    pub frames: u32,
    pub channels: u16,
    pub sample_rate: u32,
}

/// A cursor over the file with TensorFlow's `int` offset and its bounds checks.
struct Reader<'a> {
    data: &'a [u8],
    offset: i32,
}

fn invalid(msg: impl std::fmt::Display) -> Status {
    Status::invalid_argument(msg.to_string())
}

/// TensorFlow's `IncrementOffset`: `old + increment` (truncated to `int`, as C++ stores
/// it), which must stay within `[0, max]`.
fn increment_offset(old: i32, increment: i64, max: usize) -> Result<i32, Status> {
    if old < 0 {
        return Err(invalid(format!("Negative offsets are not allowed: {old}")));
    }
    if increment < 0 {
        return Err(invalid(format!("Negative increment is not allowed: {increment}")));
    }
    if old as usize > max {
        return Err(invalid(format!("Initial offset is outside data range: {old}")));
    }
    let new = (i64::from(old).wrapping_add(increment)) as i32;
    // A negative `int` compared with the `size_t` size is huge: too short as well.
    if new < 0 || new as usize > max {
        return Err(invalid("Data too short when trying to read string"));
    }
    Ok(new)
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], Status> {
        let new = increment_offset(self.offset, n as i64, self.data.len())?;
        let out = self.data.get(self.offset as usize..new as usize).unwrap_or_default();
        self.offset = new;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Status> {
        let b = self.bytes(N)?;
        Ok(b.try_into().unwrap_or([0; N]))
    }

    fn u16(&mut self) -> Result<u16, Status> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, Status> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn expect(&mut self, text: &[u8; 4]) -> Result<(), Status> {
        let found = self.array::<4>()?;
        if &found != text {
            return Err(invalid(format!(
                "Header mismatch: Expected {} but found {}",
                String::from_utf8_lossy(text),
                String::from_utf8_lossy(&found)
            )));
        }
        Ok(())
    }

    /// Whether the offset is before the end (a negative `int` offset is not: it compares
    /// as a huge `size_t`).
    fn more(&self) -> bool {
        self.offset >= 0 && (self.offset as usize) < self.data.len()
    }
}

/// TensorFlow's `DecodeLin16WaveAsFloatVector`.
pub(crate) fn decode(data: &[u8]) -> Result<Wav, Status> {
    let mut r = Reader { data, offset: 0 };
    r.expect(b"RIFF")?;
    r.u32()?; // The file's size, unchecked.
    r.expect(b"WAVE")?;
    let mut id = r.array::<4>()?;
    while &id != b"fmt " {
        if !SKIPPED_BEFORE_FMT.contains(&&id) {
            return Err(invalid(format!("Unexpected field {}", String::from_utf8_lossy(&id))));
        }
        let size = r.u32()?;
        r.offset = increment_offset(r.offset, i64::from(size), data.len())?;
        id = r.array::<4>()?;
    }
    let format_size = r.u32()?;
    if format_size != 16 && format_size != 18 {
        return Err(invalid(format!("Bad format chunk size for WAV: Expected 16 or 18, but got{format_size}")));
    }
    let format = r.u16()?;
    if format != 1 {
        return Err(invalid(format!("Bad audio format for WAV: Expected 1 (PCM), but got{format}")));
    }
    let channels = r.u16()?;
    if channels < 1 {
        return Err(invalid(format!("Bad number of channels for WAV: Expected at least 1, but got {channels}")));
    }
    let sample_rate = r.u32()?;
    let bytes_per_second = r.u32()?;
    let bytes_per_frame = r.u16()?;
    let bits = r.u16()?;
    if bits != 16 {
        return Err(invalid(format!("Can only read 16-bit WAV files, but received {bits}")));
    }
    let want_frame = (u32::from(bits) * u32::from(channels)).div_ceil(8);
    if u32::from(bytes_per_frame) != want_frame {
        return Err(invalid(format!(
            "Bad bytes per sample in WAV header: Expected {want_frame} but got {bytes_per_frame}"
        )));
    }
    let want_second = u32::from(bytes_per_frame).wrapping_mul(sample_rate);
    if bytes_per_second != want_second {
        return Err(invalid(format!(
            "Bad bytes per second in WAV header: Expected {want_second} but got {bytes_per_second} \
             (sample_rate={sample_rate}, bytes_per_sample={bytes_per_frame})"
        )));
    }
    if format_size == 18 {
        // An unused extension size, skipped unread.
        r.offset = r.offset.wrapping_add(2);
    }
    let mut found: Option<(Vec<f32>, u32)> = None;
    while r.more() {
        let id = r.array::<4>()?;
        let size = r.u32()?;
        if size > i32::MAX as u32 {
            return Err(invalid(format!(
                "WAV data chunk '{}' is too large: {size} bytes, but the limit is {}",
                String::from_utf8_lossy(&id),
                i32::MAX
            )));
        }
        if &id != b"data" {
            // `int += uint32` in C++: unsigned arithmetic stored back into the `int`.
            r.offset = (r.offset as u32).wrapping_add(size) as i32;
            continue;
        }
        if found.is_some() {
            return Err(invalid("More than one data chunk found in WAV"));
        }
        let frames = size / u32::from(bytes_per_frame);
        let count = frames.wrapping_mul(u32::from(channels));
        // The samples must all be there before anything is allocated.
        increment_offset(r.offset, 2 * i64::from(count), data.len())?;
        let bytes = r.bytes(2 * count as usize)?;
        let samples =
            bytes.chunks_exact(2).map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) * (1.0 / 32768.0)).collect();
        found = Some((samples, frames));
    }
    let (samples, frames) = found.ok_or_else(|| invalid("No data chunk found in WAV"))?;
    Ok(Wav { samples, frames, channels, sample_rate })
}

/// A float sample as TensorFlow writes it: `round(x * 32768)` clamped to int16 (NaN: 0).
pub(crate) fn to_i16(x: f32) -> i16 {
    // `as` saturates to the int16 range and maps NaN to 0, as the x86 conversion of the
    // clamped float does.
    (x * 32768.0).round() as i16
}

/// TensorFlow's `EncodeAudioAsS16LEWav` of `frames` frames of interleaved samples.
/// `sample_rate` is the op's int32 input, which TensorFlow widens to `size_t`.
pub(crate) fn encode(audio: &[f32], sample_rate: i32, channels: usize, frames: usize) -> Result<Vec<u8>, Status> {
    let rate = sample_rate as i64 as u64;
    if rate == 0 || rate > u64::from(u32::MAX) {
        return Err(invalid(format!("sample_rate must be in (0, 2^32), got: {rate}")));
    }
    if channels == 0 || channels > usize::from(u16::MAX) {
        return Err(invalid(format!("num_channels must be in (0, 2^16), got: {channels}")));
    }
    let samples = frames.saturating_mul(channels);
    let data_size = samples.saturating_mul(2);
    let file_size = data_size.saturating_add(44);
    if file_size > u32::MAX as usize {
        return Err(invalid("Provided channels and frames cannot be encoded as a WAV."));
    }
    let mut out = Vec::with_capacity(file_size);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&((file_size - 8) as u32).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&(channels as u16).to_le_bytes());
    out.extend_from_slice(&(rate as u32).to_le_bytes());
    // Both are stored truncated to their fields, as TensorFlow's `EncodeFixed*` does.
    out.extend_from_slice(&(rate.wrapping_mul(2 * channels as u64) as u32).to_le_bytes());
    out.extend_from_slice(&((2 * channels) as u16).to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&(data_size as u32).to_le_bytes());
    for &x in audio.iter().take(samples) {
        out.extend_from_slice(&to_i16(x).to_le_bytes());
    }
    Ok(out)
}

/// `DecodeWav`.
struct DecodeWav {
    desired_channels: i32,
    desired_samples: i32,
}

fn make_decode(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    Ok(Box::new(DecodeWav {
        desired_channels: attr_i32(n, "desired_channels")?,
        desired_samples: attr_i32(n, "desired_samples")?,
    }))
}

impl OpKernel for DecodeWav {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let t = ctx.input(0)?;
        if t.rank() != 0 {
            return Err(ctx.error(format!("contents must be scalar, got shape {}", t.shape())));
        }
        let contents = match t.storage() {
            Storage::Str(v) => v.first().map(Vec::as_slice).unwrap_or_default(),
            _ => return Err(ctx.error(format!("contents must be a string, got {}", t.dtype()))),
        };
        if contents.len() > i32::MAX as usize {
            return Err(ctx.error(format!("WAV contents are too large for int: {}", contents.len())));
        }
        let wav = decode(contents).map_err(|e| ctx.error(e.message))?;
        if self.desired_channels < -1 {
            return Err(ctx.error(format!("desired_channels must be >= -1, got {}", self.desired_channels)));
        }
        if self.desired_samples < -1 {
            return Err(ctx.error(format!("desired_samples must be >= -1, got {}", self.desired_samples)));
        }
        let samples = if self.desired_samples == -1 { wav.frames as usize } else { self.desired_samples as usize };
        let channels =
            if self.desired_channels == -1 { usize::from(wav.channels) } else { self.desired_channels as usize };
        let dims = [samples, channels];
        let mut out = ferroflow_core::alloc::zeroed::<f32>(&dims).map_err(|e| ctx.error_with(e))?;
        let from = usize::from(wav.channels);
        let last = from.saturating_sub(1);
        if channels > 0 {
            for (row, src) in out.chunks_exact_mut(channels).zip(wav.samples.chunks_exact(from)) {
                for (c, v) in row.iter_mut().enumerate() {
                    *v = src.get(c.min(last)).copied().unwrap_or_default();
                }
            }
        }
        ctx.set_output(0, Tensor::new(dims.to_vec(), out)?)?;
        ctx.set_output(1, Tensor::scalar(wav.sample_rate as i32))
    }
}

op_kernel! {
    /// `EncodeWav`.
    struct EncodeWav;
    fn compute(&self, ctx) {
        let audio = ctx.input(0)?;
        let &[frames, channels] = audio.dims() else {
            return Err(ctx.error(format!("audio must be 2-dimensional{}", audio.shape())));
        };
        let rate = sample_rate(ctx)?;
        if audio.num_elements() >= i32::MAX as usize {
            return Err(ctx.error("Cannot encode audio with >= max int32 elements"));
        }
        let samples = audio.as_slice::<f32>().map_err(|e| ctx.error_with(e))?;
        let bytes = encode(samples, rate, channels, frames).map_err(|e| ctx.error(e.message))?;
        ctx.set_output(0, Tensor::scalar(bytes))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("DecodeWav", make_decode);
    r.add("EncodeWav", |_| Ok(Box::new(EncodeWav)));
}
