//! Where (one input): the coordinates of the true / non-zero elements, `[num_true, rank]`
//! int64 in row-major order.

use ferroflow_core::{DataType, Status, Tensor};

use super::util::FnKernel;
use crate::{KernelRegistry, OpContext};

fn nonzero(t: &Tensor) -> Result<Vec<bool>, Status> {
    Ok(match t.dtype() {
        DataType::Bool => t.as_slice::<bool>()?.to_vec(),
        DataType::Float => t.as_slice::<f32>()?.iter().map(|&x| x != 0.0).collect(),
        DataType::Double => t.as_slice::<f64>()?.iter().map(|&x| x != 0.0).collect(),
        DataType::Int32 => t.as_slice::<i32>()?.iter().map(|&x| x != 0).collect(),
        DataType::Int64 => t.as_slice::<i64>()?.iter().map(|&x| x != 0).collect(),
        DataType::UInt8 => t.as_slice::<u8>()?.iter().map(|&x| x != 0).collect(),
        d => return Err(Status::invalid_argument(format!("Where does not support {d} inputs"))),
    })
}

fn where_op(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let mask = nonzero(&x).map_err(|e| ctx.error(e.message))?;
    let dims = x.dims();
    let r = dims.len();
    let count = mask.iter().filter(|&&b| b).count();
    let mut out = Vec::with_capacity(count * r);
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

#[cfg(test)]
mod tests {
    use ferroflow_core::attr;

    use super::*;
    use crate::testutil::{node, run_kernel};

    #[test]
    fn coordinates() {
        let x = Tensor::new(vec![2, 2], vec![0.0f32, 1.0, 2.0, 0.0]).unwrap();
        let o = run_kernel(node("Where", &[("T", attr::ty(DataType::Float))]), vec![x], 1).unwrap();
        assert_eq!(o[0].dims(), &[2, 2]);
        assert_eq!(o[0].as_slice::<i64>().unwrap(), &[0, 1, 1, 0]);
        let s = run_kernel(node("Where", &[("T", attr::ty(DataType::Bool))]), vec![Tensor::scalar(true)], 1).unwrap();
        assert_eq!(s[0].dims(), &[1, 0]);
    }
}
