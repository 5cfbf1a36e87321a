//! Whole-value updates of variables: assignment (Assign and AssignVariableOp) and in-place
//! `+=` / `-=` (AssignAdd, AssignSub and their resource forms).

use ferroflow_core::{DataType, Shape, Status, Tensor, TensorType};

use super::par;
use crate::{OpContext, Var};

/// Stores `value` in `var`; when `validate_shape`, an initialized `var` must already have
/// `value`'s shape (else InvalidArgument, `mismatch(old shape, new shape)`).
pub fn assign_value(
    ctx: &OpContext,
    var: &Var,
    value: Tensor,
    validate_shape: bool,
    mismatch: impl FnOnce(&Shape, &Shape) -> String,
) -> Result<(), Status> {
    let mut g = var.value.write().unwrap_or_else(|e| e.into_inner());
    if let Some(old) = g.as_ref().filter(|old| validate_shape && old.shape() != value.shape()) {
        return Err(ctx.error(mismatch(old.shape(), value.shape())));
    }
    *g = Some(value);
    Ok(())
}

/// Which update to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateKind {
    /// `var += value`
    Add,
    /// `var -= value`
    Sub,
}

fn apply<T: TensorType + Copy + Send + Sync>(
    t: &mut Tensor,
    v: &Tensor,
    add: impl Fn(T, T) -> T + Sync,
    sub: impl Fn(T, T) -> T + Sync,
    kind: UpdateKind,
) -> Result<(), Status> {
    let x = v.as_slice::<T>()?;
    let dst = t.data_mut::<T>()?;
    // Generic closures (not `fn` pointers) so each loop is inlined and vectorized.
    fn run<T: Copy + Send + Sync>(dst: &mut [T], x: &[T], op: impl Fn(T, T) -> T + Sync) {
        par::zip1(dst, x, |d, x| {
            for (d, &x) in d.iter_mut().zip(x) {
                *d = op(*d, x);
            }
        });
    }
    match kind {
        UpdateKind::Add => run(dst, x, add),
        UpdateKind::Sub => run(dst, x, sub),
    }
    Ok(())
}

/// `t (+|-)= v` element-wise; `t` and `v` have equal shapes and dtypes (checked by callers).
/// Copies `t`'s buffer first if a reader still holds it.
pub fn add_in_place(t: &mut Tensor, v: &Tensor, kind: UpdateKind) -> Result<(), Status> {
    match t.dtype() {
        DataType::Float => apply::<f32>(t, v, |a, b| a + b, |a, b| a - b, kind),
        DataType::Double => apply::<f64>(t, v, |a, b| a + b, |a, b| a - b, kind),
        DataType::Int32 => apply::<i32>(t, v, i32::wrapping_add, i32::wrapping_sub, kind),
        DataType::Int64 => apply::<i64>(t, v, i64::wrapping_add, i64::wrapping_sub, kind),
        DataType::UInt8 => apply::<u8>(t, v, u8::wrapping_add, u8::wrapping_sub, kind),
        d => Err(Status::unimplemented(format!("in-place add of {d} tensors is not supported"))),
    }
}
