//! Fake quantization for quantization-aware training (`tf.quantization.fake_quant_*`), as
//! TensorFlow's CPU kernels compute it: `FakeQuantWithMinMaxArgs` (range in attrs),
//! `FakeQuantWithMinMaxVars` (range in scalar tensors, usually variables the model learns),
//! `FakeQuantWithMinMaxVarsPerChannel` (one range per last-dim channel), and their
//! gradients (straight-through inside the nudged range; the Vars forms also give the
//! gradients of the range ends). Inputs are rounded onto `2^num_bits` levels (one fewer
//! with `narrow_range`) of a range nudged so that 0 is exactly representable.

mod kernels;
mod quantize_dequantize;

use crate::KernelRegistry;

pub(crate) fn register(r: &mut KernelRegistry) {
    kernels::register(r);
    quantize_dequantize::register(r);
}

/// A range nudged so that zero falls on a quantization level, and its step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Nudged {
    pub min: f32,
    pub max: f32,
    pub scale: f32,
}

/// TensorFlow's `Nudge`: the range [`min`, `max`] moved onto the grid of `quant_min ..=
/// quant_max` levels whose zero point is the nearest level to where 0 falls.
pub(crate) fn nudge(min: f32, max: f32, quant_min: i32, quant_max: i32) -> Nudged {
    let (qmin, qmax) = (quant_min as f32, quant_max as f32);
    let scale = (max - min) / (qmax - qmin);
    let zero_from_min = qmin - min / scale;
    let zero_point = if zero_from_min < qmin {
        quant_min as u16
    } else if zero_from_min > qmax {
        quant_max as u16
    } else {
        zero_from_min.round() as u16
    };
    let zp = f32::from(zero_point);
    Nudged { min: (qmin - zp) * scale, max: (qmax - zp) * scale, scale }
}

/// `x` clamped to the nudged range and rounded to its nearest level.
#[inline]
pub(crate) fn quantize(x: f32, n: Nudged, inv_scale: f32) -> f32 {
    let clamped = x.min(n.max).max(n.min);
    ((clamped - n.min) * inv_scale + 0.5).floor() * n.scale + n.min
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_a_level_of_the_nudged_range() {
        // [-1, 1] on 256 levels: the step is 2/255 and 0 must be k * step above the minimum.
        let n = nudge(-1.0, 1.0, 0, 255);
        let k = -n.min / n.scale;
        assert!((k - k.round()).abs() < 1e-4, "{n:?}");
        assert_eq!(quantize(0.0, n, 1.0 / n.scale), 0.0);
        // A range that excludes 0 is moved to start (or end) at 0.
        assert_eq!(nudge(0.5, 2.0, 0, 255).min, 0.0);
        assert_eq!(nudge(-2.0, -0.5, 0, 255).max, 0.0);
        // Values outside the range clamp to its ends.
        let n = nudge(-6.0, 6.0, 0, 255);
        assert_eq!(quantize(100.0, n, 1.0 / n.scale), n.max);
        assert_eq!(quantize(-100.0, n, 1.0 / n.scale), n.min);
    }

    #[test]
    fn bad_ranges_and_bits_are_invalid_arguments() {
        use crate::testutil::{node, run_kernel};
        use ferroflow_core::{attr, Code, Tensor};
        let x = || Tensor::new(vec![2, 3], vec![0.5f32, -1.0, 2.0, 3.0, -4.0, 0.0]).unwrap();
        let s = |v: f32| Tensor::scalar(v);
        let v = |v: &[f32]| Tensor::new(vec![v.len()], v.to_vec()).unwrap();
        type Case<'a> = (&'a str, Vec<(&'a str, ferroflow_core::proto::AttrValue)>, Vec<Tensor>, &'a str);
        let cases: Vec<Case> = vec![
            (
                "FakeQuantWithMinMaxArgs",
                vec![("min", attr::float(1.0)), ("max", attr::float(1.0))],
                vec![x()],
                "min has to be smaller than max",
            ),
            (
                "FakeQuantWithMinMaxArgs",
                vec![("num_bits", attr::int(1))],
                vec![x()],
                "num_bits must be between 2 and 16",
            ),
            ("FakeQuantWithMinMaxVars", vec![], vec![x(), v(&[-1.0]), s(1.0)], "`min` must be rank 0 but is rank 1"),
            (
                "FakeQuantWithMinMaxVarsPerChannel",
                vec![],
                vec![x(), v(&[-1.0]), v(&[1.0])],
                "min has incorrect size, expected 3 was 1",
            ),
            (
                "FakeQuantWithMinMaxArgsGradient",
                vec![],
                vec![v(&[1.0]), x()],
                "gradient and input must be the same size",
            ),
        ];
        for (op, attrs, inputs, want) in cases {
            let e = run_kernel(node(op, &attrs), inputs, 1).unwrap_err();
            assert_eq!(e.code, Code::InvalidArgument, "{op}: {e}");
            assert!(e.message.contains(want), "{op}: {e} (want {want})");
        }
    }

    #[test]
    fn vars_gradient_splits_the_incoming_gradient_by_range() {
        use crate::testutil::{node, run_kernel};
        use ferroflow_core::Tensor;
        let x = Tensor::new(vec![4], vec![-3.0f32, -0.5, 0.5, 3.0]).unwrap();
        let g = Tensor::new(vec![4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let out = run_kernel(
            node("FakeQuantWithMinMaxVarsGradient", &[]),
            vec![g, x, Tensor::scalar(-1.0f32), Tensor::scalar(1.0f32)],
            3,
        )
        .unwrap();
        assert_eq!(out[0].as_slice::<f32>().unwrap(), &[0.0, 2.0, 3.0, 0.0]);
        assert_eq!(out[1].as_slice::<f32>().unwrap(), &[1.0]);
        assert_eq!(out[2].as_slice::<f32>().unwrap(), &[4.0]);
    }
}
