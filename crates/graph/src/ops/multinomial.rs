//! `Multinomial` (`tf.random.categorical`) and `StatelessMultinomial`
//! (`tf.random.stateless_categorical`), TensorFlow's definitions: `num_samples` class
//! indices per row of `logits [batch, classes]`. Not differentiable.

use ferroflow_core::{attr, DataType, Status};

use crate::op_def::op;
use crate::ops::op_output;
use crate::registry::OpRegistry;
use crate::scope::{Output, Scope};
use crate::shape_fn::{Dims, ShapeCtx};

const LOGIT_TYPES: &str =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";

fn multinomial_shape(c: &ShapeCtx) -> Result<Vec<Dims>, Status> {
    let batch = match c.input(0) {
        Some(d) if d.len() != 2 => return Err(c.error(format!("Shape must be rank 2 but is rank {}", d.len()))),
        Some(d) => d[0],
        None => -1,
    };
    if let Some(d) = c.input(1) {
        if !d.is_empty() {
            return Err(c.error(format!("Shape must be rank 0 but is rank {}", d.len())));
        }
    }
    if c.node.op == "StatelessMultinomial" {
        if let Some(d) = c.input(2) {
            if d.len() != 1 || (d[0] >= 0 && d[0] != 2) {
                return Err(c.error(format!("seed must have shape [2], not {d:?}")));
            }
        }
    }
    let samples = match c.const_input(1) {
        Some(t) => t.scalar_value::<i32>()? as i64,
        None => -1,
    };
    Ok(vec![Some(vec![batch, samples])])
}

pub(crate) fn register(r: &mut OpRegistry) {
    r.add(
        op("Multinomial")
            .input("logits: T")
            .input("num_samples: int32")
            .output("output: output_dtype")
            .attr("seed: int = 0")
            .attr("seed2: int = 0")
            .attr(LOGIT_TYPES)
            .attr("output_dtype: {int32, int64} = DT_INT64")
            .stateful()
            .shape_fn(multinomial_shape)
            .build(),
    );
    r.add(
        op("StatelessMultinomial")
            .input("logits: T")
            .input("num_samples: int32")
            .input("seed: Tseed")
            .output("output: output_dtype")
            .attr(LOGIT_TYPES)
            .attr("Tseed: {int32, int64} = DT_INT64")
            .attr("output_dtype: {int32, int64} = DT_INT64")
            .shape_fn(multinomial_shape)
            .build(),
    );
}

/// `Multinomial`: `num_samples` class indices (`output_dtype`) per row of `logits`, drawn
/// with probabilities `softmax(logits)`; TensorFlow's numbers for the same seeds.
pub fn multinomial(
    s: &Scope,
    logits: Output,
    num_samples: Output,
    output_dtype: DataType,
    seed: i64,
    seed2: i64,
) -> Output {
    let attrs = [("output_dtype", attr::ty(output_dtype)), ("seed", attr::int(seed)), ("seed2", attr::int(seed2))];
    op_output(s, "Multinomial", [logits, num_samples], attrs)
}

/// `StatelessMultinomial`: like [`multinomial`], a function of `seed` (two ints) only.
pub fn stateless_multinomial(
    s: &Scope,
    logits: Output,
    num_samples: Output,
    seed: Output,
    output_dtype: DataType,
) -> Output {
    op_output(s, "StatelessMultinomial", [logits, num_samples, seed], [("output_dtype", attr::ty(output_dtype))])
}
