//! In-place `+=` / `-=` of a whole tensor (AssignAdd, AssignSub and their resource forms).

use ferroflow_core::{DataType, Status, Tensor, TensorType};

use super::par;

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
