//! Quantize-and-dequantize ops (TensorFlow's definitions, shape functions and builders):
//! `QuantizeAndDequantizeV2`, `QuantizeAndDequantizeV3` (`num_bits` an input),
//! `QuantizeAndDequantizeV4` (what `tf.quantization.quantize_and_dequantize_v2` builds; its
//! gradient zeroes what falls outside the range) and `QuantizeAndDequantizeV4Grad`.

use ferroflow_core::proto::AttrValue;
use ferroflow_core::{attr, NodeAttrs};

use super::state::merge_dims;
use crate::op_def::{op, OpDefBuilder};
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

type R = Result<Vec<Dims>, ferroflow_core::Status>;

/// `d` checked to have rank `r` ("Shape must be rank r but is rank k").
fn with_rank(c: &ShapeCtx, d: Dims, r: usize) -> Result<Dims, ferroflow_core::Status> {
    match d {
        Some(v) if v.len() != r => Err(c.error(format!("Shape must be rank {r} but is rank {}", v.len()))),
        Some(v) => Ok(Some(v)),
        None => Ok(Some(vec![-1; r])),
    }
}

/// The range inputs `min`, `max` (scalars, or vectors of the `axis` dim of `input`), merged;
/// errors as TensorFlow's shape function gives them.
fn range_shape(c: &ShapeCtx, input: usize, min: usize, max: usize) -> Result<Dims, ferroflow_core::Status> {
    let axis = c.node.attr_int("axis").unwrap_or(-1);
    let rank = if axis == -1 { 0 } else { 1 };
    let range = with_rank(c, c.input(min), rank)?;
    let range = merge_dims(c, &c.input(max), &range)?;
    if axis < -1 {
        return Err(c.error(format!("axis should be at least -1, got {axis}")));
    }
    if axis != -1 {
        if let Some(x) = c.input(input) {
            if (x.len() as i64) <= axis {
                return Err(c.error(format!("Shape must be at least rank {} but is rank {}", axis + 1, x.len())));
            }
            let merged = merge_dims(c, &range, &Some(vec![x[axis as usize]]))?;
            return Ok(merged);
        }
    }
    Ok(range)
}

fn qdq_shape(c: &ShapeCtx) -> R {
    range_shape(c, 0, 1, 2)?;
    Ok(vec![c.input(0)])
}

fn qdq_v3_shape(c: &ShapeCtx) -> R {
    range_shape(c, 0, 1, 2)?;
    with_rank(c, c.input(3), 0)?;
    Ok(vec![c.input(0)])
}

fn qdq_grad_shape(c: &ShapeCtx) -> R {
    let range = range_shape(c, 1, 2, 3)?;
    let x = merge_dims(c, &c.input(0), &c.input(1))?;
    Ok(vec![x, range.clone(), range])
}

const T: &str = "T: {bfloat16, half, float, double}";

fn with_quant_attrs(b: OpDefBuilder, bits_attr: bool, range_given: bool) -> OpDefBuilder {
    let b = b.attr("signed_input: bool = true");
    let b = if bits_attr { b.attr("num_bits: int = 8") } else { b };
    b.attr(if range_given { "range_given: bool = true" } else { "range_given: bool = false" }).attr(T)
}

pub(crate) fn register(r: &mut OpRegistry) {
    for name in ["QuantizeAndDequantizeV2", "QuantizeAndDequantizeV4"] {
        let b = op(name).input("input: T").input("input_min: T").input("input_max: T").output("output: T");
        r.add(
            with_quant_attrs(b, true, false)
                .attr("round_mode: {'HALF_TO_EVEN', 'HALF_UP'} = 'HALF_TO_EVEN'")
                .attr("narrow_range: bool = false")
                .attr("axis: int = -1")
                .shape_fn(qdq_shape)
                .build(),
        );
    }
    let b = op("QuantizeAndDequantizeV3")
        .input("input: T")
        .input("input_min: T")
        .input("input_max: T")
        .input("num_bits: int32")
        .output("output: T");
    r.add(
        with_quant_attrs(b, false, true)
            .attr("narrow_range: bool = false")
            .attr("axis: int = -1")
            .shape_fn(qdq_v3_shape)
            .build(),
    );
    r.add(
        op("QuantizeAndDequantizeV4Grad")
            .input("gradients: T")
            .input("input: T")
            .input("input_min: T")
            .input("input_max: T")
            .output("input_backprop: T")
            .output("input_min_backprop: T")
            .output("input_max_backprop: T")
            .attr(T)
            .attr("axis: int = -1")
            .shape_fn(qdq_grad_shape)
            .build(),
    );
}

/// The options of [`quantize_and_dequantize`] beyond the range: TensorFlow's defaults are
/// signed 8 bits, range from the input, half to even, not narrow, one range (`axis` -1).
#[derive(Clone, Copy, Debug)]
pub struct QdqOptions {
    /// Signed levels (else unsigned).
    pub signed_input: bool,
    /// Bits of the levels.
    pub num_bits: i64,
    /// Use `input_min`/`input_max` (else the input's own range).
    pub range_given: bool,
    /// Round halves up (else to even).
    pub half_up: bool,
    /// Leave out the lowest signed level.
    pub narrow_range: bool,
    /// One range per slice along this axis (-1: one range).
    pub axis: i64,
}

impl Default for QdqOptions {
    fn default() -> Self {
        QdqOptions {
            signed_input: true,
            num_bits: 8,
            range_given: false,
            half_up: false,
            narrow_range: false,
            axis: -1,
        }
    }
}

/// `QuantizeAndDequantizeV4` (`tf.quantization.quantize_and_dequantize_v2`), or with
/// `v2`, `QuantizeAndDequantizeV2` (`tf.quantization.quantize_and_dequantize`, whose
/// gradient passes straight through).
pub fn quantize_and_dequantize(s: &Scope, x: Output, min: Output, max: Output, o: QdqOptions, v2: bool) -> Output {
    let name = if v2 { "QuantizeAndDequantizeV2" } else { "QuantizeAndDequantizeV4" };
    let round_mode = attr::string(if o.half_up { "HALF_UP" } else { "HALF_TO_EVEN" });
    let attrs = o.common_attrs().into_iter().chain([("num_bits", attr::int(o.num_bits)), ("round_mode", round_mode)]);
    op_output(s, name, [x, min, max], attrs)
}

impl QdqOptions {
    /// The attrs every QuantizeAndDequantize version takes from these options.
    fn common_attrs(&self) -> [(&'static str, AttrValue); 4] {
        [
            ("signed_input", attr::bool(self.signed_input)),
            ("range_given", attr::bool(self.range_given)),
            ("narrow_range", attr::bool(self.narrow_range)),
            ("axis", attr::int(self.axis)),
        ]
    }
}

/// `QuantizeAndDequantizeV3`: `num_bits` an int32 scalar input, rounding half to even.
pub fn quantize_and_dequantize_v3(
    s: &Scope,
    x: Output,
    min: Output,
    max: Output,
    num_bits: Output,
    o: QdqOptions,
) -> Output {
    op_output(s, "QuantizeAndDequantizeV3", [x, min, max, num_bits], o.common_attrs())
}

#[cfg(test)]
mod tests {
    use ferroflow_core::DataType;

    use super::*;
    use crate::ops::placeholder;
    use crate::ops::test_util::ph;

    fn axis(a: i64) -> QdqOptions {
        QdqOptions { axis: a, ..QdqOptions::default() }
    }

    fn bits(s: &Scope, dims: &[i64]) -> Output {
        placeholder(s, DataType::Int32, Some(dims))
    }

    fn grad(s: &Scope, dims: [&[i64]; 4], axis: i64) -> [Output; 3] {
        let o = s
            .op("QuantizeAndDequantizeV4Grad")
            .input(ph(s, dims[0]))
            .input(ph(s, dims[1]))
            .input(ph(s, dims[2]))
            .input(ph(s, dims[3]))
            .attr("axis", attr::int(axis))
            .build();
        o.first_outputs()
    }

    #[test]
    fn shapes_follow_tensorflow() {
        let s = Scope::new_root();
        let y = quantize_and_dequantize(&s, ph(&s, &[2, 3]), ph(&s, &[]), ph(&s, &[]), axis(-1), false);
        assert_eq!(s.graph().shape_of(&y), Some(vec![2, 3]));
        let y = quantize_and_dequantize(&s, ph(&s, &[2, -1]), ph(&s, &[-1]), ph(&s, &[4]), axis(1), true);
        assert_eq!(s.graph().shape_of(&y), Some(vec![2, -1]));
        let y = quantize_and_dequantize_v3(&s, ph(&s, &[2, 3]), ph(&s, &[2]), ph(&s, &[2]), bits(&s, &[]), axis(0));
        assert_eq!(s.graph().shape_of(&y), Some(vec![2, 3]));
        let [dx, dmin, dmax] = grad(&s, [&[2, 3], &[-1, 3], &[2], &[-1]], 0);
        assert_eq!(s.graph().shape_of(&dx), Some(vec![2, 3]));
        assert_eq!(s.graph().shape_of(&dmin), Some(vec![2]));
        assert_eq!(s.graph().shape_of(&dmax), Some(vec![2]));
        s.status().unwrap();
    }

    #[test]
    fn bad_shapes_and_axes_are_errors() {
        type Case = (&'static str, fn(&Scope));
        let cases: [Case; 7] = [
            ("Shape must be rank 0 but is rank 1", |s| {
                quantize_and_dequantize(s, ph(s, &[2, 3]), ph(s, &[1]), ph(s, &[]), axis(-1), true);
            }),
            ("Shape must be rank 1 but is rank 0", |s| {
                quantize_and_dequantize(s, ph(s, &[2, 3]), ph(s, &[]), ph(s, &[]), axis(1), false);
            }),
            ("Dimensions must be equal, but are 4 and 3", |s| {
                quantize_and_dequantize(s, ph(s, &[2, 3]), ph(s, &[4]), ph(s, &[4]), axis(1), true);
            }),
            ("Shape must be at least rank 3 but is rank 2", |s| {
                quantize_and_dequantize(s, ph(s, &[2, 3]), ph(s, &[4]), ph(s, &[4]), axis(2), false);
            }),
            ("axis should be at least -1, got -2", |s| {
                quantize_and_dequantize(s, ph(s, &[2, 3]), ph(s, &[4]), ph(s, &[4]), axis(-2), false);
            }),
            ("Shape must be rank 0 but is rank 1", |s| {
                quantize_and_dequantize_v3(s, ph(s, &[2, 3]), ph(s, &[]), ph(s, &[]), bits(s, &[1]), axis(-1));
            }),
            ("Dimensions must be equal, but are 3 and 4", |s| {
                grad(s, [&[2, 3], &[2, 4], &[], &[]], -1);
            }),
        ];
        crate::ops::test_util::assert_invalid_builds(cases);
    }
}
