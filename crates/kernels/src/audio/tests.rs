//! Unit tests of the audio kernels: exact WAV bytes and samples, TensorFlow's header
//! errors, spectrogram values of known windows, and the MFCC pieces.

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, Code, Status, Tensor};

use super::mfcc::{Dct, MelFilterbank};
use super::spectrogram::{fft_length, frame_count, periodic_hann};
use super::wav::{decode, encode, to_i16};
use crate::testutil::{node, run_kernel};

fn run(op: &str, attrs: &[(&str, AttrValue)], inputs: Vec<Tensor>, outputs: usize) -> Result<Vec<Tensor>, Status> {
    run_kernel(node(op, attrs), inputs, outputs)
}

fn matrix(rows: usize, cols: usize, v: &[f32]) -> Tensor {
    Tensor::new(vec![rows, cols], v.to_vec()).unwrap()
}

fn decode_attrs(channels: i64, samples: i64) -> [(&'static str, AttrValue); 2] {
    [("desired_channels", attr::int(channels)), ("desired_samples", attr::int(samples))]
}

/// A WAV file of 16-bit `data` with the given header fields and `extra` chunks before
/// `fmt `.
fn wav(channels: u16, rate: u32, bits: u16, format_size: u32, extra: &[u8], data: &[u8]) -> Vec<u8> {
    let frame = (bits * channels).div_ceil(8);
    let mut body = b"WAVE".to_vec();
    body.extend_from_slice(extra);
    body.extend_from_slice(b"fmt ");
    body.extend_from_slice(&format_size.to_le_bytes());
    body.extend_from_slice(&1u16.to_le_bytes());
    body.extend_from_slice(&channels.to_le_bytes());
    body.extend_from_slice(&rate.to_le_bytes());
    body.extend_from_slice(&(rate * u32::from(frame)).to_le_bytes());
    body.extend_from_slice(&frame.to_le_bytes());
    body.extend_from_slice(&bits.to_le_bytes());
    if format_size == 18 {
        body.extend_from_slice(&[0, 0]);
    }
    body.extend_from_slice(b"data");
    body.extend_from_slice(&(data.len() as u32).to_le_bytes());
    body.extend_from_slice(data);
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend(body);
    out
}

fn pcm(v: &[i16]) -> Vec<u8> {
    v.iter().flat_map(|s| s.to_le_bytes()).collect()
}

#[test]
fn encode_writes_tensorflows_bytes() {
    // TensorFlow 2.21's EncodeWav of [[0.5, -0.5], [1.5, -2.0], [0.25, 0.0]] at 16 kHz.
    let want = "524946463000000057415645666d74201000000001000200803e000000fa000004001000\
                646174610c000000004000c0ff7f008000200000";
    let out = run("EncodeWav", &[], vec![matrix(3, 2, &[0.5, -0.5, 1.5, -2.0, 0.25, 0.0]), Tensor::scalar(16000)], 1)
        .unwrap();
    let bytes = out[0].as_slice::<Vec<u8>>().unwrap()[0].clone();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, want);
    // Rounding halves away from zero, clamping, and NaN as 0.
    let s = 1.0 / 32768.0;
    let got: Vec<i16> = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.5 * s, 1.5 * s, -0.5 * s, -1.5 * s, 0.49 * s]
        .iter()
        .map(|&x| to_i16(x))
        .collect();
    assert_eq!(got, [0, 32767, -32768, 1, 2, -1, -2, 0]);
    // No frames is a header alone.
    assert_eq!(encode(&[], 10, 2, 0).unwrap().len(), 44);
}

#[test]
fn decode_pads_crops_and_duplicates_channels() {
    let file = wav(2, 16000, 16, 16, &[], &pcm(&[16384, -16384, 32767, -32768, 8192, 0]));
    let contents = || vec![Tensor::scalar(file.clone())];
    let out = run("DecodeWav", &decode_attrs(-1, -1), contents(), 2).unwrap();
    assert_eq!(out[0].dims(), &[3, 2]);
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[0.5, -0.5, 32767.0 / 32768.0, -1.0, 0.25, 0.0]);
    assert_eq!(out[1].scalar_value::<i32>().unwrap(), 16000);
    // Three channels (the last one repeated) and five samples (zero-padded).
    let out = run("DecodeWav", &decode_attrs(3, 5), contents(), 2).unwrap();
    assert_eq!(out[0].dims(), &[5, 3]);
    let v = out[0].as_slice::<f32>().unwrap();
    assert_eq!(&v[..9], &[0.5, -0.5, -0.5, 32767.0 / 32768.0, -1.0, -1.0, 0.25, 0.0, 0.0]);
    assert!(v[9..].iter().all(|&x| x == 0.0));
    // One channel, cropped to one sample; and empty outputs.
    let out = run("DecodeWav", &decode_attrs(1, 1), contents(), 2).unwrap();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[0.5]);
    assert_eq!(run("DecodeWav", &decode_attrs(0, -1), contents(), 2).unwrap()[0].dims(), &[3, 0]);
    assert_eq!(run("DecodeWav", &decode_attrs(-1, 0), contents(), 2).unwrap()[0].dims(), &[0, 2]);
}

#[test]
fn decode_walks_chunks_as_tensorflow_does() {
    let data = pcm(&[1000, -1000, 32767, -32768]);
    let want = decode(&wav(1, 8000, 16, 16, &[], &data)).unwrap();
    assert_eq!((want.frames, want.channels, want.sample_rate), (4, 1, 8000));
    // A JUNK chunk before `fmt `, the 18-byte format chunk, chunks after the data (even
    // one claiming more bytes than the file has).
    let junk = [b"JUNK".as_slice(), &3u32.to_le_bytes(), b"abc"].concat();
    assert_eq!(decode(&wav(1, 8000, 16, 16, &junk, &data)).unwrap(), want);
    assert_eq!(decode(&wav(1, 8000, 16, 18, &[], &data)).unwrap(), want);
    let mut tail = wav(1, 8000, 16, 16, &[], &data);
    tail.extend_from_slice(b"LIST");
    tail.extend_from_slice(&200u32.to_le_bytes());
    tail.extend_from_slice(b"ab");
    assert_eq!(decode(&tail).unwrap(), want);
    // An odd-sized data chunk: whole frames are read, then the rest is too short a chunk.
    let e = decode(&wav(2, 8000, 16, 16, &[], &data[..6])).unwrap_err();
    assert_eq!(e.message, "Data too short when trying to read string");
}

#[test]
fn bad_files_are_tensorflows_invalid_arguments() {
    let data = pcm(&[1, 2, 3, 4]);
    let good = wav(1, 8000, 16, 16, &[], &data);
    let with = |at: usize, bytes: &[u8]| {
        let mut f = good.clone();
        f[at..at + bytes.len()].copy_from_slice(bytes);
        f
    };
    let mut two_data = good.clone();
    two_data.extend_from_slice(b"data\x02\x00\x00\x00ab");
    let mut huge = good.clone();
    huge.extend_from_slice(b"LIST\x00\x00\x00\x80");
    let junk_past_end = [b"JUNK".as_slice(), &300u32.to_le_bytes()].concat();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (Vec::new(), "Data too short when trying to read string"),
        (with(0, b"RIFX"), "Header mismatch: Expected RIFF but found RIFX"),
        (with(8, b"WAVX"), "Header mismatch: Expected WAVE but found WAVX"),
        (with(12, b"LIST"), "Unexpected field LIST"),
        (good[..good.len() - 1].to_vec(), "Data too short when trying to read string"),
        (good[..30].to_vec(), "Data too short when trying to read string"),
        (good[..36].to_vec(), "No data chunk found in WAV"),
        (wav(1, 8000, 8, 16, &[], &data), "Can only read 16-bit WAV files, but received 8"),
        (wav(1, 8000, 24, 16, &[], &data), "Can only read 16-bit WAV files, but received 24"),
        (with(20, &3u16.to_le_bytes()), "Bad audio format for WAV: Expected 1 (PCM), but got3"),
        (with(16, &20u32.to_le_bytes()), "Bad format chunk size for WAV: Expected 16 or 18, but got20"),
        (with(22, &0u16.to_le_bytes()), "Bad number of channels for WAV: Expected at least 1, but got 0"),
        (with(32, &4u16.to_le_bytes()), "Bad bytes per sample in WAV header: Expected 2 but got 4"),
        (
            with(28, &5u32.to_le_bytes()),
            "Bad bytes per second in WAV header: Expected 16000 but got 5 (sample_rate=8000, bytes_per_sample=2)",
        ),
        (wav(1, 8000, 16, 16, &junk_past_end, &data), "Data too short when trying to read string"),
        (two_data, "More than one data chunk found in WAV"),
        (huge, "WAV data chunk 'LIST' is too large: 2147483648 bytes, but the limit is 2147483647"),
    ];
    for (file, want) in cases {
        let e = run("DecodeWav", &decode_attrs(-1, -1), vec![Tensor::scalar(file)], 2).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument, "{want}: {e}");
        assert!(e.message.ends_with(want) && e.node().is_some(), "{want}: {e}");
    }
}

/// An op, its attrs and inputs, and the error message it must give.
type Case<'a> = (&'a str, Vec<(&'a str, AttrValue)>, Vec<Tensor>, &'a str);

#[test]
fn bad_attrs_and_inputs_are_invalid_arguments() {
    let file = wav(1, 8000, 16, 16, &[], &pcm(&[1, 2]));
    let audio = || matrix(2, 1, &[0.0, 0.1]);
    let spec = || Tensor::new(vec![1, 2, 5], vec![1.0f32; 10]).unwrap();
    let spectrogram = |w: i64, s: i64| {
        [("window_size", attr::int(w)), ("stride", attr::int(s)), ("magnitude_squared", attr::bool(false))]
    };
    let mfcc = |fb: i64, dct: i64, lower: f32| {
        [
            ("upper_frequency_limit", attr::float(4000.0)),
            ("lower_frequency_limit", attr::float(lower)),
            ("filterbank_channel_count", attr::int(fb)),
            ("dct_coefficient_count", attr::int(dct)),
        ]
    };
    let b = |v: Vec<u8>| Tensor::scalar(v);
    let s = |v: i32| Tensor::scalar(v);
    let cases: Vec<Case> = vec![
        ("DecodeWav", decode_attrs(-2, -1).to_vec(), vec![b(file.clone())], "desired_channels must be >= -1, got -2"),
        ("DecodeWav", decode_attrs(-1, -2).to_vec(), vec![b(file.clone())], "desired_samples must be >= -1, got -2"),
        ("DecodeWav", decode_attrs(-5, -1).to_vec(), vec![b(b"xx".to_vec())], "Data too short"),
        ("DecodeWav", decode_attrs(1 << 33, -1).to_vec(), vec![b(file.clone())], "out of range for an int32"),
        (
            "DecodeWav",
            decode_attrs(-1, -1).to_vec(),
            vec![Tensor::new(vec![1], vec![file]).unwrap()],
            "contents must be scalar, got shape [1]",
        ),
        ("EncodeWav", vec![], vec![audio(), s(-1)], "sample_rate must be in (0, 2^32), got: 18446744073709551615"),
        ("EncodeWav", vec![], vec![audio(), s(0)], "sample_rate must be in (0, 2^32), got: 0"),
        ("EncodeWav", vec![], vec![matrix(2, 0, &[]), s(10)], "num_channels must be in (0, 2^16), got: 0"),
        (
            "EncodeWav",
            vec![],
            vec![Tensor::new(vec![2], vec![0f32; 2]).unwrap(), s(10)],
            "audio must be 2-dimensional[2]",
        ),
        (
            "EncodeWav",
            vec![],
            vec![audio(), Tensor::new(vec![1], vec![10]).unwrap()],
            "Input sample_rate should be a scalar tensor, got [1] instead.",
        ),
        (
            "AudioSpectrogram",
            spectrogram(1, 1).to_vec(),
            vec![audio()],
            "initialization failed for window size 1 and stride 1",
        ),
        ("AudioSpectrogram", spectrogram(-1, 1).to_vec(), vec![audio()], "failed for window size -1 and stride 1"),
        ("AudioSpectrogram", spectrogram(4, 0).to_vec(), vec![audio()], "failed for window size 4 and stride 0"),
        (
            "AudioSpectrogram",
            spectrogram(1, 0).to_vec(),
            vec![Tensor::new(vec![2], vec![0f32; 2]).unwrap()],
            "input must be 2-dimensional[2]",
        ),
        ("AudioSpectrogram", spectrogram(1 << 33, 1).to_vec(), vec![audio()], "Attr window_size has value 8589934592"),
        ("Mfcc", mfcc(40, 13, 20.0).to_vec(), vec![audio(), s(8000)], "spectrogram must be 3-dimensional[2,1]"),
        (
            "Mfcc",
            mfcc(40, 13, 20.0).to_vec(),
            vec![spec(), Tensor::new(vec![1], vec![8000]).unwrap()],
            "got [1] instead",
        ),
        (
            "Mfcc",
            mfcc(0, 13, 20.0).to_vec(),
            vec![spec(), s(8000)],
            "Mfcc initialization failed for channel count 5, sample rate 8000 and filterbank_channel_count 0",
        ),
        ("Mfcc", mfcc(40, 13, 20.0).to_vec(), vec![spec(), s(0)], "sample rate 0 and filterbank_channel_count 40"),
        ("Mfcc", mfcc(5, 6, 20.0).to_vec(), vec![spec(), s(8000)], "initialization failed"),
        ("Mfcc", mfcc(5, 0, 20.0).to_vec(), vec![spec(), s(8000)], "initialization failed"),
        ("Mfcc", mfcc(5, 2, -1.0).to_vec(), vec![spec(), s(8000)], "initialization failed"),
        ("Mfcc", mfcc(5, 2, 5000.0).to_vec(), vec![spec(), s(8000)], "initialization failed"),
        ("Mfcc", mfcc(5, 2, f32::NAN).to_vec(), vec![spec(), s(8000)], "initialization failed"),
        (
            "Mfcc",
            mfcc(5, 2, 20.0).to_vec(),
            vec![Tensor::new(vec![1, 2, 1], vec![1f32; 2]).unwrap(), s(8000)],
            "channel count 1",
        ),
    ];
    for (op, attrs, inputs, want) in cases {
        let e = run(op, &attrs, inputs, if op == "DecodeWav" { 2 } else { 1 }).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument, "{op}: {e}");
        assert!(e.message.contains(want) && e.message.contains(op), "{op}: {e} (want {want})");
    }
    // A DCT too large for memory is refused before anything is allocated.
    let huge = i64::from(i32::MAX);
    let e = run("Mfcc", &mfcc(huge, huge, 20.0), vec![spec(), s(8000)], 1).unwrap_err();
    assert_eq!(e.code, Code::ResourceExhausted, "{e}");
}

#[test]
fn spectrogram_of_a_constant_is_the_windows_spectrum() {
    assert_eq!((fft_length(2), fft_length(3), fft_length(256), fft_length(257)), (2, 4, 256, 512));
    assert_eq!((frame_count(10, 4, 3), frame_count(3, 4, 1), frame_count(4, 4, 9)), (3, 0, 1));
    let hann = periodic_hann(4);
    assert!(hann.iter().zip([0.0, 0.5, 1.0, 0.5]).all(|(a, b)| (a - b).abs() < 1e-15), "{hann:?}");
    // Window 4 over ones: the spectrum of [0, .5, 1, .5] is [2, -1, 0]; every frame alike,
    // in both channels (the second one doubled).
    let x: Vec<f32> = (0..10).flat_map(|_| [1.0, 2.0]).collect();
    let attrs =
        |squared| [("window_size", attr::int(4)), ("stride", attr::int(3)), ("magnitude_squared", attr::bool(squared))];
    let out = run("AudioSpectrogram", &attrs(false), vec![matrix(10, 2, &x)], 1).unwrap();
    assert_eq!(out[0].dims(), &[2, 3, 3]);
    let v = out[0].as_slice::<f32>().unwrap();
    let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(p, q)| (p - q).abs() < 1e-6);
    assert!(
        close(v, &[2.0, 1.0, 0.0, 2.0, 1.0, 0.0, 2.0, 1.0, 0.0, 4.0, 2.0, 0.0, 4.0, 2.0, 0.0, 4.0, 2.0, 0.0]),
        "{v:?}"
    );
    let out = run("AudioSpectrogram", &attrs(true), vec![matrix(10, 2, &x)], 1).unwrap();
    assert!(close(&out[0].as_slice::<f32>().unwrap()[..3], &[4.0, 1.0, 0.0]));
    // Window 3 pads to 4: the spectrum of [0, .75, .75, 0] has squared magnitudes
    // [2.25, 1.125, 0].
    let w3 = [("window_size", attr::int(3)), ("stride", attr::int(1)), ("magnitude_squared", attr::bool(true))];
    let out = run("AudioSpectrogram", &w3, vec![matrix(3, 1, &[1.0; 3])], 1).unwrap();
    assert!(close(out[0].as_slice::<f32>().unwrap(), &[2.25, 1.125, 0.0]));
    // Too short for a window: no frames.
    assert_eq!(run("AudioSpectrogram", &w3, vec![matrix(2, 3, &[0.0; 6])], 1).unwrap()[0].dims(), &[3, 0, 3]);
}

#[test]
fn mel_filterbank_and_dct_pieces() {
    // The DCT of a constant has only its first coefficient: sqrt(2 / n) * n * c.
    let dct = Dct::new(8, 3).unwrap();
    let c = dct.compute(&[0.5; 8]);
    assert!((c[0] - 0.25f64.sqrt() * 8.0 * 0.5).abs() < 1e-12 && c[1].abs() < 1e-12 && c[2].abs() < 1e-12, "{c:?}");
    // Missing inputs count as zeros.
    assert_eq!(dct.compute(&[]), [0.0; 3]);
    assert!(Dct::new(3, 4).is_none() && Dct::new(3, 0).is_none());
    // Every used bin's magnitude is split between two neighbouring channels: the outputs
    // add up to the magnitudes of the used bins, except the halves that fall off either end.
    let bank = MelFilterbank::new(129, 16000.0, 10, 20.0, 4000.0).unwrap();
    let ones = bank.compute(&[1.0; 129]);
    assert_eq!(ones.len(), 10);
    assert!(ones.iter().all(|&v| v > 0.5), "{ones:?}");
    let four = bank.compute(&[4.0; 129]);
    assert!(ones.iter().zip(&four).all(|(a, b)| (2.0 * a - b).abs() < 1e-12));
    // An upper limit above the spectrum's last bin: TensorFlow skips the filterbank.
    assert!(MelFilterbank::new(5, 6000.0, 3, 20.0, 4000.0).unwrap().compute(&[1.0; 5]).is_empty());
    assert!(MelFilterbank::new(5, 8000.0, 3, 20.0, f64::NAN).unwrap().compute(&[1.0; 5]).is_empty());
    assert!(MelFilterbank::new(1, 8000.0, 3, 20.0, 4000.0).is_none());
    // So the MFCCs are zeros; negative powers give NaN.
    let mfcc = |rate: i32, v: f32| {
        let attrs = [
            ("upper_frequency_limit", attr::float(4000.0)),
            ("lower_frequency_limit", attr::float(20.0)),
            ("filterbank_channel_count", attr::int(3)),
            ("dct_coefficient_count", attr::int(2)),
        ];
        let spec = Tensor::new(vec![1, 2, 5], vec![v; 10]).unwrap();
        run("Mfcc", &attrs, vec![spec, Tensor::scalar(rate)], 1).unwrap().remove(0)
    };
    let zeros = mfcc(6000, 1.0);
    assert_eq!((zeros.dims(), zeros.as_slice::<f32>().unwrap()), (&[1usize, 2, 2][..], &[0.0f32; 4][..]));
    assert!(mfcc(8000, -1.0).as_slice::<f32>().unwrap().iter().all(|v| v.is_nan()));
    // A silent frame: every filter at the floor, log(1e-12) * sqrt(2 / 3) * 3 in the first
    // coefficient.
    let silent = mfcc(8000, 0.0);
    let want = (1e-12f64).ln() * (2.0f64 / 3.0).sqrt() * 3.0;
    assert!((f64::from(silent.as_slice::<f32>().unwrap()[0]) - want).abs() < 1e-4);
}
