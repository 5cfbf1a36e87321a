//! Pad and PadV2 (constant padding).

use ferroflow_core::{Shape, Status, Tensor, TensorType};

use super::strided::{strided_scatter, strides_of};
use super::util::{check_alloc, index_vec, FnKernel};
use crate::{KernelRegistry, OpContext};

fn pad_typed<T: TensorType>(
    x: &Tensor,
    before: &[usize],
    out_dims: &[usize],
    c: Option<&Tensor>,
) -> Result<Tensor, Status> {
    let n = Shape::new(out_dims.to_vec()).checked_num_elements()?;
    let fill = match c {
        Some(c) => c.as_slice::<T>()?[0].clone(),
        None => Tensor::zeros(T::DTYPE, vec![1])?.as_slice::<T>()?[0].clone(),
    };
    let mut out = vec![fill; n];
    let st = strides_of(out_dims);
    let offset: isize = before.iter().zip(&st).map(|(&b, &s)| b as isize * s).sum();
    strided_scatter(&mut out, offset, x.dims(), &st, x.as_slice::<T>()?);
    Tensor::new(out_dims.to_vec(), out)
}

fn pad(ctx: &mut OpContext) -> Result<(), Status> {
    let x = ctx.input(0)?;
    let p = ctx.input(1)?;
    let c = if ctx.num_inputs() > 2 {
        let c = ctx.input(2)?;
        if c.rank() != 0 {
            return Err(ctx.error(format!("constant_values must be a scalar. Found: {}", c.shape())));
        }
        Some(c)
    } else {
        None
    };
    if p.rank() != 2 || p.dims()[1] != 2 {
        return Err(ctx.error(format!("paddings must be a matrix with 2 columns: {}", p.shape())));
    }
    if p.dims()[0] != x.rank() {
        return Err(ctx.error(format!(
            "The first dimension of paddings must be the rank of inputs{} {}",
            p.shape(),
            x.shape()
        )));
    }
    let pv = index_vec(&p).map_err(|e| ctx.error(e.message))?;
    let mut before = Vec::with_capacity(x.rank());
    let mut out_dims = Vec::with_capacity(x.rank());
    for (i, &d) in x.dims().iter().enumerate() {
        let (b, a) = (pv[2 * i], pv[2 * i + 1]);
        if b < 0 || a < 0 {
            return Err(ctx.error(format!("Paddings must be non-negative: {b} {a}")));
        }
        before.push(b as usize);
        let n = (d as i64).checked_add(b).and_then(|n| n.checked_add(a));
        out_dims.push(n.ok_or_else(|| ctx.error(format!("Paddings {b} {a} overflow dimension {i}")))?);
    }
    let shape = Shape::from_i64(&out_dims).map_err(|e| ctx.error(e.message))?;
    check_alloc(shape.dims(), x.dtype()).map_err(|e| e.context(format!("node '{}'", ctx.node().name)))?;
    if shape == *x.shape() {
        return ctx.set_output(0, x);
    }
    let out = ferroflow_core::with_dtype!(x.dtype(), T => pad_typed::<T>(&x, &before, shape.dims(), c.as_ref()))?;
    ctx.set_output(0, out)
}

pub(crate) fn register(r: &mut KernelRegistry) {
    r.add("Pad", |_| Ok(FnKernel::expensive(pad)));
    r.add("PadV2", |_| Ok(FnKernel::expensive(pad)));
}

#[cfg(test)]
mod tests {
    use ferroflow_core::{attr, DataType};

    use super::*;
    use crate::testutil::{node, run_kernel};

    #[test]
    fn pads() {
        let n = node("Pad", &[("T", attr::ty(DataType::Int32)), ("Tpaddings", attr::ty(DataType::Int32))]);
        let x = Tensor::new(vec![2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let p = Tensor::new(vec![2, 2], vec![1i32, 0, 0, 2]).unwrap();
        let o = run_kernel(n.clone(), vec![x.clone(), p.clone()], 1).unwrap();
        assert_eq!(o[0].dims(), &[3, 4]);
        assert_eq!(o[0].as_slice::<i32>().unwrap(), &[0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0]);
        let v2 = node("PadV2", &[("T", attr::ty(DataType::Int32)), ("Tpaddings", attr::ty(DataType::Int32))]);
        let o = run_kernel(v2.clone(), vec![x.clone(), p.clone(), Tensor::scalar(9i32)], 1).unwrap();
        assert_eq!(&o[0].as_slice::<i32>().unwrap()[..6], &[9, 9, 9, 9, 1, 2]);
        let e = run_kernel(v2, vec![x.clone(), p, Tensor::vec(vec![9i32])], 1).unwrap_err();
        assert!(e.message.contains("constant_values must be a scalar. Found: [1]"));
        let bad = Tensor::new(vec![1, 2], vec![1i32, 1]).unwrap();
        let e = run_kernel(n.clone(), vec![x.clone(), bad], 1).unwrap_err();
        assert!(e.message.contains("The first dimension of paddings must be the rank of inputs[1,2] [2,2]"));
        let neg = Tensor::new(vec![2, 2], vec![1i32, -1, 0, 0]).unwrap();
        assert!(run_kernel(n, vec![x, neg], 1).unwrap_err().message.contains("Paddings must be non-negative: 1 -1"));
    }
}
