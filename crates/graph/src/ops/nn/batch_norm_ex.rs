//! Grappler's fused batch-norm forms, built when a graph is prepared (never by a client):
//! `_FusedBatchNormEx`, a `FusedBatchNormV3` whose `y` goes through an activation
//! (`activation_mode` `Relu` or `Relu6`), and `_FusedBatchNormGradEx`, the gradient of that
//! pair from the activation's gradient and output (TensorFlow's definitions; side inputs
//! are not built by ferroflow's remapper).

use crate::op_def::op;
use crate::registry::OpRegistry;

use super::batch_norm::{common, forward_shape, grad_shape, FORMATS_4D, FORMATS_5D};

pub(super) fn register(r: &mut OpRegistry) {
    let b = op("_FusedBatchNormEx").input("x: T");
    let b = ["scale", "offset", "mean", "variance"].iter().fold(b, |b, n| b.input(&format!("{n}: U")));
    let b = b.input("side_input: num_side_inputs * T").output("y: T");
    let b = ["batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"]
        .iter()
        .fold(b, |b, n| b.output(&format!("{n}: U")));
    let b = b
        .attr("T: {half, bfloat16, float}")
        .attr("U: {float}")
        .attr("exponential_avg_factor: float = 1")
        .attr("num_side_inputs: int >= 0 = 0")
        .attr("activation_mode: string = 'Identity'");
    r.add(common(b, FORMATS_4D).shape_fn(forward_shape).build());
    let b = op("_FusedBatchNormGradEx").input("y_backprop: T").input("x: T").input("scale: float");
    let b =
        ["reserve_space_1", "reserve_space_2", "reserve_space_3"].iter().fold(b, |b, n| b.input(&format!("{n}: U")));
    let b = b.input("offset: float").input("y: T").input("side_input: num_side_inputs * T");
    let b = b.output("x_backprop: T").output("scale_backprop: U").output("offset_backprop: U");
    let b = b.output("reserve_space_4: U").output("reserve_space_5: U");
    let b = b
        .output("side_input_backprop: num_side_inputs * T")
        .attr("T: {half, bfloat16, float}")
        .attr("U: {float}")
        .attr("num_side_inputs: int >= 0 = 0")
        .attr("activation_mode: string = 'Identity'");
    r.add(common(b, FORMATS_5D).shape_fn(grad_shape).build());
}
