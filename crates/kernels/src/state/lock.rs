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
