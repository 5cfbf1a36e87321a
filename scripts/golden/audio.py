"""Golden values for the audio kernels (DecodeWav, EncodeWav, AudioSpectrogram, Mfcc) from
TensorFlow 2.21's CPU kernels, written to crates/kernels/tests/golden/audio.json, and the
error class TensorFlow raises for each bad input (printed; the golden format has no expected
errors, so crates/kernels/src/audio/tests.rs asserts them). Run it as every generator here
runs (common.py's header says how)."""
import os
import struct

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from common import blob, case_list, print_error_classes, raw_op_case, write  # noqa: E402

R = tf.raw_ops
rng = np.random.RandomState(20260811)
cases, case = case_list(raw_op_case)


def wav(channels, rate, pcm, extra=b"", fmt_size=16, tail=b""):
    """A 16-bit PCM file with `extra` chunks before `fmt ` and `tail` after the data."""
    frame = 2 * channels
    fmt = b"fmt " + struct.pack("<IHHIIHH", fmt_size, 1, channels, rate, rate * frame, frame, 16)
    fmt += b"\0\0" if fmt_size == 18 else b""
    data = np.asarray(pcm, np.int16).astype("<i2").tobytes()
    body = b"WAVE" + extra + fmt + b"data" + struct.pack("<I", len(data)) + data + tail
    return b"RIFF" + struct.pack("<I", len(body)) + body


# EncodeWav: mono and stereo, samples past full scale, halves of a step, NaN and infinities.
step = 1.0 / 32768
special = np.array([[0.5 * step], [1.5 * step], [-0.5 * step], [-2.5 * step], [np.nan], [np.inf], [-np.inf],
                    [1.0], [-1.0], [32767 * step]], np.float32)
encodes = [("mono", rng.uniform(-1.2, 1.2, (17, 1)), 16000), ("stereo", rng.uniform(-1, 1, (9, 2)), 44100),
           ("five_channels", rng.uniform(-1, 1, (4, 5)), 8000), ("special", special, 22050),
           ("no_frames", np.zeros((0, 2)), 16000)]
for name, audio, rate in encodes:
    case("EncodeWav_" + name, "EncodeWav", [("audio", audio.astype(np.float32)), ("sample_rate", np.int32(rate))], {})

# DecodeWav of TensorFlow's own files and of hand-made ones, with channel and length requests.
mono = R.EncodeWav(audio=rng.uniform(-1, 1, (13, 1)).astype(np.float32), sample_rate=16000).numpy()
stereo = R.EncodeWav(audio=rng.uniform(-1, 1, (11, 2)).astype(np.float32), sample_rate=48000).numpy()
pcm3 = rng.randint(-32768, 32768, (7, 3))
junk = b"JUNK" + struct.pack("<I", 5) + b"abcde"
made = [("three_channels", wav(3, 8000, pcm3)),
        ("junk_and_bext_chunks", wav(1, 11025, pcm3[:, 0], extra=junk + b"bext" + struct.pack("<I", 2) + b"xy")),
        ("fmt_18", wav(2, 22050, pcm3[:, :2], fmt_size=18)),
        ("chunks_after_data", wav(1, 8000, pcm3[:, 1], tail=b"LIST" + struct.pack("<I", 4) + b"info"
                                  + b"cue " + struct.pack("<I", 900))),
        ("extremes", wav(1, 8000, [-32768, 32767, 0, 1, -1]))]
for name, contents in [("mono", mono), ("stereo", stereo)] + made:
    for ch, n in [(-1, -1), (1, -1), (2, 20), (3, 5), (-1, 0), (0, -1), (4, 1)]:
        case("DecodeWav_%s_%d_%d" % (name, ch, n), "DecodeWav", [("contents", blob(contents))], {},
             attrs={"desired_channels": ch, "desired_samples": n})

# AudioSpectrogram: power-of-two and other windows, strides below, at and above the window,
# both magnitude settings, audio too short for a window.
audio = rng.uniform(-1, 1, (300, 2)).astype(np.float32)
tone = np.sin(2 * np.pi * 440 * np.arange(1000) / 8000).astype(np.float32)[:, None]
for window, stride in [(2, 1), (3, 2), (8, 4), (16, 5), (32, 32), (100, 30), (64, 100), (255, 20)]:
    for squared in (False, True):
        case("AudioSpectrogram_%d_%d_%d" % (window, stride, squared), "AudioSpectrogram", [("input", audio)], {},
             attrs={"window_size": window, "stride": stride, "magnitude_squared": squared}, rtol=1e-6, atol=1e-6)
case("AudioSpectrogram_tone", "AudioSpectrogram", [("input", tone)], {},
     attrs={"window_size": 256, "stride": 100, "magnitude_squared": True}, rtol=1e-6, atol=1e-6)
case("AudioSpectrogram_short", "AudioSpectrogram", [("input", audio[:20])], {},
     attrs={"window_size": 30, "stride": 1, "magnitude_squared": False})
case("AudioSpectrogram_no_channels", "AudioSpectrogram", [("input", audio[:, :0])], {},
     attrs={"window_size": 4, "stride": 2, "magnitude_squared": False})


def spectrogram(x, window, stride):
    return R.AudioSpectrogram(input=x, window_size=window, stride=stride, magnitude_squared=True).numpy()


# Mfcc of squared-magnitude spectrograms: TensorFlow's defaults at 16 kHz, other limits,
# filterbank sizes and coefficient counts, a filterbank too fine for the spectrum (TensorFlow
# only logs it), an upper limit past the spectrum (zeros) and silence (the log floor).
speech = np.concatenate([tone, rng.uniform(-0.3, 0.3, (1000, 1)).astype(np.float32)], axis=1)
spec512 = spectrogram(speech, 480, 160)
spec256 = spectrogram(speech, 256, 160)
spec64 = spectrogram(speech[:400], 64, 48)
mfccs = [("defaults_16k", spec512, 16000, 4000.0, 20.0, 40, 13),
         ("wide_band", spec512, 16000, 7600.0, 60.0, 64, 20),
         ("few_filters", spec256, 8000, 3800.0, 125.0, 12, 12),
         ("one_coefficient", spec256, 8000, 3000.0, 0.0, 8, 1),
         ("too_many_filters", spec64, 8000, 4000.0, 20.0, 40, 13),
         ("upper_past_spectrum", spec64, 6000, 4000.0, 20.0, 10, 5),
         ("silence", np.zeros((1, 3, 129), np.float32), 8000, 4000.0, 20.0, 20, 6)]
for name, spec, rate, upper, lower, channels, count in mfccs:
    case("Mfcc_" + name, "Mfcc", [("spectrogram", spec), ("sample_rate", np.int32(rate))], {},
         attrs={"upper_frequency_limit": upper, "lower_frequency_limit": lower,
                "filterbank_channel_count": channels, "dct_coefficient_count": count}, rtol=1e-6, atol=1e-5)

write("audio", cases)

good = wav(1, 8000, [1, 2, 3, 4])
print_error_classes([
    ("DecodeWav bad RIFF", lambda: R.DecodeWav(contents=b"RIFX" + good[4:])),
    ("DecodeWav bad WAVE", lambda: R.DecodeWav(contents=good[:8] + b"WAVX" + good[12:])),
    ("DecodeWav truncated data", lambda: R.DecodeWav(contents=good[:-1])),
    ("DecodeWav truncated header", lambda: R.DecodeWav(contents=good[:30])),
    ("DecodeWav no data chunk", lambda: R.DecodeWav(contents=good[:36])),
    ("DecodeWav 8-bit", lambda: R.DecodeWav(contents=good[:34] + struct.pack("<H", 8) + good[36:])),
    ("DecodeWav desired_channels -2", lambda: R.DecodeWav(contents=good, desired_channels=-2)),
    ("EncodeWav sample_rate 0", lambda: R.EncodeWav(audio=np.zeros((2, 1), np.float32), sample_rate=0)),
    ("EncodeWav rank 1", lambda: R.EncodeWav(audio=np.zeros((2,), np.float32), sample_rate=8000)),
    ("AudioSpectrogram window 1", lambda: R.AudioSpectrogram(input=audio, window_size=1, stride=1)),
    ("AudioSpectrogram stride 0", lambda: R.AudioSpectrogram(input=audio, window_size=4, stride=0)),
    ("Mfcc sample_rate 0", lambda: R.Mfcc(spectrogram=spec256, sample_rate=0)),
    ("Mfcc dct > filterbank", lambda: R.Mfcc(spectrogram=spec256, sample_rate=8000, filterbank_channel_count=5,
                                             dct_coefficient_count=6)),
])
