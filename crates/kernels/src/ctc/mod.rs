//! Connectionist temporal classification (`tf.nn.ctc_loss`, `ctc_greedy_decoder`,
//! `ctc_beam_search_decoder`), as TensorFlow's CPU kernels compute it: `CTCLoss` (the loss
//! and its gradient with respect to the logits in one pass), `CTCGreedyDecoder` and
//! `CTCBeamSearchDecoder`. The inputs are time-major logits `[max_time, batch, classes]`;
//! the blank is the last class unless the greedy decoder's `blank_index` says otherwise.

mod beam;
mod decode;
mod loss;

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status};

use crate::real::Real;
use crate::KernelRegistry;

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("CTCLoss", loss::make);
    r.add("CTCGreedyDecoder", decode::make_greedy);
    r.add("CTCBeamSearchDecoder", beam::make);
}

/// The float types CTC computes in, with the log-space helpers it needs.
pub(crate) trait LogReal: Real {
    /// ln(0).
    const LOG_ZERO: Self;
    /// ln(1 + x).
    fn ln_1p(self) -> Self;
    /// e^x evaluated in single precision (TensorFlow's CTC gradient calls `expf` for both
    /// precisions).
    fn exp_single(self) -> Self;
}

impl LogReal for f32 {
    const LOG_ZERO: f32 = f32::NEG_INFINITY;
    fn ln_1p(self) -> f32 {
        f32::ln_1p(self)
    }
    fn exp_single(self) -> f32 {
        self.exp()
    }
}

impl LogReal for f64 {
    const LOG_ZERO: f64 = f64::NEG_INFINITY;
    fn ln_1p(self) -> f64 {
        f64::ln_1p(self)
    }
    fn exp_single(self) -> f64 {
        f64::from((self as f32).exp())
    }
}

/// ln(e^a + e^b), exact when either is ln(0).
#[inline]
pub(crate) fn log_sum_exp<T: LogReal>(a: T, b: T) -> T {
    if a == T::LOG_ZERO {
        b
    } else if b == T::LOG_ZERO {
        a
    } else if a > b {
        a + (b - a).exp().ln_1p()
    } else {
        b + (a - b).exp().ln_1p()
    }
}

/// Bool attr `name` of `n`, or `default` when the node does not carry it.
pub(crate) fn bool_attr(n: &NodeDef, name: &str, default: bool) -> Result<bool, Status> {
    if n.has_attr(name) {
        n.attr_bool(name)
    } else {
        Ok(default)
    }
}

/// Int attr `name` of `n`, or `default` when the node does not carry it.
pub(crate) fn int_attr(n: &NodeDef, name: &str, default: i64) -> Result<i64, Status> {
    if n.has_attr(name) {
        n.attr_int(name)
    } else {
        Ok(default)
    }
}

#[cfg(test)]
mod tests;
