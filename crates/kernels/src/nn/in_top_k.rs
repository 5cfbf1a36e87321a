//! InTopKV2 (`tf.math.in_top_k`, `k` an input) and InTopK (`k` an attr): whether each
//! row's target class is among its `k` largest predictions. A target is in when fewer
//! than `k` classes predict strictly more; ties are all in. A target out of range, or a
//! row with a non-finite prediction, is never in.

use ferroflow_core::proto::NodeDef;
use ferroflow_core::{NodeAttrs, Status, Tensor};

use crate::array::util::{checked_index_scalar, index_vec};
use crate::{KernelRegistry, OpContext, OpKernel};

struct InTopK {
    /// InTopK's `k` attr; InTopKV2 reads input 2.
    k: Option<i64>,
}

fn make(n: &NodeDef) -> Result<Box<dyn OpKernel>, Status> {
    let k = if n.op == "InTopK" { Some(n.attr_int("k")?) } else { None };
    Ok(Box::new(InTopK { k }))
}

pub fn in_top_k(pred: &[f32], classes: usize, targets: &[i64], k: i64) -> Vec<bool> {
    targets
        .iter()
        .enumerate()
        .map(|(b, &t)| {
            let row = &pred[b * classes..(b + 1) * classes];
            if t < 0 || t as usize >= classes || row.iter().any(|v| !v.is_finite()) {
                return false;
            }
            let target = row[t as usize];
            let more = row.iter().filter(|&&v| v > target).count() as i64;
            more < k
        })
        .collect()
}

impl OpKernel for InTopK {
    fn compute(&self, ctx: &mut OpContext) -> Result<(), Status> {
        let pred = ctx.input(0)?;
        let targets = ctx.input(1)?;
        let k = match self.k {
            Some(k) => k,
            None => {
                let k_t = ctx.input(2)?;
                checked_index_scalar(ctx, &k_t, |t| format!("k must be 0 D, got shape {}", t.shape()))?
            }
        };
        if pred.rank() != 2 {
            return Err(ctx.error(format!("predictions must be 2-dimensional, got shape {}", pred.shape())));
        }
        if targets.rank() != 1 {
            return Err(ctx.error(format!("targets must be 1-dimensional, got shape {}", targets.shape())));
        }
        if pred.dims()[0] != targets.dims()[0] {
            return Err(ctx.error(format!(
                "First dimension of predictions {} must match length of targets {}",
                pred.dims()[0],
                targets.dims()[0]
            )));
        }
        let t = index_vec(&targets).map_err(|e| ctx.error(e.message))?;
        let out = in_top_k(pred.as_slice::<f32>()?, pred.dims()[1], &t, k);
        ctx.set_output(0, Tensor::vec(out))
    }
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("InTopKV2", make);
    r.add("InTopK", make);
}
