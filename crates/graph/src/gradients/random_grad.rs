//! Gradients of the gamma samplers with respect to alpha (TensorFlow's `random_grad.py`):
//! implicit reparameterization (Figurnov et al. 2018), `RandomGammaGrad(alpha, sample)`
//! summed over the sample dimensions. The other samplers (Poisson, binomial) are not
//! differentiable; their registrations are in `table.rs`.

use ferroflow_core::DataType;

use super::array_grad::{grad0, input};
use super::math_grad::shape_of;
use super::registry::Grads;
use crate::gradients::GradOp;
use crate::ops;
use crate::scope::{Output, Scope};

/// `sum(grad * RandomGammaGrad(alpha', sample), axes [0, n))` where `alpha'` is `alpha`
/// reshaped with `n` leading 1s (`n`: an int32 scalar, the number of sample dimensions).
fn alpha_grad(s: &Scope, alpha: &Output, sample: &Output, grad: Output, n: Output) -> Output {
    let int = |v: i32| ops::constant(s, v);
    let ones = ops::fill(s, ops::reshape(s, n.clone(), ops::constant(s, vec![1i32])), int(1));
    let shape = ops::concat(s, vec![ones, shape_of(s, alpha)], int(0));
    let broadcastable = ops::reshape(s, alpha.clone(), shape);
    let partial = ops::random_gamma_grad(s, broadcastable, sample.clone());
    ops::sum(s, ops::mul(s, grad, partial), ops::range(s, int(0), n, int(1)), false)
}

/// `RandomGamma(shape, alpha)`: the output is `shape + alpha.shape`, so the sample
/// dimensions are `size(shape)`.
pub(super) fn random_gamma_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let (shape, alpha, sample) = (input(op, 0)?, input(op, 1)?, &op.outputs[0]);
    let n = ops::size(s, shape.clone(), DataType::Int32);
    Ok(vec![None, Some(alpha_grad(s, alpha, sample, grad0(op, g)?, n))])
}

/// `StatelessRandomGammaV2(shape, seed, alpha)` and `V3(shape, key, counter, alg, alpha)`:
/// the output is `shape`, ending with alpha's shape, so the sample dimensions are
/// `size(shape) - rank(alpha)`.
pub(super) fn stateless_random_gamma_grad(s: &Scope, op: &GradOp, g: &[Output]) -> Grads {
    let at = op.inputs.len() - 1;
    let (shape, alpha, sample) = (input(op, 0)?, input(op, at)?, &op.outputs[0]);
    let n = ops::sub(s, ops::size(s, shape.clone(), DataType::Int32), ops::rank(s, alpha.clone()));
    let mut grads = vec![None; at];
    grads.push(Some(alpha_grad(s, alpha, sample, grad0(op, g)?, n)));
    Ok(grads)
}

#[cfg(test)]
mod tests {
    use ferroflow_core::DataType;

    use crate::gradients::{grad_registry, gradients};
    use crate::ops;
    use crate::scope::Scope;

    /// Op types under the gradient scope of `node` (of any `gradients*/` call).
    fn grad_ops(s: &Scope, node: &str) -> Vec<String> {
        let part = format!("/{node}_grad/");
        s.graph().nodes().into_iter().filter(|n| n.def.name.contains(&part)).map(|n| n.def.op).collect()
    }

    #[test]
    fn gamma_gradients_sum_random_gamma_grad_over_the_samples() {
        let s = Scope::new_root();
        let alpha = ops::placeholder(&s, DataType::Double, Some(&[2, 3]));
        let g = ops::random_gamma(&s, ops::constant(&s, vec![4i32]), alpha.clone(), 1, 2);
        let d = gradients(&s, std::slice::from_ref(&g), std::slice::from_ref(&alpha), None).unwrap().remove(0).unwrap();
        assert_eq!((d.dtype, s.graph().shape_of(&g)), (DataType::Double, Some(vec![4, 2, 3])));
        assert!(grad_ops(&s, &g.node).contains(&"RandomGammaGrad".to_string()), "{:?}", grad_ops(&s, &g.node));
        // Stateless V2 and V3: the sample dimensions are those of `shape` before alpha's.
        let a = ops::placeholder(&s, DataType::Float, Some(&[2]));
        let seed = ops::constant(&s, vec![1i64, 2]);
        let v2 = ops::stateless_random_gamma_v2(&s, ops::constant(&s, vec![5i32, 2]), seed.clone(), a.clone());
        let key_counter = s.op("StatelessRandomGetKeyCounterAlg").input(seed).build();
        let v3 = ops::stateless_random_gamma_v3(
            &s,
            ops::constant(&s, vec![3i32, 2]),
            key_counter.output(0),
            key_counter.output(1),
            key_counter.output(2),
            a.clone(),
        );
        for y in [v2, v3] {
            let d = gradients(&s, std::slice::from_ref(&y), std::slice::from_ref(&a), None).unwrap().remove(0).unwrap();
            assert_eq!(d.dtype, DataType::Float);
            assert!(grad_ops(&s, &y.node).contains(&"RandomGammaGrad".to_string()));
        }
        s.status().unwrap();
    }

    #[test]
    fn the_discrete_samplers_stop_gradients() {
        let r = grad_registry();
        for op in ["RandomPoisson", "RandomPoissonV2", "StatelessRandomPoisson", "StatelessRandomBinomial"] {
            assert!(matches!(r.get(op), Some(None)), "{op} is not marked not differentiable");
        }
        // As in TensorFlow, RandomGammaGrad itself has no gradient.
        assert!(r.get("RandomGammaGrad").is_none());
        let s = Scope::new_root();
        let rate = ops::placeholder(&s, DataType::Float, Some(&[2]));
        let p = ops::random_poisson_v2(&s, ops::constant(&s, vec![3i32]), rate.clone(), DataType::Float, 0, 0);
        let d = gradients(&s, &[p], &[rate], None).unwrap();
        assert!(d[0].is_none());
    }
}
