//! Where (one input): the coordinates of the true / non-zero elements, `[num_true, rank]`
//! int64 in row-major order.

use ferroflow_core::{DataType, Status, Tensor};

use super::util::{collect_vec, copy_vec, FnKernel};
use crate::{KernelRegistry, OpContext};

fn nonzero(t: &Tensor) -> Result<Vec<bool>, Status> {
    Ok(match t.dtype() {
        DataType::Bool => copy_vec(t)?,
        DataType::Float => collect_vec(t.dims(), t.as_slice::<f32>()?.iter().map(|&x| x != 0.0))?,
        DataType::Double => collect_vec(t.dims(), t.as_slice::<f64>()?.iter().map(|&x| x != 0.0))?,
        DataType::Int32 => collect_vec(t.dims(), t.as_slice::<i32>()?.iter().map(|&x| x != 0))?,
        DataType::Int64 => collect_vec(t.dims(), t.as_slice::<i64>()?.iter().map(|&x| x != 0))?,
        DataType::UInt8 => collect_vec(t.dims(), t.as_slice::<u8>()?.iter().map(|&x| x != 0))?,
        d => return Err(Status::invalid_argument(format!("Where does not support {d} inputs"))),
    })
}

fn where_op(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let mask = nonzero(&x).map_err(|e| ctx.error(e.message))?;
    let dims = x.dims();
    let r = dims.len();
    let count = mask.iter().filter(|&&b| b).count();
    let mut out = ferroflow_core::alloc::with_capacity::<i64>(&[count, r])?;
    let mut idx = vec![0i64; r];
    for &m in &mask {
        if m {
            out.extend_from_slice(&idx);
        }
        for k in (0..r).rev() {
            idx[k] += 1;
            if (idx[k] as usize) < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    ctx.set_output(0, Tensor::new(vec![count, r], out)?)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Where", |_| Ok(FnKernel::expensive(where_op)));
}
