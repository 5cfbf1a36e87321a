//! Learning-rate schedules computed in the graph from the global step, as
//! `tf.compat.v1.train.exponential_decay` builds them: the result is a float32 scalar
//! tensor to pass to an optimizer (it takes a [`LearningRate`](crate::optimizer::LearningRate)).

use ferroflow_core::{DataType, Status, Tensor};
use ferroflow_graph::{ops, Output, Scope};

/// The parameters of an exponential decay: the rate is multiplied by `decay_rate` every
/// `decay_steps` global steps, smoothly, or in whole intervals with `staircase`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExponentialDecay {
    /// Steps per factor of `decay_rate` (> 0).
    pub decay_steps: f64,
    /// The factor per `decay_steps` steps.
    pub decay_rate: f64,
    /// Decay in whole intervals (`floor(step / decay_steps)`).
    pub staircase: bool,
}

/// `learning_rate * decay_rate ^ (global_step / decay_steps)` as a float32 scalar, in a
/// name scope `ExponentialDecay` (TensorFlow's ops: Cast, RealDiv, Floor with `staircase`,
/// Pow, Mul). `global_step` is the step as an integer or float scalar, usually the value
/// of the global step variable.
pub fn exponential_decay(
    s: &Scope,
    learning_rate: f64,
    global_step: Output,
    decay: ExponentialDecay,
) -> Result<Output, Status> {
    if decay.decay_steps.is_nan() || decay.decay_steps <= 0.0 {
        return Err(Status::invalid_argument(format!(
            "exponential_decay: decay_steps must be positive, got {}",
            decay.decay_steps
        )));
    }
    if !learning_rate.is_finite() || !decay.decay_rate.is_finite() {
        return Err(Status::invalid_argument(format!(
            "exponential_decay: learning_rate ({learning_rate}) and decay_rate ({}) must be finite",
            decay.decay_rate
        )));
    }
    let s = s.sub("ExponentialDecay");
    let lr = ops::constant_named(&s, "initial_learning_rate", Tensor::scalar(learning_rate as f32));
    let steps = ops::constant_named(&s, "decay_steps", Tensor::scalar(decay.decay_steps as f32));
    let rate = ops::constant_named(&s, "decay_rate", Tensor::scalar(decay.decay_rate as f32));
    let step =
        if global_step.dtype == DataType::Float { global_step } else { ops::cast(&s, global_step, DataType::Float) };
    let mut p = ops::real_div(&s, step, steps);
    if decay.staircase {
        p = ops::floor(&s, p);
    }
    let factor = ops::pow(&s, rate, p);
    let out = s.op("Mul").name("decayed_learning_rate").input(lr).input(factor).build().output(0);
    s.status()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflow_runtime::DirectSession;
    use ferroflow_runtime::StepRunner;

    /// Values of `tf.compat.v1.train.exponential_decay` from TensorFlow 2.21 at the steps
    /// 0, 5, 10, 12, 25, 3500: (0.1, 10, 0.96), the same with staircase, and (2e-3, 1000, 0.5).
    const GOLDEN: [(i64, f32, f32, f32); 6] = [
        (0, 0.1, 0.1, 0.002),
        (5, 0.09797959, 0.1, 0.0019930806),
        (10, 0.096, 0.096, 0.001986185),
        (12, 0.0952194, 0.096, 0.0019834335),
        (25, 0.09029799, 0.09216, 0.0019656413),
        (3500, 6.236316e-08, 6.236316e-08, 0.00017677667),
    ];

    #[test]
    fn matches_tensorflow() {
        let s = Scope::new_root();
        let step = ops::placeholder(&s, DataType::Int64, Some(&[]));
        let smooth = ExponentialDecay { decay_steps: 10.0, decay_rate: 0.96, staircase: false };
        let a = exponential_decay(&s, 0.1, step.clone(), smooth).unwrap();
        let b = exponential_decay(&s, 0.1, step.clone(), ExponentialDecay { staircase: true, ..smooth }).unwrap();
        let half = ExponentialDecay { decay_steps: 1000.0, decay_rate: 0.5, staircase: false };
        let c = exponential_decay(&s, 2e-3, step.clone(), half).unwrap();
        let sess = DirectSession::new(s.graph());
        for (st, ea, eb, ec) in GOLDEN {
            let out = sess.run(&[(&step, Tensor::scalar(st))], &[&a, &b, &c], &[]).unwrap();
            for (t, e) in out.iter().zip([ea, eb, ec]) {
                let got = t.scalar_value::<f32>().unwrap();
                assert!((got - e).abs() <= 2e-7 * e.abs(), "step {st}: {got} vs TensorFlow's {e}");
            }
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        let s = Scope::new_root();
        let step = ops::constant(&s, 0i64);
        for d in [0.0, -1.0, f64::NAN] {
            let e = exponential_decay(
                &s,
                0.1,
                step.clone(),
                ExponentialDecay { decay_steps: d, decay_rate: 0.9, staircase: false },
            );
            assert_eq!(e.unwrap_err().code, ferroflow_core::Code::InvalidArgument);
        }
    }
}
