//! Quantize-then-dequantize (`tf.quantization.quantize_and_dequantize[_v2]`), as TensorFlow
//! 2.21's CPU kernels compute it: `QuantizeAndDequantizeV2` and `V4` (the same kernel; `V4`
//! has a gradient op that zeroes what falls outside the range), `V3` (`num_bits` an input,
//! rounding half to even) and `QuantizeAndDequantizeV4Grad`. The range is given (inputs
//! `input_min`/`input_max`) or the input's own, one for the tensor or one per slice along
//! `axis`; it is scaled onto the signed or unsigned `num_bits` levels keeping 0 exact, the
//! side that limits the scale deciding it and the other end moved to match (TensorFlow's
//! `ComputeQuantizationRange`). float32 and float64, as TensorFlow's CPU kernels.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{DataType, NodeAttrs, Status, Tensor, TensorType};
use rayon::prelude::*;

use crate::{KernelRegistry, OpContext, OpKernel};

mod grad;

/// Elements per parallel chunk.
const CHUNK: usize = 1 << 14;

/// The element types: f32 and f64.
trait Qf: TensorType + Copy + PartialOrd + Send + Sync + std::fmt::Display + 'static {
    const MAX: Self;
    const LOWEST: Self;
    const ZERO: Self;
    const ONE: Self;
    fn from_i64(v: i64) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn round(self, half_up: bool) -> Self;
}

macro_rules! qf {
    ($t:ty) => {
        impl Qf for $t {
            const MAX: Self = <$t>::MAX;
            const LOWEST: Self = <$t>::MIN;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn div(self, o: Self) -> Self {
                self / o
            }
            /// Half up is `floor(x + 0.5)`; half to even is `rint`.
            fn round(self, half_up: bool) -> Self {
                if half_up {
                    (self + 0.5).floor()
                } else {
                    self.round_ties_even()
                }
            }
        }
    };
}
qf!(f32);
qf!(f64);

/// `min(x, hi)` then `max(·, lo)` as Eigen's `cwiseMin`/`cwiseMax` (NaN stays NaN).
#[inline]
fn clamp<T: Qf>(x: T, lo: T, hi: T) -> T {
    let x = if hi < x { hi } else { x };
    if x < lo {
        lo
    } else {
        x
    }
}

/// One slice's quantization: the clamp range (when given), the scale and its inverse.
#[derive(Clone, Copy)]
struct Levels<T> {
    lo: T,
    hi: T,
    scale: T,
    inverse: T,
}

/// TensorFlow's `ComputeQuantizationRange` for [`min`, `max`] on `num_bits` bits.
fn levels<T: Qf>(signed: bool, num_bits: i64, narrow: bool, mut min: T, mut max: T) -> Levels<T> {
    let half = 1i64 << (num_bits - 1);
    let (min_q, max_q) = match (signed, narrow) {
        (true, true) => (1 - half, half - 1),
        (true, false) => (-half, half - 1),
        (false, _) => (0, (1i64 << num_bits) - 1),
    };
    let (min_q, max_q) = (T::from_i64(min_q), T::from_i64(max_q));
    let from_min = if min_q.mul(min) > T::ZERO { min_q.div(min) } else { T::MAX };
    let from_max = if max_q.mul(max) > T::ZERO { max_q.div(max) } else { T::MAX };
    // The side that limits the scale keeps its end; the other end moves onto the grid.
    let (scale, inverse) = if from_min < from_max {
        let inverse = min.div(min_q);
        max = max_q.mul(inverse);
        (from_min, inverse)
    } else {
        let inverse = max.div(max_q);
        min = min_q.mul(inverse);
        (from_max, inverse)
    };
    Levels { lo: min, hi: max, scale, inverse }
}

/// The (outer, depth, inner) view of `dims` around `axis` (-1: the whole tensor as one).
fn split(dims: &[usize], axis: i64) -> (usize, usize, usize) {
    match usize::try_from(axis) {
        Ok(a) if a < dims.len() => (dims[..a].iter().product(), dims[a], dims[a + 1..].iter().product()),
        _ => (1, 1, dims.iter().product()),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// V2 and V4: `num_bits` and `round_mode` attrs.
    V2,
    /// `num_bits` an input, half to even.
    V3,
}

struct Qdq {
    kind: Kind,
    signed: bool,
    /// The attr (V2/V4).
    num_bits: i64,
    range_given: bool,
    half_up: bool,
    narrow: bool,
    axis: i64,
}

fn bool_attr(n: &NodeDef, name: &str, default: bool) -> Result<bool, Status> {
    if n.has_attr(name) {
        n.attr_bool(name)
    } else {
        Ok(default)
    }
}

fn int_attr(n: &NodeDef, name: &str, default: i64) -> Result<i64, Status> {
    if n.has_attr(name) {
        n.attr_int(name)
    } else {
        Ok(default)
    }
}

/// TensorFlow's bound on `num_bits` (62 levels of int64 signed, 63 unsigned).
fn bits_ok(num_bits: i64, signed: bool) -> bool {
    num_bits > 0 && num_bits < if signed { 62 } else { 63 }
}

fn make_qdq(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let kind = if n.op == "QuantizeAndDequantizeV3" { Kind::V3 } else { Kind::V2 };
    let signed = bool_attr(n, "signed_input", true)?;
    let (mut num_bits, mut half_up) = (8, false);
    if kind == Kind::V2 {
        num_bits = int_attr(n, "num_bits", 8)?;
        if !bits_ok(num_bits, signed) {
            return Err(
                n.node_error(format!("num_bits is out of range: {num_bits} with signed_input_ {}", u8::from(signed)))
            );
        }
        let mode = if n.has_attr("round_mode") { n.attr_string("round_mode")? } else { "HALF_TO_EVEN".into() };
        half_up = match mode.as_str() {
            "HALF_UP" => true,
            "HALF_TO_EVEN" => false,
            other => {
                return Err(n.node_error(format!("Round mode string must be 'HALF_UP' or 'HALF_TO_EVEN', is '{other}'")))
            }
        };
    }
    Ok(Box::new(Qdq {
        kind,
        signed,
        num_bits,
        range_given: bool_attr(n, "range_given", kind == Kind::V3)?,
        half_up,
        narrow: bool_attr(n, "narrow_range", false)?,
        axis: int_attr(n, "axis", -1)?,
    }))
}

/// A float tensor's values as `T` (its dtype already checked).
fn vals<T: Qf>(t: &Tensor) -> Result<&[T], Status> {
    t.as_slice::<T>()
}

impl Qdq {
    /// V2/V4's checks of the input rank, the axis and a given range (TensorFlow 2.21's:
    /// a given range must be scalars, so a given range per axis is always refused).
    fn check_v2(&self, ctx: &OpContext, x: &Tensor, min: &Tensor, max: &Tensor) -> Result<(), Status> {
        if self.axis < -1 {
            return Err(ctx.error(format!("Axis must be at least -1. Found {}", self.axis)));
        }
        if self.axis != -1 && self.axis >= x.rank() as i64 {
            return Err(ctx.error(format!("Shape must be at least rank {} but is rank {}", self.axis + 1, x.rank())));
        }
        if !self.range_given {
            return Ok(());
        }
        for (name, t) in [("input_min", min), ("input_max", max)] {
            if t.rank() != 0 {
                return Err(ctx.error(format!("{name} must be a scalar.")));
            }
        }
        if self.axis != -1 {
            return Err(ctx.error("Shape must be rank 1 for input_min_tensor when the axis is specified"));
        }
        Ok(())
    }

    /// V3's checks; returns `num_bits`.
    fn check_v3(&self, ctx: &OpContext, x: &Tensor, min: &Tensor, max: &Tensor) -> Result<i64, Status> {
        let rank = x.rank() as i64;
        if !(-rank <= self.axis && self.axis < rank) {
            return Err(ctx.error(format!(
                "Axis requested is larger than input dimensions. Axis: {} Input Dimensions: {rank}",
                self.axis
            )));
        }
        if self.axis < -1 {
            return Err(ctx.error(format!("Axis must be at least -1. Found {}", self.axis)));
        }
        let bits = ctx.input(3)?;
        if bits.rank() != 0 {
            return Err(ctx.error(format!(
                "Invalid shape. The `num_bits` tensor should be a scalar. Got dimensions: {}",
                bits.rank()
            )));
        }
        if bits.dtype() != DataType::Int32 {
            return Err(ctx.error(format!("num_bits must be int32, got {}", bits.dtype())));
        }
        let num_bits = i64::from(bits.as_slice::<i32>()?[0]);
        if !bits_ok(num_bits, self.signed) {
            return Err(ctx.error(format!(
                "num_bits is out of range: {num_bits} with `signed_input_` {}",
                u8::from(self.signed)
            )));
        }
        if !self.range_given {
            return Ok(num_bits);
        }
        if self.axis == -1 {
            for (name, t) in [("input_min", min), ("input_max", max)] {
                if t.num_elements() != 1 {
                    return Err(ctx.error(format!("{name} must have exactly one element, got shape {}", t.shape())));
                }
            }
            return Ok(num_bits);
        }
        let (_, depth, _) = split(x.dims(), self.axis);
        for (name, t) in [("input_min", min), ("input_max", max)] {
            if t.rank() != 1 {
                return Err(ctx.error(format!("Shape must be rank 1 for {name}_tensor when the axis is specified")));
            }
        }
        for (name, t) in [("input_min", min), ("input_max", max)] {
            if t.dims()[0] != depth {
                return Err(ctx.error(format!(
                    "{name}_tensor has incorrect size, was {} expected {depth} to match dim {} of the input {}",
                    t.dims()[0],
                    self.axis,
                    t.shape()
                )));
            }
        }
        Ok(num_bits)
    }

    fn run<T: Qf>(&self, ctx: &mut OpContext, x: &Tensor, min: &Tensor, max: &Tensor, bits: i64) -> Result<(), Status> {
        let src = vals::<T>(x)?;
        let (_, depth, inner) = split(x.dims(), self.axis);
        let (lo, hi): (Vec<T>, Vec<T>) = if self.range_given {
            for t in [min, max] {
                if t.dtype() != x.dtype() {
                    return Err(ctx.error(format!("input_min and input_max must be {}, got {}", x.dtype(), t.dtype())));
                }
            }
            let (a, b) = (vals::<T>(min)?, vals::<T>(max)?);
            let (Some(a), Some(b)) = (a.get(..depth), b.get(..depth)) else {
                return Err(ctx.error(format!("input_min and input_max must have {depth} values")));
            };
            if self.axis == -1 && a[0] > b[0] {
                return Err(ctx.error(format!("Invalid range: input_min {} > input_max {}", a[0], b[0])));
            }
            (a.to_vec(), b.to_vec())
        } else {
            // Each slice's extremes, NaN ignored (as Eigen's reductions).
            let (mut lo, mut hi) = (vec![T::MAX; depth], vec![T::LOWEST; depth]);
            for (i, &v) in src.iter().enumerate() {
                let c = (i / inner.max(1)) % depth.max(1);
                if v < lo[c] {
                    lo[c] = v;
                }
                if v > hi[c] {
                    hi[c] = v;
                }
            }
            (lo, hi)
        };
        let lv: Vec<Levels<T>> =
            lo.iter().zip(&hi).map(|(&a, &b)| levels(self.signed, bits, self.narrow, a, b)).collect();
        let (clip, half_up) = (self.range_given, self.half_up);
        let mut out = ferroflow_core::alloc::zeroed::<T>(x.dims())?;
        out.par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).enumerate().for_each(|(k, (o, s))| {
            for (j, (o, &v)) in o.iter_mut().zip(s).enumerate() {
                let c = ((k * CHUNK + j) / inner.max(1)) % depth.max(1);
                let l = lv[c];
                let v = if clip { clamp(v, l.lo, l.hi) } else { v };
                *o = v.mul(l.scale).round(half_up).mul(l.inverse);
            }
        });
        ctx.set_output(0, Tensor::new(x.dims().to_vec(), out)?)
    }
}

impl OpKernel for Qdq {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let (x, min, max) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
        let bits = match self.kind {
            Kind::V2 => {
                self.check_v2(ctx, &x, &min, &max)?;
                self.num_bits
            }
            Kind::V3 => self.check_v3(ctx, &x, &min, &max)?,
        };
        match x.dtype() {
            DataType::Float => self.run::<f32>(ctx, &x, &min, &max, bits),
            DataType::Double => self.run::<f64>(ctx, &x, &min, &max, bits),
            d => Err(ctx.error(format!("input must be float or double, got {d}"))),
        }
    }
}

pub(super) fn register(r: &mut KernelRegistry) {
    for op in ["QuantizeAndDequantizeV2", "QuantizeAndDequantizeV3", "QuantizeAndDequantizeV4"] {
        r.add(op, make_qdq);
    }
    r.add("QuantizeAndDequantizeV4Grad", grad::make);
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, Code, Tensor};

    use super::levels;
    use crate::testutil::{node, run_kernel};

    fn m(v: &[f32]) -> Tensor {
        Tensor::new(vec![2, 3], v.to_vec()).unwrap()
    }

    fn v(v: &[f32]) -> Tensor {
        Tensor::new(vec![v.len()], v.to_vec()).unwrap()
    }

    fn s(v: f32) -> Tensor {
        Tensor::scalar(v)
    }

    fn x() -> Tensor {
        m(&[1.0, 2.0, 3.0, 4.0, 5.0, -6.0])
    }

    fn qdq(
        op: &str,
        attrs: &[(&str, ferroflow_core::proto::AttrValue)],
        inputs: Vec<Tensor>,
    ) -> Result<Vec<f32>, ferroflow_core::Status> {
        let out = run_kernel(node(op, attrs), inputs, 1)?;
        Ok(out[0].as_slice::<f32>().unwrap().to_vec())
    }

    fn close(got: &[f32], want: &[f32]) {
        let ok = got.len() == want.len()
            && got.iter().zip(want).all(|(a, b)| (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-6);
        assert!(ok, "{got:?} vs {want:?}");
    }

    #[test]
    fn the_limiting_side_keeps_its_end() {
        // [-1, 1] on signed 8 bits: 127 / 1 limits the scale, the minimum moves to -128/127.
        let l = levels(true, 8, false, -1.0f32, 1.0);
        assert_eq!((l.scale, l.inverse, l.lo, l.hi), (127.0, 1.0 / 127.0, -128.0 / 127.0, 1.0));
        // [-1, 0.5]: -128 / -1 limits it, and the maximum becomes 127/128.
        let l = levels(true, 8, false, -1.0f32, 0.5);
        assert_eq!((l.scale, l.hi), (128.0, 127.0 / 128.0));
        // Narrow and unsigned grids.
        assert_eq!(levels(true, 8, true, -1.0f64, 1.0).lo, -1.0);
        assert_eq!(levels(false, 4, false, 0.0f64, 3.0).scale, 5.0);
    }

    /// TensorFlow 2.21's outputs.
    #[test]
    fn values_match_tensorflow() {
        let own = qdq("QuantizeAndDequantizeV2", &[], vec![x(), s(0.0), s(1.0)]).unwrap();
        close(&own, &[0.984375, 2.015625, 3.0, 3.984375, 5.015625, -6.0]);
        let per_axis = qdq("QuantizeAndDequantizeV2", &[("axis", attr::int(1))], vec![x(), s(0.0), s(1.0)]).unwrap();
        close(&per_axis, &[1.007874, 2.007874, 3.0, 4.0, 5.0, -6.0]);
        let nan = qdq("QuantizeAndDequantizeV2", &[], vec![v(&[f32::NAN, 1.0, 2.0]), s(0.0), s(1.0)]).unwrap();
        close(&nan, &[f32::NAN, 1.007874, 2.0]);
        let given = [("range_given", attr::bool(true))];
        let clipped = qdq("QuantizeAndDequantizeV4", &given, vec![v(&[f32::NAN, 1.0, 2.0]), s(0.0), s(1.0)]).unwrap();
        close(&clipped, &[f32::NAN, 1.0, 1.0]);
        // Ties: half to even is rint (0.49999997 goes down), half up is floor(x + 0.5).
        let ties = v(&[0.49999997, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5]);
        let even = qdq("QuantizeAndDequantizeV2", &given, vec![ties.clone(), s(-127.0), s(127.0)]).unwrap();
        assert_eq!(even, vec![0.0, 0.0, 2.0, 2.0, -0.0, -2.0, -2.0]);
        let up = [("range_given", attr::bool(true)), ("round_mode", attr::string("HALF_UP"))];
        let up = qdq("QuantizeAndDequantizeV2", &up, vec![ties, s(-127.0), s(127.0)]).unwrap();
        assert_eq!(up, vec![1.0, 1.0, 2.0, 3.0, 0.0, -1.0, -2.0]);
        let v3 = qdq(
            "QuantizeAndDequantizeV3",
            &[("axis", attr::int(1))],
            vec![x(), v(&[0.0, 1.0, 2.0]), v(&[1.0, 2.0, 3.0]), Tensor::scalar(8i32)],
        )
        .unwrap();
        close(&v3, &[1.0, 2.0, 3.0, 1.0, 2.0, -3.023622]);
    }

    #[test]
    fn bad_inputs_are_invalid_arguments_with_tensorflows_messages() {
        let given = || ("range_given", attr::bool(true));
        let b8 = || Tensor::scalar(8i32);
        type Case<'a> = (&'a str, Vec<(&'a str, ferroflow_core::proto::AttrValue)>, Vec<Tensor>, &'a str);
        let cases: Vec<Case> = vec![
            (
                "QuantizeAndDequantizeV2",
                vec![("axis", attr::int(2))],
                vec![x(), s(0.0), s(1.0)],
                "Shape must be at least rank 3 but is rank 2",
            ),
            (
                "QuantizeAndDequantizeV2",
                vec![("axis", attr::int(-2))],
                vec![x(), s(0.0), s(1.0)],
                "Axis must be at least -1. Found -2",
            ),
            (
                "QuantizeAndDequantizeV2",
                vec![given()],
                vec![x(), s(2.0), s(1.0)],
                "Invalid range: input_min 2 > input_max 1",
            ),
            ("QuantizeAndDequantizeV2", vec![given()], vec![x(), v(&[0.0]), s(1.0)], "input_min must be a scalar."),
            (
                "QuantizeAndDequantizeV4",
                vec![given(), ("axis", attr::int(1))],
                vec![x(), s(0.0), s(1.0)],
                "Shape must be rank 1 for input_min_tensor when the axis is specified",
            ),
            (
                "QuantizeAndDequantizeV2",
                vec![("num_bits", attr::int(62))],
                vec![x(), s(0.0), s(1.0)],
                "num_bits is out of range: 62 with signed_input_ 1",
            ),
            (
                "QuantizeAndDequantizeV2",
                vec![("round_mode", attr::string("UP"))],
                vec![x(), s(0.0), s(1.0)],
                "Round mode string must be 'HALF_UP' or 'HALF_TO_EVEN', is 'UP'",
            ),
            (
                "QuantizeAndDequantizeV3",
                vec![],
                vec![x(), s(0.0), s(1.0), Tensor::new(vec![1], vec![8i32]).unwrap()],
                "The `num_bits` tensor should be a scalar. Got dimensions: 1",
            ),
            (
                "QuantizeAndDequantizeV3",
                vec![],
                vec![x(), s(0.0), s(1.0), Tensor::scalar(0i32)],
                "num_bits is out of range: 0 with `signed_input_` 1",
            ),
            (
                "QuantizeAndDequantizeV3",
                vec![("axis", attr::int(5))],
                vec![x(), s(0.0), s(1.0), b8()],
                "Axis requested is larger than input dimensions. Axis: 5 Input Dimensions: 2",
            ),
            (
                "QuantizeAndDequantizeV3",
                vec![("axis", attr::int(1))],
                vec![x(), v(&[0.0, 1.0]), s(1.0), b8()],
                "Shape must be rank 1 for input_max_tensor when the axis is specified",
            ),
            (
                "QuantizeAndDequantizeV3",
                vec![("axis", attr::int(1))],
                vec![x(), v(&[0.0, 1.0]), v(&[1.0; 3]), b8()],
                "input_min_tensor has incorrect size, was 2 expected 3 to match dim 1 of the input [2]",
            ),
            (
                "QuantizeAndDequantizeV3",
                vec![],
                vec![x(), v(&[0.0, 1.0]), s(1.0), b8()],
                "input_min must have exactly one element",
            ),
        ];
        for (op, attrs, inputs, want) in cases {
            let e = run_kernel(node(op, &attrs), inputs, 1).unwrap_err();
            assert_eq!(e.code, Code::InvalidArgument, "{op}: {e}");
            assert!(e.message.contains(want), "{op}: {e} (want {want})");
        }
    }
}
