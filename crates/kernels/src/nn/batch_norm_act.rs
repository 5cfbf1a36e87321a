//! The activation `_FusedBatchNormEx` applies to its `y` (and `_FusedBatchNormGradEx`
//! undoes): `Identity`, `Relu` or `Relu6`, computed as the `Relu`/`Relu6` kernels do, so a
//! fused batch norm gives the bits of the unfused pair.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use super::batch_norm::Layout;

/// An activation fused after a batch norm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    Identity,
    Relu,
    Relu6,
}

impl Act {
    /// The node's `activation_mode` (`Identity` when absent); its `num_side_inputs` must be 0.
    pub fn parse(node: &NodeDef) -> Result<Act, Status> {
        if node.has_attr("num_side_inputs") && node.attr_int("num_side_inputs")? != 0 {
            return Err(super::common::unimplemented(node, "side inputs are not yet supported on CPU"));
        }
        if !node.has_attr("activation_mode") {
            return Ok(Act::Identity);
        }
        match node.attr_string("activation_mode")?.as_str() {
            "Identity" => Ok(Act::Identity),
            "Relu" => Ok(Act::Relu),
            "Relu6" => Ok(Act::Relu6),
            other => Err(super::common::unimplemented(
                node,
                format!("activation_mode {other} is not yet supported on CPU (Identity, Relu, Relu6 are)"),
            )),
        }
    }

    /// `act((x - m) * a + o)` for every element of `xs`, `m`, `a`, `o` per channel.
    pub fn normalize(self, l: &Layout, dims: &[usize], xs: &[f32], p: [&[f32]; 3]) -> Result<Vec<f32>, Status> {
        match self {
            Act::Identity => l.map(dims, [xs, xs, xs], p, |x, _, _, [m, a, o]| (x - m) * a + o),
            Act::Relu => l.map(dims, [xs, xs, xs], p, |x, _, _, [m, a, o]| relu((x - m) * a + o)),
            Act::Relu6 => l.map(dims, [xs, xs, xs], p, |x, _, _, [m, a, o]| relu6((x - m) * a + o)),
        }
    }

    /// The gradient through the activation of the incoming gradient `g`, from the
    /// activation's output `y`: `g * (y > 0)`, `g * (0 < y < 6)` (as `ReluGrad` and
    /// `Relu6Grad`), or `g`. The activation's input `z` gives the same mask as its output
    /// (`relu(z) > 0` exactly when `z > 0`, `0 < relu6(z) < 6` exactly when `0 < z < 6`,
    /// NaN nowhere), so `y` may be either.
    #[inline(always)]
    pub fn backprop(self, g: f32, y: f32) -> f32 {
        match self {
            Act::Identity => g,
            Act::Relu => g * if y > 0.0 { 1.0 } else { 0.0 },
            Act::Relu6 => g * if (y > 0.0) & (y < 6.0) { 1.0 } else { 0.0 },
        }
    }
}

#[inline(always)]
fn relu(y: f32) -> f32 {
    if y < 0.0 {
        0.0
    } else {
        y
    }
}

// As the `Relu6` kernel writes it (NaN stays NaN, -0 stays -0).
#[allow(clippy::manual_clamp)]
#[inline(always)]
fn relu6(y: f32) -> f32 {
    if y < 0.0 {
        0.0
    } else if y > 6.0 {
        6.0
    } else {
        y
    }
}
