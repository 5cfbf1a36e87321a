//! Numeric gradient checks: compares the symbolic gradient of `sum(w * f(x))` (random
//! fixed `w`) with central finite differences, for every element of every float input.

use crate::StepRunner;
use ferroflow_core::{attr, DataType, Status, Tensor};
use ferroflow_graph::{gradients, ops, Output, Scope};

use crate::DirectSession;

/// Result of a gradient check.
#[derive(Debug, Clone)]
pub struct GradCheck {
    /// Largest |symbolic - numeric| / max(1, |numeric|) over all checked elements.
    pub max_rel_error: f64,
    /// Number of elements checked.
    pub checked: usize,
}

/// The gradient checks' generator of test values (a 64-bit LCG: Knuth's MMIX constants),
/// so that every gradient test draws the same numbers from the same seed on every platform.
#[derive(Clone, Debug)]
pub struct Lcg(pub u64);

impl Lcg {
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [-1, 1).
    pub fn signed(&mut self) -> f64 {
        self.unit() * 2.0 - 1.0
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

fn perturb(t: &Tensor, k: usize, delta: f64) -> Result<Tensor, Status> {
    let mut t = t.clone();
    match t.dtype() {
        DataType::Double => t.data_mut::<f64>()?[k] += delta,
        DataType::Float => t.data_mut::<f32>()?[k] += delta as f32,
        d => return Err(Status::invalid_argument(format!("cannot perturb a {d} tensor"))),
    }
    Ok(t)
}

/// Checks the gradient of `build(scope, inputs)` at `values`. Inputs listed in
/// `differentiable` (indices into `values`) are checked; they must be float32 or float64
/// (float64 recommended: `eps` 1e-6 gives ~1e-8 accuracy). Returns the worst relative
/// error; callers assert it against a tolerance.
pub fn check_gradient(
    build: impl Fn(&Scope, &[Output]) -> Output,
    values: &[Tensor],
    differentiable: &[usize],
    eps: f64,
) -> Result<GradCheck, Status> {
    let s = Scope::new_root();
    let xs: Vec<Output> = values
        .iter()
        .enumerate()
        .map(|(i, v)| ops::placeholder_named(&s, &format!("x{i}"), v.dtype(), Some(&v.shape().to_i64())))
        .collect();
    let y = build(&s, &xs);
    s.status()?;
    let sess = DirectSession::new(s.graph());
    let feeds = |vals: &[Tensor]| -> Vec<(String, Tensor)> {
        xs.iter().zip(vals).map(|(x, v)| (x.name(), v.clone())).collect()
    };
    let y_val = sess.run_by_name(&feeds(values), &[y.name()], &[], &Default::default())?.remove(0);
    let mut rng = Lcg(0x5eed);
    let w_vals: Vec<f64> = (0..y_val.num_elements()).map(|_| rng.signed()).collect();
    let w_t = match y.dtype {
        DataType::Double => Tensor::new(y_val.shape().clone(), w_vals.clone())?,
        DataType::Float => Tensor::new(y_val.shape().clone(), w_vals.iter().map(|&v| v as f32).collect::<Vec<_>>())?,
        d => return Err(Status::invalid_argument(format!("output must be float, got {d}"))),
    };
    let w = ops::constant(&s, w_t);
    let prod = s.op("Mul").input(y.clone()).input(w).build().output(0);
    let axes: Vec<i32> = (0..y_val.rank() as i32).collect();
    let axes = ops::constant(&s, Tensor::vec(axes));
    let loss = s.op("Sum").input(prod).input(axes).attr("keep_dims", attr::bool(false)).build().output(0);
    let diff_x: Vec<Output> = differentiable.iter().map(|&i| xs[i].clone()).collect();
    let grads = gradients(&s, std::slice::from_ref(&loss), &diff_x, None)?;
    let mut fetch = Vec::new();
    for (i, g) in grads.iter().enumerate() {
        match g {
            Some(g) => fetch.push(g.name()),
            None => return Err(Status::invalid_argument(format!("input {} has no gradient", differentiable[i]))),
        }
    }
    let sym = sess.run_by_name(&feeds(values), &fetch, &[], &Default::default())?;
    let loss_at = |vals: &[Tensor]| -> Result<f64, Status> {
        let r = sess.run_by_name(&feeds(vals), &[loss.name()], &[], &Default::default())?;
        Ok(r[0].to_f64_vec()?[0])
    };
    let mut worst = 0.0f64;
    let mut checked = 0;
    for (gi, &xi) in differentiable.iter().enumerate() {
        let symv = sym[gi].to_f64_vec()?;
        if symv.len() != values[xi].num_elements() {
            return Err(Status::internal(format!(
                "gradient of input {xi} has {} elements, input has {}",
                symv.len(),
                values[xi].num_elements()
            )));
        }
        for (k, sym_k) in symv.iter().enumerate() {
            let mut plus = values.to_vec();
            plus[xi] = perturb(&values[xi], k, eps)?;
            let mut minus = values.to_vec();
            minus[xi] = perturb(&values[xi], k, -eps)?;
            let num = (loss_at(&plus)? - loss_at(&minus)?) / (2.0 * eps);
            let err = (sym_k - num).abs() / num.abs().max(1.0);
            worst = worst.max(err);
            checked += 1;
        }
    }
    Ok(GradCheck { max_rel_error: worst, checked })
}
