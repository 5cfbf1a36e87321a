//! Locking several variables at once (optimizers update a variable and its slots
//! together): locks are taken in address order so that two ops locking the same variables
//! can never deadlock.

use std::sync::{Arc, RwLockWriteGuard};

use ferroflow_core::{Status, Tensor};

use crate::{OpContext, Var};

/// A variable's value slot under its write lock.
pub type VarGuard<'a> = RwLockWriteGuard<'a, Option<Tensor>>;

/// Write-locks `vars` (in address order) and returns the guards in the order given. The
/// same variable twice is InvalidArgument (its lock is not reentrant).
pub fn lock_all<'a>(ctx: &OpContext, vars: &'a [Arc<Var>], names: &[&str]) -> Result<Vec<VarGuard<'a>>, Status> {
    let mut order: Vec<usize> = (0..vars.len()).collect();
    order.sort_by_key(|&i| Arc::as_ptr(&vars[i]) as usize);
    for w in order.windows(2) {
        if Arc::ptr_eq(&vars[w[0]], &vars[w[1]]) {
            let (a, b) = (w[0].min(w[1]), w[0].max(w[1]));
            let name = |i: usize| names.get(i).copied().unwrap_or("?");
            return Err(ctx.error(format!(
                "{} and {} are the same variable ({}); ferroflow needs distinct variables",
                name(a),
                name(b),
                vars[a].name
            )));
        }
    }
    let mut slots: Vec<Option<VarGuard<'a>>> = (0..vars.len()).map(|_| None).collect();
    for &i in &order {
        slots[i] = Some(vars[i].value.write().unwrap_or_else(|e| e.into_inner()));
    }
    Ok(slots.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ferroflow_core::DataType;

    use super::*;
    use crate::testutil::{node, test_step};
    use crate::ResourceMgr;

    #[test]
    fn locks_in_given_order_and_rejects_aliases() {
        let ctx = OpContext::new(Arc::new(node("X", &[])), vec![], 0, test_step(Arc::new(ResourceMgr::new())));
        let a = Arc::new(Var::new("a", DataType::Float));
        let b = Arc::new(Var::new("b", DataType::Float));
        let vars = vec![b.clone(), a.clone()];
        let mut g = lock_all(&ctx, &vars, &["var", "accum"]).unwrap();
        *g[0] = Some(Tensor::scalar(1.0f32));
        drop(g);
        assert!(b.is_initialized() && !a.is_initialized());
        let e = lock_all(&ctx, &[a.clone(), b, a], &["var", "m", "v"]).err().unwrap();
        assert!(e.message.contains("var and v are the same variable (a)"), "{e}");
    }
}
