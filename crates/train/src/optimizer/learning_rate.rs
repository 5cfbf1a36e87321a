//! An optimizer's learning rate: a number, or a scalar tensor computed in the graph every
//! step (a schedule such as [`exponential_decay`](crate::exponential_decay)), as TensorFlow's
//! optimizers take either.

use ferroflow_core::{attr, DataType};
use ferroflow_graph::{Output, Scope};

use super::hyper;

/// A learning rate: a constant, or a float scalar tensor read at each update.
#[derive(Clone, Debug, PartialEq)]
pub enum LearningRate {
    /// A fixed rate, built as a constant of the variable's dtype.
    Constant(f64),
    /// A scalar tensor (float32 or float64), cast to the variable's dtype where they differ.
    Tensor(Output),
}

impl From<f64> for LearningRate {
    fn from(v: f64) -> LearningRate {
        LearningRate::Constant(v)
    }
}

impl From<Output> for LearningRate {
    fn from(t: Output) -> LearningRate {
        LearningRate::Tensor(t)
    }
}

impl LearningRate {
    /// The rate as an input of an update of a `dtype` variable: a constant named `name`, or
    /// the tensor (cast when its dtype is not `dtype`).
    pub fn output(&self, s: &Scope, name: &str, dtype: DataType) -> Output {
        match self {
            LearningRate::Constant(v) => hyper(s, name, *v, dtype),
            LearningRate::Tensor(t) if t.dtype == dtype => t.clone(),
            LearningRate::Tensor(t) => s
                .op("Cast")
                .name(name)
                .input(t.clone())
                .attr("DstT", attr::ty(dtype))
                .attr("Truncate", attr::bool(false))
                .build()
                .output(0),
        }
    }

    /// The constant rate, or `None` for a tensor.
    pub fn constant(&self) -> Option<f64> {
        match self {
            LearningRate::Constant(v) => Some(*v),
            LearningRate::Tensor(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimizer::{Adam, GradientDescent, Optimizer};
    use ferroflow_core::Tensor;
    use ferroflow_graph::{ops, Variable};
    use ferroflow_runtime::DirectSession;
    use ferroflow_runtime::StepRunner;

    /// A float32 rate fed per step drives a float64 variable's update (through a Cast) and
    /// a float32 one's (directly): each step moves by the rate fed at that step.
    #[test]
    fn a_tensor_rate_is_read_at_every_step() {
        let s = Scope::new_root();
        let lr = ops::placeholder(&s, DataType::Float, Some(&[]));
        let w64 = Variable::new(&s, "w64", ops::constant(&s, vec![1.0f64, 2.0]));
        let w32 = Variable::new(&s, "w32", ops::constant(&s, vec![1.0f32, 2.0]));
        let g64 = ops::constant(&s, vec![1.0f64, -2.0]);
        let g32 = ops::constant(&s, vec![1.0f32, -2.0]);
        let opt = GradientDescent::new(lr.clone());
        let u64 = opt.apply_one(&s, &g64, &w64).unwrap();
        let u32 = opt.apply_one(&s, &g32, &w32).unwrap();
        s.status().unwrap();
        let sess = DirectSession::new(s.graph());
        sess.run(&[], &[], &[&w64.initializer(), &w32.initializer()]).unwrap();
        for rate in [0.5f32, 0.25] {
            sess.run(&[(&lr, Tensor::scalar(rate))], &[], &[&u64, &u32]).unwrap();
        }
        let out = sess.run(&[], &[&w64.value(), &w32.value()], &[]).unwrap();
        assert_eq!(out[0].as_slice::<f64>().unwrap(), &[0.25, 3.5]);
        assert_eq!(out[1].as_slice::<f32>().unwrap(), &[0.25, 3.5]);
    }

    #[test]
    fn constants_keep_their_value() {
        assert_eq!(LearningRate::from(0.1).constant(), Some(0.1));
        let s = Scope::new_root();
        let t = ops::constant(&s, 0.1f32);
        assert_eq!(Adam::new(t.clone()).learning_rate, LearningRate::Tensor(t));
    }
}
